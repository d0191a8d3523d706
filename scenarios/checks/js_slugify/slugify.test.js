const test = require('node:test');
const assert = require('node:assert/strict');
const { slugify } = require('./slugify.js');

test('lowercases and joins words', () => {
  assert.equal(slugify('Hello World'), 'hello-world');
});

test('collapses punctuation and spaces', () => {
  assert.equal(slugify('  Node.js -- the  Good Parts!  '), 'node-js-the-good-parts');
});

test('drops accents', () => {
  assert.equal(slugify('Crème Brûlée à la carte'), 'creme-brulee-a-la-carte');
});

test('keeps digits', () => {
  assert.equal(slugify('Top 10 tips for 2025'), 'top-10-tips-for-2025');
});

test('empty for no letters', () => {
  assert.equal(slugify('!!!'), '');
});
