// Hidden tests of Accordion.jsx: jest with the jsdom environment, JSX compiled by babel-jest (preset-env, preset-react).
import React from 'react';
import { createRoot } from 'react-dom/client';
import { act } from 'react-dom/test-utils';
import { Accordion } from './Accordion.jsx';

global.IS_REACT_ACT_ENVIRONMENT = true;

const ITEMS = [
  { title: 'Shipping', body: 'Ships in 2 days' },
  { title: 'Returns', body: 'Free returns for 30 days' },
  { title: 'Warranty', body: 'Two years' },
];

function mount(element) {
  document.body.innerHTML = '<div id="app"></div>';
  const root = createRoot(document.getElementById('app'));
  act(() => root.render(element));
  return root;
}

const headers = () => [...document.querySelectorAll('.accordion .item button.header')];
const bodies = () => [...document.querySelectorAll('.accordion .item .body')].map(b => b.textContent);
const expanded = () => headers().map(h => h.getAttribute('aria-expanded'));
const click = i => act(() => headers()[i].click());

test('one header per item, in order, every item closed at first', () => {
  mount(<Accordion items={ITEMS} />);
  expect(document.querySelectorAll('.accordion .item')).toHaveLength(3);
  expect(headers().map(h => h.textContent)).toEqual(['Shipping', 'Returns', 'Warranty']);
  expect(bodies()).toEqual([]);
  expect(expanded()).toEqual(['false', 'false', 'false']);
});

test('a click opens its item, a second click closes it', () => {
  mount(<Accordion items={ITEMS} />);
  click(1);
  expect(bodies()).toEqual(['Free returns for 30 days']);
  expect(expanded()).toEqual(['false', 'true', 'false']);
  expect(headers()[1].parentElement.querySelector('.body').textContent).toBe('Free returns for 30 days');
  click(1);
  expect(bodies()).toEqual([]);
  expect(expanded()).toEqual(['false', 'false', 'false']);
});

test('without allowMultiple, opening an item closes the open one', () => {
  mount(<Accordion items={ITEMS} />);
  click(0);
  click(2);
  expect(bodies()).toEqual(['Two years']);
  expect(expanded()).toEqual(['false', 'false', 'true']);
});

test('with allowMultiple, several items stay open', () => {
  mount(<Accordion items={ITEMS} allowMultiple />);
  click(0);
  click(2);
  expect(bodies()).toEqual(['Ships in 2 days', 'Two years']);
  expect(expanded()).toEqual(['true', 'false', 'true']);
  click(0);
  expect(bodies()).toEqual(['Two years']);
});

test('no items: an empty accordion', () => {
  mount(<Accordion items={[]} />);
  expect(document.querySelector('.accordion')).not.toBeNull();
  expect(headers()).toHaveLength(0);
});
