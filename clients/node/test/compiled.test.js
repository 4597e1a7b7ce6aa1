'use strict';
// The Node host over real compiled libraries (examples/compile/): values in and out, errors
// named as Python names them, argument checking. The differential tests against Python live in
// tests/test_compile_differential.py.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { loadCompiled, Tensor, OpgenError } = require('..');
const { compiledExamples } = require('../tools/compiled_examples');

const dir = compiledExamples([
  ['prompts.py', 'prefix_queries'], ['numeric.py', 'affine_counts'], ['numeric.py', 'pick_scaled'],
  ['numeric.py', 'weighted_lookup'], ['numeric.py', 'sum_exp_over_axes'], ['attention.py', 'attend'],
]);
const load = (name) => loadCompiled(path.join(dir, name));

test('strings and lists: the prompt-prefixing comprehension, with its default task', () => {
  const prefixQueries = load('prefix_queries');
  assert.deepEqual(prefixQueries(['capital of France?', 'Zürich ☃'], 'document'),
    ['title: none | text: capital of France?', 'title: none | text: Zürich ☃']);
  assert.deepEqual(prefixQueries(['x']), ['task: search result | query: x']);
  assert.deepEqual(prefixQueries.named({ text: [], task: 'query' }), []);
  assert.equal(prefixQueries.name, 'prefix_queries');
  assert.deepEqual(prefixQueries.params, [{ name: 'text', type: 'list[str]' }, { name: 'task', type: 'str' }]);
});

test('a missing dict key is a KeyError naming the key', () => {
  assert.throws(() => load('prefix_queries')(['x'], 'poetry'), (e) => e instanceof OpgenError && e.name === 'KeyError' && e.message === 'poetry');
});

test('ints are exact int64 BigInts, and overflow is an OverflowError', () => {
  const affine = load('affine_counts');
  assert.deepEqual(affine([1, 2n, -3], 4, 2n ** 40n), [2n ** 40n + 4n, 2n ** 40n + 8n, 2n ** 40n - 12n]);
  assert.throws(() => affine([2n ** 62n], 2, 0), { name: 'OverflowError' });
  assert.throws(() => affine([1.5], 2, 0), TypeError);
  assert.throws(() => affine([2n ** 63n], 1, 0), RangeError);
});

test('floats, bools, negative indices and IndexError', () => {
  const pick = load('pick_scaled');
  assert.equal(pick([1, 2.5], [4], -1, true, 2), 10);
  assert.equal(pick([1, 2.5], [4], 0, false, 0.5), 1);
  assert.throws(() => pick([1], [4], 3, false, 1), { name: 'IndexError', message: 'list index out of range' });
  assert.throws(() => pick([1], [4], 0, 'yes', 1), TypeError);
});

test('a dict parameter takes an Object or a Map', () => {
  const lookup = load('weighted_lookup');
  assert.deepEqual(lookup({ a: 2, b: 3 }, ['b', 'a'], 3), [27, 8]);
  assert.deepEqual(lookup(new Map([['a', 0.5]]), ['a'], -1), [2]);
  assert.throws(() => lookup({ a: 0 }, ['a'], -1), { name: 'ZeroDivisionError' });
  assert.throws(() => lookup({}, ['a'], 1), { name: 'KeyError' });
});

test('tensors in and out, with shape errors as ValueError', () => {
  const sumExp = load('sum_exp_over_axes');
  const x = new Tensor('float64', [2, 3], new Float64Array([0, 1, 2, 3, 4, 5]));
  const y = sumExp(x, [1]);
  assert.ok(y instanceof Tensor);
  assert.equal(y.dtype, 'float64');
  assert.deepEqual(y.shape, [2]);
  const want = [0, 3].map((i) => Math.exp(i) + Math.exp(i + 1) + Math.exp(i + 2));
  y.data.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-12 * want[i]));
  assert.throws(() => sumExp(x, [2]), { name: 'ValueError' });
  assert.throws(() => sumExp({ shape: [2, 3], data: new Float32Array(6) }, []), TypeError);
  assert.throws(() => sumExp({ shape: [2, 2], data: new Float64Array(6) }, []), RangeError);
});

test('softmax then matmul on float32, batched', () => {
  const attend = load('attend');
  const scores = new Tensor('float32', [2, 1, 2], new Float32Array([0, 0, 0, Math.log(3)]));
  const values = new Tensor('float32', [2, 1], new Float32Array([1, 5]));
  const out = attend(scores, values);
  assert.deepEqual(out.shape, [2, 1, 1]);
  assert.ok(Math.abs(out.data[0] - 3) < 1e-6);
  assert.ok(Math.abs(out.data[1] - 4) < 1e-6);
  // torch reports a matmul whose inner dims differ as RuntimeError
  assert.throws(() => attend(scores, new Tensor('float32', [3, 1], new Float32Array(3))), { name: 'RuntimeError' });
});
