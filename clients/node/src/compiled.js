'use strict';
// The Node.js host: load a library built by `opgen compile` in-process (koffi FFI) and call it
// with ordinary JS values. It reads the manifest the compiler wrote beside the library and
// follows the entry point's C ABI (opgen/compiler/entry_abi.py):
//
//   int -> BigInt (a Number that is a safe integer is accepted as an argument)
//   float -> Number       bool -> Boolean       str -> String (UTF-8 across the boundary)
//   list[T] -> Array      dict[str, T] -> plain Object or Map (a result: a Map, in insertion order)
//   tuple[...] (results only) -> Array
//   tensor[dtype] -> Tensor {dtype, shape, data: TypedArray}  (Float32Array for float32, ...)
//
// Errors the kernels report are thrown as OpgenError whose `name` is the Python exception
// (ValueError, OverflowError, ZeroDivisionError, IndexError, KeyError, TypeError, RuntimeError, and a
// compiled raise statement's or assert's AssertionError and NotImplementedError).
//
// A list of N strings crosses in a constant number of koffi calls, not N: its UTF-8 is written into
// one buffer and the (pointer, length) items into one BigInt64Array, and a list[str] result (one
// block) is read through one view.

const fs = require('node:fs');
const path = require('node:path');
const koffi = require('koffi');

const Device = koffi.struct('opgen_device', { device_type: 'int32_t', device_id: 'int32_t' });
const DType = koffi.struct('opgen_dtype', { code: 'uint8_t', bits: 'uint8_t', lanes: 'uint16_t' });
const TensorView = koffi.struct('opgen_tensor', {
  data: 'void *', device: Device, ndim: 'int32_t', dtype: DType,
  shape: 'int64_t *', strides: 'int64_t *', byte_offset: 'uint64_t',
});
const OString = koffi.struct('opgen_string', { data: 'void *', len: 'int64_t' });
const OList = koffi.struct('opgen_list', { data: 'void *', len: 'int64_t' });
const ErrorInfo = koffi.struct('opgen_error', { kind: 'int32_t', message: koffi.array('char', 256, 'String') });

// dtype name -> DLPack code and bits, and the TypedArray that holds it (opgen/spec/dtypes.py).
const DTYPES = {
  float32: { code: 2, bits: 32, array: Float32Array },
  float64: { code: 2, bits: 64, array: Float64Array },
  int8: { code: 0, bits: 8, array: Int8Array },
  int16: { code: 0, bits: 16, array: Int16Array },
  int32: { code: 0, bits: 32, array: Int32Array },
  int64: { code: 0, bits: 64, array: BigInt64Array },
  uint8: { code: 1, bits: 8, array: Uint8Array },
  uint16: { code: 1, bits: 16, array: Uint16Array },
  uint32: { code: 1, bits: 32, array: Uint32Array },
  uint64: { code: 1, bits: 64, array: BigUint64Array },
  bool: { code: 6, bits: 8, array: Uint8Array },
};
const SCALAR_C = { int: 'int64_t', float: 'double', bool: 'uint8_t' };
const ERROR_NAMES = { 1: 'OverflowError', 2: 'ZeroDivisionError', 3: 'ValueError', 4: 'RuntimeError', 5: 'IndexError', 6: 'KeyError', 7: 'TypeError', 8: 'AssertionError', 9: 'NotImplementedError' };
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

class OpgenError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = kind;
    this.kind = kind;
  }
}

class Tensor {
  constructor(dtype, shape, data) {
    const info = DTYPES[dtype];
    if (!info) throw new TypeError(`unknown dtype ${dtype}`);
    if (!(data instanceof info.array)) throw new TypeError(`a ${dtype} tensor holds a ${info.array.name}`);
    const count = shape.reduce((a, b) => a * b, 1);
    if (data.length !== count) throw new RangeError(`shape [${shape}] holds ${count} elements, data has ${data.length}`);
    this.dtype = dtype;
    this.shape = shape.map(Number);
    this.data = data;
  }
}

// "list[int]" -> {kind: 'list', elem: {kind: 'scalar', name: 'int'}}, "tensor[float32]", "dict[str, float]".
function parseType(text) {
  const t = text.trim();
  let m = /^tuple\[(.+)\]$/.exec(t);
  if (m) return { kind: 'tuple', items: topLevelParts(m[1]).map(parseType) };
  m = /^dict\[str,\s*(.+)\]$/.exec(t);
  if (m) return { kind: 'dict', value: parseType(m[1]) };
  m = /^list\[(.+)\]$/.exec(t);
  if (m) return { kind: 'list', elem: parseType(m[1]) };
  m = /^tensor\[(.+)\]$/.exec(t);
  if (m) return { kind: 'tensor', dtype: m[1] };
  if (['int', 'float', 'bool', 'str'].includes(t)) return { kind: 'scalar', name: t };
  throw new TypeError(`unknown type ${text}`);
}

function topLevelParts(text) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '[') depth += 1;
    else if (text[i] === ']') depth -= 1;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

// The out-parameters a result is written to (entry_abi.result_slots): a dict is its keys' list and
// its values' list, a tuple its items' slots, in order.
function resultSlots(t) {
  if (t.kind === 'tuple') return t.items.flatMap(resultSlots);
  if (t.kind === 'dict') return [{ kind: 'list', elem: { kind: 'scalar', name: 'str' } }, { kind: 'list', elem: t.value }];
  return [t];
}

// A result read slot by slot: a dict as a Map (insertion order and any key kept exactly), a tuple as an Array.
function assemble(t, values) {
  if (t.kind === 'tuple') return t.items.map((item) => assemble(item, values));
  if (t.kind === 'dict') {
    const keys = values.next().value;
    const vals = values.next().value;
    return new Map(keys.map((k, i) => [k, vals[i]]));
  }
  return values.next().value;
}

function manifestPath(p) {
  const stat = fs.statSync(p);
  if (stat.isDirectory()) {
    const found = fs.readdirSync(p).filter((f) => f.endsWith('.manifest.json'));
    if (found.length !== 1) throw new Error(`${p} holds ${found.length} compiled manifests; name the manifest file itself`);
    return path.join(p, found[0]);
  }
  if (p.endsWith('.so')) return path.join(path.dirname(p), path.basename(p, '.so').replace(/^lib/, '') + '.manifest.json');
  return p;
}

// The koffi parameter types of one parameter (entry_abi.c_params, in order).
function cParams(t) {
  if (t.kind === 'dict') return ['const void *', elemPointer(t.value), 'int64_t'];
  if (t.kind === 'tensor') return [koffi.pointer(TensorView)];
  if (t.kind === 'list') return [elemPointer(t.elem), 'int64_t'];
  if (t.name === 'str') return ['const void *', 'int64_t'];
  return [SCALAR_C[t.name]];
}

function elemPointer(t) {
  return t.name === 'str' ? 'const void *' : `const ${SCALAR_C[t.name]} *`;
}

function outParam(t) {
  if (t.kind === 'tensor') return koffi.out(koffi.pointer(TensorView));
  if (t.kind === 'list') return koffi.out(koffi.pointer(OList));
  if (t.name === 'str') return koffi.out(koffi.pointer(OString));
  return koffi.out(koffi.pointer(SCALAR_C[t.name]));
}

function loadCompiled(p) {
  const file = manifestPath(p);
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  const lib = koffi.load(path.join(path.dirname(file), manifest.library));
  const params = manifest.params.map((q) => ({ ...q, t: parseType(q.type) }));
  const returns = parseType(manifest.returns.type);
  const slots = resultSlots(returns);
  // An optional parameter (Optional[T] in Python) takes a presence flag first (entry_abi.py).
  const argTypes = params.flatMap((q) => (q.optional ? ['uint8_t'] : []).concat(cParams(q.t))).concat(slots.map(outParam), [koffi.out(koffi.pointer(ErrorInfo))]);
  const fn = lib.func(manifest.symbol, 'int32_t', argTypes);
  const free = lib.func('void opgen_free(void *p)');

  const call = (...args) => {
    if (args.length > params.length) throw new TypeError(`${manifest.function} takes ${params.length} arguments, got ${args.length}`);
    const cargs = [];
    const keep = [];  // memory the arguments point into, alive until the call returns
    params.forEach((q, i) => {
      let value = args[i];
      if (value === undefined) {
        if (!('default' in q)) throw new TypeError(`${manifest.function}: missing argument ${q.name}`);
        value = q.default;
      }
      if (q.optional) {
        // null (or undefined with a None default): flag 0 and zeros the entry never reads
        if (value === null || value === undefined) {
          cargs.push(0, ...cParams(q.t).map((c) => (c === 'int64_t' || SCALAR_C[q.t.name] === c ? 0 : null)));
          return;
        }
        cargs.push(1);
      }
      cargs.push(...marshal(q.name, q.t, value, keep));
    });
    const outs = slots.map((t) => (t.kind === 'scalar' && t.name !== 'str' ? [t.name === 'int' ? 0n : 0] : {}));
    const err = {};
    const status = fn(...cargs, ...outs, err);
    if (status !== 0) throw new OpgenError(ERROR_NAMES[status] || 'RuntimeError', err.message || (status >= 6 ? '' : `status ${status}`));
    if (slots.length === 1) return unmarshal(returns, outs[0], free);
    return assemble(returns, slots.map((t, i) => unmarshal(t, outs[i], free))[Symbol.iterator]());
  };
  // Named arguments, as Python callers write them: f.named({text: [...], task: 'query'}).
  call.named = (values) => call(...params.map((q) => values[q.name]));
  call.manifest = manifest;
  call.params = params.map((q) => ({ name: q.name, type: q.type, ...(q.optional ? { optional: true } : {}) }));
  call.returns = manifest.returns.type;
  Object.defineProperty(call, 'name', { value: manifest.function });
  return call;
}

// ------------------------------------------------------------------ arguments

function toInt64(name, v) {
  let b;
  if (typeof v === 'bigint') b = v;
  else if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
  else if (typeof v === 'boolean') b = v ? 1n : 0n;
  else throw new TypeError(`${name} must be an integer (a BigInt, or a Number that is a safe integer), got ${v}`);
  if (b < INT64_MIN || b > INT64_MAX) throw new RangeError(`${name}=${b} does not fit in int64`);
  return b;
}

function scalar(name, t, v) {
  if (t.name === 'int') return toInt64(name, v);
  if (t.name === 'float') {
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') return Number(v);
    throw new TypeError(`${name} must be a number, got ${typeof v}`);
  }
  if (typeof v !== 'boolean') throw new TypeError(`${name} must be a boolean, got ${typeof v}`);
  return v ? 1 : 0;
}

// opgen_string items built in JS: every string's UTF-8 in one buffer, (pointer, length) pairs into
// it in one BigInt64Array. Buffer.write replaces a lone surrogate as Buffer.from does.
function strings(name, values, keep) {
  let total = 0;
  for (const s of values) {
    if (typeof s !== 'string') throw new TypeError(`${name} must hold strings, got ${typeof s}`);
    total += Buffer.byteLength(s, 'utf8');
  }
  const bytes = Buffer.allocUnsafe(Math.max(total, 1));  // an ArrayBuffer's memory (pooled when small): V8 never moves it
  const items = new BigInt64Array(2 * Math.max(values.length, 1));
  const base = koffi.address(bytes);
  let offset = 0;
  for (let i = 0; i < values.length; i += 1) {
    const n = bytes.write(values[i], offset, 'utf8');
    items[2 * i] = base + BigInt(offset);
    items[2 * i + 1] = BigInt(n);
    offset += n;
  }
  keep.push(bytes);
  return items;
}

function items(name, elem, values, keep) {
  if (elem.name === 'str') return strings(name, values, keep);
  if (elem.name === 'int') return BigInt64Array.from(values, (v) => toInt64(name, v));
  if (elem.name === 'float') return Float64Array.from(values, (v) => scalar(name, elem, v));
  return Uint8Array.from(values, (v) => scalar(name, elem, v));
}

function marshal(name, t, value, keep) {
  if (t.kind === 'dict') {
    const entries = value instanceof Map ? [...value.entries()] : Object.entries(value ?? {});
    return [strings(`${name} keys`, entries.map((e) => e[0]), keep),
      items(`${name} values`, t.value, entries.map((e) => e[1]), keep), entries.length];
  }
  if (t.kind === 'tensor') return [tensorView(name, t.dtype, value)];
  if (t.kind === 'list') {
    if (!Array.isArray(value)) throw new TypeError(`${name} must be an Array, got ${typeof value}`);
    return [items(name, t.elem, value, keep), value.length];
  }
  if (t.name === 'str') {
    if (typeof value !== 'string') throw new TypeError(`${name} must be a string, got ${typeof value}`);
    const data = Buffer.from(value, 'utf8');
    return [data, data.length];
  }
  return [scalar(name, t, value)];
}

function tensorView(name, dtype, value) {
  const info = DTYPES[dtype];
  if (!value || !(value.data instanceof info.array)) {
    throw new TypeError(`${name} must be a ${dtype} tensor ({shape, data: ${info.array.name}})`);
  }
  if (value.dtype !== undefined && value.dtype !== dtype) throw new TypeError(`${name} must have dtype ${dtype}, got ${value.dtype}`);
  const shape = BigInt64Array.from(value.shape, (s) => BigInt(s));
  const count = value.shape.reduce((a, b) => a * Number(b), 1);
  if (!value.strides && value.data.length !== count) {
    throw new RangeError(`${name}: shape [${value.shape}] holds ${count} elements, data has ${value.data.length}`);
  }
  return {
    data: value.data, device: { device_type: 1, device_id: 0 }, ndim: shape.length,
    dtype: { code: info.code, bits: info.bits, lanes: 1 }, shape,
    strides: value.strides ? BigInt64Array.from(value.strides, (s) => BigInt(s)) : null, byte_offset: 0,
  };
}

// ------------------------------------------------------------------ results

function bytesAt(ptr, len) {
  return len ? Buffer.from(koffi.view(ptr, len)) : Buffer.alloc(0);
}

function unmarshal(t, out, free) {
  if (t.kind === 'tensor') return tensorResult(out, free);
  if (t.kind === 'list') {
    const n = Number(out.len);
    try {
      if (n === 0) return [];
      if (t.elem.name === 'str') return stringsResult(out.data, n);
      if (t.elem.name === 'int') return Array.from(koffi.decode(out.data, 'int64_t', n), (v) => BigInt(v));
      if (t.elem.name === 'float') return Array.from(koffi.decode(out.data, 'double', n));
      return Array.from(koffi.decode(out.data, 'uint8_t', n), (v) => v !== 0);
    } finally {
      free(out.data);
    }
  }
  if (t.name === 'str') {
    try {
      return bytesAt(out.data, Number(out.len)).toString('utf8');
    } finally {
      free(out.data);
    }
  }
  if (t.name === 'int') return BigInt(out[0]);
  if (t.name === 'bool') return out[0] !== 0;
  return out[0];
}

// A list[str] result is one block (entry_abi): the items, then the bytes they point to. One view of
// the items and one of the whole block; each string decoded from it.
function stringsResult(ptr, n) {
  const base = koffi.address(ptr);
  const head = new BigInt64Array(koffi.view(ptr, 16 * n));
  let end = 16 * n;
  for (let i = 0; i < n; i += 1) end = Math.max(end, Number(head[2 * i] - base + head[2 * i + 1]));
  const block = Buffer.from(koffi.view(ptr, end));
  const out = new Array(n);
  for (let i = 0; i < n; i += 1) {
    const start = Number(head[2 * i] - base);
    out[i] = block.toString('utf8', start, start + Number(head[2 * i + 1]));
  }
  return out;
}

function tensorResult(out, free) {
  try {
    const dtype = Object.keys(DTYPES).find((k) => DTYPES[k].code === out.dtype.code && DTYPES[k].bits === out.dtype.bits);
    const shape = out.ndim ? Array.from(koffi.decode(out.shape, 'int64_t', out.ndim), Number) : [];
    const count = shape.reduce((a, b) => a * b, 1);
    const Ctor = DTYPES[dtype].array;
    const bytes = count * Ctor.BYTES_PER_ELEMENT;
    // A copy into memory V8 allocates. A TypedArray over the library's buffer (koffi.view, freed by a
    // FinalizationRegistry) was not faster in benchmarks/compiled_calls.py's whole calls on the shared
    // machine, and its memory would be released only when V8 collects the small JS object, on a
    // schedule that does not count the library's memory. Tensor arguments do cross without a copy
    // (koffi passes a TypedArray's own memory as the view's data pointer).
    const data = bytes ? new Ctor(koffi.view(out.data, bytes).slice(0)) : new Ctor(0);
    return new Tensor(dtype, shape, data);
  } finally {
    free(out.data);
    free(out.shape);
  }
}

module.exports = { manifestPath, loadCompiled, Tensor, OpgenError, parseType, DTYPES };
