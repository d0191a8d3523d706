// Hidden tests of CharCounter.jsx: jest with the jsdom environment, JSX compiled by babel-jest (preset-env,
// preset-react). Typing is the browser's: the value set through the native setter, then an input event (React's
// onChange listens to it).
import React from 'react';
import { createRoot } from 'react-dom/client';
import { act } from 'react-dom/test-utils';
import { CharCounter } from './CharCounter.jsx';

global.IS_REACT_ACT_ENVIRONMENT = true;

function mount(element) {
  document.body.innerHTML = '<div id="app"></div>';
  const root = createRoot(document.getElementById('app'));
  act(() => root.render(element));
  return root;
}

const area = () => document.querySelector('textarea');
const counter = () => document.querySelector('p.counter');
const button = () => [...document.querySelectorAll('button')].find(b => b.textContent.trim() === 'Post');

function type(text) {
  const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  act(() => {
    setter.call(area(), text);
    area().dispatchEvent(new Event('input', { bubbles: true }));
  });
}

test('at first: the whole limit left, an empty textarea and a disabled Post button', () => {
  mount(<CharCounter limit={10} onPost={() => {}} />);
  expect(area().value).toBe('');
  expect(counter().textContent).toBe('10 characters left');
  expect(counter().classList.contains('over')).toBe(false);
  expect(button()).toBeDefined();
  expect(button().disabled).toBe(true);
});

test('the counter follows the typing, singular for one', () => {
  mount(<CharCounter limit={10} onPost={() => {}} />);
  type('hello');
  expect(area().value).toBe('hello');
  expect(counter().textContent).toBe('5 characters left');
  expect(button().disabled).toBe(false);
  type('hello wor');
  expect(counter().textContent).toBe('1 character left');
  type('hello worl');
  expect(counter().textContent).toBe('0 characters left');
  expect(button().disabled).toBe(false);
});

test('over the limit: the count over, the class "over" and a disabled button', () => {
  mount(<CharCounter limit={10} onPost={() => {}} />);
  type('hello world');
  expect(counter().textContent).toBe('1 character over limit');
  type('hello world!!');
  expect(counter().textContent).toBe('3 characters over limit');
  expect(counter().className.split(/\s+/).sort()).toEqual(['counter', 'over']);
  expect(button().disabled).toBe(true);
  type('hello');
  expect(counter().classList.contains('over')).toBe(false);
});

test('only spaces cannot be posted', () => {
  mount(<CharCounter limit={10} onPost={() => {}} />);
  type('   ');
  expect(counter().textContent).toBe('7 characters left');
  expect(button().disabled).toBe(true);
});

test('Post sends the text and empties the textarea', () => {
  const posted = [];
  mount(<CharCounter limit={20} onPost={text => posted.push(text)} />);
  type('Hello, world');
  act(() => button().click());
  expect(posted).toEqual(['Hello, world']);
  expect(area().value).toBe('');
  expect(counter().textContent).toBe('20 characters left');
  expect(button().disabled).toBe(true);
});
