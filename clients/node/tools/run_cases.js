'use strict';
// Runs cases through compiled libraries for the Python differential tests
// (tests/compile_support.py): node run_cases.js CASES.json RESULTS.json
//
// CASES.json: {"cases": [{"library": DIR, "args": [ENCODED, ...]}, ...]} where an encoded value
// is JSON, or {"$int": "123"} (BigInt), {"$float": "nan"}, {"$dict": [[k, v], ...]} (a Map, both ways),
// {"$tensor": {dtype, shape, b64}}. RESULTS.json: [{"value": ENCODED} | {"error": {name, message}}].
const fs = require('node:fs');
const { loadCompiled, Tensor } = require('..');
const { DTYPES } = require('../src/compiled');  // each dtype's TypedArray, as the client holds it

function decode(v) {
  if (Array.isArray(v)) return v.map(decode);
  if (v && typeof v === 'object') {
    if ('$int' in v) return BigInt(v.$int);
    if ('$float' in v) return Number(v.$float === 'nan' ? NaN : v.$float === 'inf' ? Infinity : v.$float === '-inf' ? -Infinity : v.$float);
    if ('$dict' in v) return new Map(v.$dict.map(([k, x]) => [k, decode(x)]));
    if ('$tensor' in v) {
      const t = v.$tensor;
      const bytes = Buffer.from(t.b64, 'base64');
      const Ctor = DTYPES[t.dtype].array;
      const data = new Ctor(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
      return new Tensor(t.dtype, t.shape, data);
    }
  }
  return v;
}

function encode(v) {
  if (typeof v === 'bigint') return { $int: v.toString() };
  if (typeof v === 'number') return { $float: Object.is(v, -0) ? '-0.0' : String(v) };
  if (Array.isArray(v)) return v.map(encode);
  if (v instanceof Map) return { $dict: [...v.entries()].map(([k, x]) => [k, encode(x)]) };
  if (v instanceof Tensor) {
    const bytes = Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength);
    return { $tensor: { dtype: v.dtype, shape: v.shape, b64: bytes.toString('base64') } };
  }
  return v;
}

const [casesFile, resultsFile] = process.argv.slice(2);
const { cases } = JSON.parse(fs.readFileSync(casesFile, 'utf8'));
const loaded = new Map();
const results = cases.map(({ library, args }) => {
  if (!loaded.has(library)) loaded.set(library, loadCompiled(library));
  try {
    return { value: encode(loaded.get(library)(...args.map(decode))) };
  } catch (e) {
    return { error: { name: e.name, message: e.message } };
  }
});
fs.writeFileSync(resultsFile, JSON.stringify(results));
