'use strict';
// The Node.js side of benchmarks/compiled_calls.py: the same cases, through loadCompiled (koffi).
//   node tools/bench_calls.js DIR CALLS ROUNDS   -> JSON {case name: median seconds per call}
// DIR holds the benchmark's compiled functions (noop, prefix, prefix_all, softmax_rows), one directory each.

const path = require('node:path');
const { loadCompiled, Tensor } = require('../src/compiled');

const [dir, callsText, roundsText] = process.argv.slice(2);
const calls = Number(callsText);
const rounds = Number(roundsText);
const f = Object.fromEntries(['noop', 'prefix', 'prefix_all', 'softmax_rows'].map((n) => [n, loadCompiled(path.join(dir, n))]));

const strings = (n) => Array.from({ length: n }, (_, i) => `what is the capital of country number ${i}?`);
const randn = (shape) => new Tensor('float32', shape, Float32Array.from({ length: shape[0] * shape[1] }, () => Math.random() * 2 - 1));

function perCall(fn, n) {
  fn();  // warm
  const times = [];
  for (let r = 0; r < rounds; r += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i += 1) fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e9 / n);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const lists = { 1: strings(1), 100: strings(100), 100000: strings(100000) };
const small = randn([4, 64]);
const large = randn([512, 64]);
const out = {
  'noop(int) overhead': perCall(() => f.noop(1n), calls),
  'str prefix': perCall(() => f.prefix('capital of France?'), calls),
  'softmax (4, 64)': perCall(() => f.softmax_rows(small), calls),
  'softmax (512, 64)': perCall(() => f.softmax_rows(large), Math.max(Math.floor(calls / 10), 3)),
};
for (const n of [1, 100, 100000]) out[`prefix ${n} strs`] = perCall(() => f.prefix_all(lists[n]), Math.max(Math.floor(calls / n), 3));
process.stdout.write(JSON.stringify(out));
