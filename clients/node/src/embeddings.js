'use strict';
// OpenAI's embeddings call for Node.js, answered in-process by opgen's native pipelines.
//
//   const { Client } = require('opgen');
//   const client = new Client({ pipelines: '/path/from/opgen-pipeline-export' });
//   const r = await client.embeddings.create({ model: 'all-minilm-l6-v2', input: ['a', 'b'] });
//   r.data[0].embedding  // number[] (or a base64 string with encoding_format: 'base64')
//
// A pipelines directory holds what `opgen pipeline MODEL -o DIR` writes: DIR/<model>/lib.so
// (the pipeline glue and the verified registry kernels it calls) and pipeline.json (config,
// sizes, the registry entries linked). The response has the shape of the OpenAI API's
// (object, data[{object, index, embedding}], model, usage); errors are OpenAI-style
// (BadRequestError 400, NotFoundError 404, with param and code).

const fs = require('node:fs');
const path = require('node:path');
const koffi = require('koffi');
const { loadCompiled, manifestPath } = require('./compiled');

const OString = koffi.struct('opgen_embed_string', { data: 'void *', len: 'int64_t' });
const ErrorInfo = koffi.struct('opgen_embed_error', { kind: 'int32_t', message: koffi.array('char', 256, 'String') });

class APIError extends Error {
  constructor(status, message, param, code) {
    super(`Error code: ${status} - ${message}`);
    this.status = status;
    this.error = { message, type: 'invalid_request_error', param, code };
    this.param = param;
    this.code = code;
  }
}
class BadRequestError extends APIError {
  constructor(message, param, code = null) {
    super(400, message, param, code);
    this.name = 'BadRequestError';
  }
}
class NotFoundError extends APIError {
  constructor(message, param, code = null) {
    super(404, message, param, code);
    this.name = 'NotFoundError';
  }
}

// One loaded pipeline library with its model open.
class NativePipeline {
  constructor(dir, manifest) {
    this.manifest = manifest;
    this.lib = koffi.load(path.join(dir, manifest.library));
    this.open = this.lib.func('int32_t opgen_pipeline_open(const char *, const double *, int64_t, _Out_ void **, _Out_ opgen_embed_error *)');
    this.dimFn = this.lib.func('int64_t opgen_pipeline_dim(void *)');
    this.embedFn = this.lib.func('int32_t opgen_pipeline_embed(void *, opgen_embed_string *, int64_t, int64_t, void *, void *, _Out_ opgen_embed_error *)');
    this.closeFn = this.lib.func('void opgen_pipeline_close(void *)');
    const handle = [null];
    const err = {};
    const config = new Float64Array(manifest.config);
    if (this.open(manifest.model_dir, config, config.length, handle, err) !== 0) {
      throw new Error(`cannot open the model in ${manifest.model_dir}: ${err.message}`);
    }
    this.handle = handle[0];
    this.keep = [];
    if (manifest.tokenizer) this.setTokenizer(JSON.parse(fs.readFileSync(path.join(dir, manifest.tokenizer), 'utf8')));
    this.dim = Number(this.dimFn(this.handle));
  }

  setTokenizer(tables) {
    const fn = this.lib.func('int32_t opgen_pipeline_set_tokenizer(void *, opgen_embed_string *, int64_t, int64_t *, int64_t, int64_t *, int64_t, _Out_ opgen_embed_error *)');
    const { items, keep } = strings(tables.vocab);
    const merges = BigInt64Array.from(tables.merges, BigInt);
    const added = BigInt64Array.from(tables.added, BigInt);
    const err = {};
    if (fn(this.handle, items, tables.vocab.length, merges, merges.length, added, added.length, err) !== 0) {
      throw new Error(`cannot set the tokenizer: ${err.message}`);
    }
    this.keep.push(keep);  // the glue copies the pieces; kept anyway until the pipeline is closed
  }

  embed(texts, dims) {
    const { items } = strings(texts);
    const out = new Float32Array(texts.length * dims);
    const tokens = new BigInt64Array(texts.length);
    const err = {};
    const status = this.embedFn(this.handle, items, texts.length, dims, out, tokens, err);
    if (status !== 0) throw new Error(`the native pipeline failed: ${err.message}`);
    return { out, tokens };
  }

  close() {
    if (this.handle) this.closeFn(this.handle);
    this.handle = null;
  }
}

// UTF-8 buffers and the opgen_string records pointing at them (buffers kept alive by the caller).
function strings(values) {
  const keep = values.map((s) => Buffer.from(s, 'utf8'));
  const items = keep.map((b) => ({ data: b, len: b.length }));
  return { items: items.length ? items : [{ data: null, len: 0 }], keep };
}

// A function compiled by `opgen compile` that returns an embedding matrix (for instance
// examples/embeddings/seed.py:embed, which calls opgen.pipelines.embed): its first parameter
// takes the input texts (list[str]) and it returns tensor[float32] (len(texts), dim). Its other
// parameters (seed's `task`) come from the registration's fixed `args` or, per request, from
// create() options of the same name. Token counts are real: the library reports how many tokens
// its pipelines processed in the call (manifest usage_symbol).
class CompiledEmbedder {
  constructor(name, spec) {
    const { path: where, args = {} } = typeof spec === 'string' ? { path: spec } : spec;
    const file = manifestPath(where);
    this.fn = loadCompiled(file);
    const m = this.fn.manifest;
    if (!m.params.length || m.params[0].type !== 'list[str]' || m.returns.type !== 'tensor[float32]') {
      throw new Error(`${file}: ${m.function} does not take list[str] first and return tensor[float32]; it cannot serve embeddings`);
    }
    this.manifest = { model: name, dimensions: [] };
    this.textsParam = m.params[0].name;
    this.options = m.params.slice(1).map((q) => q.name);
    this.fixed = args;
    const lib = koffi.load(path.join(path.dirname(file), m.library));
    this.usage = m.usage_symbol ? lib.func(`int64_t ${m.usage_symbol}(void)`) : null;
    this.dim = null;  // known after the first call
  }

  embed(texts, options) {
    const result = this.fn.named({ ...this.fixed, ...options, [this.textsParam]: texts });
    if (result.shape.length !== 2 || result.shape[0] !== texts.length) {
      throw new Error(`${this.fn.manifest.function} returned shape [${result.shape}] for ${texts.length} texts`);
    }
    this.dim = result.shape[1];
    // Read right after the call, on the same thread: the count of this call (0 without pipelines).
    const tokens = this.usage ? Number(this.usage()) : 0;
    return { out: result.data, dim: this.dim, tokens };
  }

  close() {}
}

function checkInput(input) {
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0) {
    throw new BadRequestError("'input' must be a non-empty string or a non-empty list of strings", 'input');
  }
  texts.forEach((t, i) => {
    if (typeof t !== 'string') {
      throw new BadRequestError(`'input[${i}]' must be a string (token arrays are not supported by local models), got ${typeof t}`, 'input');
    }
    if (t.length === 0) throw new BadRequestError(`'input[${i}]' is empty; every input must be a non-empty string`, 'input');
  });
  return texts;
}

class Embeddings {
  constructor(client) {
    this.client = client;
  }

  async create({ model, input, dimensions, encoding_format: format = 'float', ...rest } = {}) {
    const compiled = this.client.compiledModel(model);
    const unknown = Object.keys(rest).filter((k) => k !== 'user' && !(compiled && compiled.options.includes(k)));
    if (unknown.length) throw new BadRequestError(`Unrecognized request argument supplied: ${unknown[0]}`, unknown[0]);
    const texts = checkInput(input);
    if (format !== 'float' && format !== 'base64') {
      throw new BadRequestError(`'${format}' is not one of ['float', 'base64'] - 'encoding_format'`, 'encoding_format');
    }
    if (compiled) return this.createCompiled(compiled, texts, dimensions, format, rest);
    const pipeline = this.client.pipeline(model);
    const allowed = [...new Set([...pipeline.manifest.dimensions, pipeline.dim])].sort((a, b) => a - b);
    const dims = dimensions === undefined || dimensions === null ? pipeline.dim : dimensions;
    if (!Number.isInteger(dims) || !allowed.includes(dims)) {
      throw new BadRequestError(`${pipeline.manifest.model} supports dimensions ${allowed.join(', ')}; got ${dimensions}`, 'dimensions');
    }
    const { out, tokens } = pipeline.embed(texts, dims);
    return respond(pipeline.manifest.model, texts, out, dims, format, tokens.reduce((a, b) => a + Number(b), 0));
  }
}

function respond(model, texts, out, dims, format, total) {
  const data = texts.map((_, i) => {
    const row = out.subarray(i * dims, (i + 1) * dims);
    const embedding = format === 'base64'
      ? Buffer.from(row.buffer, row.byteOffset, row.byteLength).toString('base64')
      : Array.from(row);
    return { object: 'embedding', index: i, embedding };
  });
  return { object: 'list', data, model, usage: { prompt_tokens: total, total_tokens: total } };
}

Embeddings.prototype.createCompiled = function createCompiled(embedder, texts, dimensions, format, options) {
  let result;
  try {
    result = embedder.embed(texts, options);
  } catch (e) {
    // A bad option value (seed's unknown task: KeyError) is the request's fault, not the server's.
    if (e.kind === 'KeyError' || e.kind === 'ValueError') {
      throw new BadRequestError(`${e.kind}: ${e.message}`, Object.keys(options)[0] || 'input');
    }
    throw e;
  }
  const { out, dim, tokens } = result;
  if (dimensions !== undefined && dimensions !== null && dimensions !== dim) {
    throw new BadRequestError(`${embedder.manifest.model} supports dimensions ${dim}; got ${dimensions}`, 'dimensions');
  }
  return respond(embedder.manifest.model, texts, out, dim, format, tokens);
};

class Client {
  // pipelines: a directory written by `opgen pipeline MODEL -o DIR` (default $OPGEN_PIPELINES).
  // compiled: model name -> a compiled embedding function, as its `opgen compile` output
  //   directory (or manifest), or { path, args } with fixed values for its other parameters:
  //   { 'seed-query': { path: 'out/seed', args: { task: 'query' } } }.
  constructor({ pipelines = process.env.OPGEN_PIPELINES, compiled = {} } = {}) {
    if (!pipelines && !Object.keys(compiled).length) {
      throw new Error('no pipelines directory: pass { pipelines } or set OPGEN_PIPELINES (see `opgen pipeline --help`), or pass { compiled }');
    }
    this.dir = pipelines;
    this.compiled = new Map(Object.entries(compiled).map(([name, spec]) => [name.toLowerCase(), { name, spec }]));
    this.loaded = new Map();
    this.embeddings = new Embeddings(this);
  }

  compiledModel(model) {
    const found = typeof model === 'string' ? this.compiled.get(model.toLowerCase()) : undefined;
    if (!found) return null;
    const key = `compiled:${found.name}`;
    if (!this.loaded.has(key)) this.loaded.set(key, new CompiledEmbedder(found.name, found.spec));
    return this.loaded.get(key);
  }

  pipeline(model) {
    if (typeof model !== 'string' || !model) throw new BadRequestError('you must provide a model parameter', 'model');
    const found = this.find(model);
    if (!found) {
      throw new NotFoundError(`The model \`${model}\` does not exist or you do not have access to it.`, 'model', 'model_not_found');
    }
    if (!this.loaded.has(found.dir)) this.loaded.set(found.dir, new NativePipeline(found.dir, found.manifest));
    return this.loaded.get(found.dir);
  }

  find(model) {
    const want = model.toLowerCase();
    if (!this.dir || !fs.existsSync(this.dir)) return null;
    for (const name of fs.readdirSync(this.dir)) {
      const file = path.join(this.dir, name, 'pipeline.json');
      if (!fs.existsSync(file)) continue;
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
      const names = [manifest.model, ...(manifest.aliases || [])].map((n) => n.toLowerCase());
      if (names.includes(want)) return { dir: path.join(this.dir, name), manifest };
    }
    return null;
  }

  close() {
    for (const p of this.loaded.values()) p.close();
    this.loaded.clear();
  }
}

module.exports = { Client, APIError, BadRequestError, NotFoundError };
