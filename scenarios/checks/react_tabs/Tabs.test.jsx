// Hidden tests of Tabs.jsx: jest with the jsdom environment, JSX compiled by babel-jest (preset-env, preset-react).
import React from 'react';
import { createRoot } from 'react-dom/client';
import { act } from 'react-dom/test-utils';
import { Tabs } from './Tabs.jsx';

global.IS_REACT_ACT_ENVIRONMENT = true;

const TABS = [
  { title: 'Overview', content: 'What it is' },
  { title: 'Specs', content: 'Weight: 1.2 kg' },
  { title: 'Reviews', content: 'No reviews yet' },
];

function mount(tabs) {
  document.body.innerHTML = '<div id="app"></div>';
  const root = createRoot(document.getElementById('app'));
  act(() => root.render(<Tabs tabs={tabs} />));
  return root;
}

const buttons = () => [...document.querySelectorAll('button.tab')];
const panel = () => document.querySelector('.panel');

test('one button per tab, in order', () => {
  mount(TABS);
  expect(buttons().map(b => b.textContent)).toEqual(['Overview', 'Specs', 'Reviews']);
});

test('the first tab is selected at first', () => {
  mount(TABS);
  expect(panel().textContent).toBe('What it is');
  expect(buttons().map(b => b.classList.contains('active'))).toEqual([true, false, false]);
});

test('a click selects its tab', () => {
  mount(TABS);
  act(() => buttons()[2].click());
  expect(panel().textContent).toBe('No reviews yet');
  expect(buttons().map(b => b.classList.contains('active'))).toEqual([false, false, true]);
  act(() => buttons()[1].click());
  expect(panel().textContent).toBe('Weight: 1.2 kg');
});

test('no tabs: no buttons and an empty panel', () => {
  mount([]);
  expect(buttons()).toHaveLength(0);
  expect(panel().textContent).toBe('');
});
