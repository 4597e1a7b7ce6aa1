'use strict';
// client.embeddings.create from Node.js over an exported native pipeline. Driven by
// tests/test_embedding_node.py, which exports the pipeline (OPGEN_PIPELINES) and writes the
// sentence-transformers reference for the same texts (OPGEN_EMBED_EXPECTED).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { Client, BadRequestError, NotFoundError } = require('..');

const dir = process.env.OPGEN_PIPELINES;
const expectedFile = process.env.OPGEN_EMBED_EXPECTED;
const skip = !dir || !expectedFile ? 'run through tests/test_embedding_node.py (it exports the pipeline first)' : false;

function cosine(a, b) {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

test('embeddings match sentence-transformers', { skip }, async () => {
  const expected = JSON.parse(fs.readFileSync(expectedFile, 'utf8'));
  const client = new Client({ pipelines: dir });
  const r = await client.embeddings.create({ model: expected.model, input: expected.texts });
  assert.strictEqual(r.object, 'list');
  assert.strictEqual(r.model, expected.model);
  assert.deepStrictEqual(r.data.map((d) => d.index), expected.texts.map((_, i) => i));
  r.data.forEach((d, i) => {
    assert.strictEqual(d.object, 'embedding');
    const c = cosine(d.embedding, expected.vectors[i]);
    assert.ok(c >= 0.99999, `text ${i}: cosine ${c}`);
  });
  assert.strictEqual(r.usage.prompt_tokens, expected.tokens);
  assert.strictEqual(r.usage.total_tokens, expected.tokens);
  client.close();
});

test('base64 holds the float32 bytes of the float answer', { skip }, async () => {
  const expected = JSON.parse(fs.readFileSync(expectedFile, 'utf8'));
  const client = new Client({ pipelines: dir });
  const floats = await client.embeddings.create({ model: expected.model, input: 'base64 please' });
  const b64 = await client.embeddings.create({ model: expected.model, input: 'base64 please', encoding_format: 'base64' });
  const buf = Buffer.from(b64.data[0].embedding, 'base64');
  const decoded = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  assert.deepStrictEqual(Array.from(decoded), floats.data[0].embedding);
  client.close();
});

test('the seed example: rank four documents against a question about the capital of France', { skip }, async () => {
  const expected = JSON.parse(fs.readFileSync(expectedFile, 'utf8'));
  const client = new Client({ pipelines: dir });
  const question = 'What is the capital of France?';
  const documents = [
    'Berlin is the capital and largest city of Germany.',
    'Paris is the capital and most populous city of France.',
    'The Eiffel Tower was completed in 1889.',
    'Mount Everest is the highest mountain above sea level.',
  ];
  const [q] = (await client.embeddings.create({ model: expected.model, input: question })).data;
  const docs = (await client.embeddings.create({ model: expected.model, input: documents })).data;
  const ranked = docs.map((d, i) => [cosine(q.embedding, d.embedding), i]).sort((a, b) => b[0] - a[0]);
  assert.strictEqual(documents[ranked[0][1]], documents[1], `ranking: ${JSON.stringify(ranked)}`);
  client.close();
});

test('bad requests get OpenAI-style errors', { skip }, async () => {
  const expected = JSON.parse(fs.readFileSync(expectedFile, 'utf8'));
  const client = new Client({ pipelines: dir });
  await assert.rejects(client.embeddings.create({ model: 'no-such-model', input: 'x' }),
    (e) => e instanceof NotFoundError && e.status === 404 && e.code === 'model_not_found' && /does not exist/.test(e.message));
  await assert.rejects(client.embeddings.create({ model: expected.model, input: [] }),
    (e) => e instanceof BadRequestError && e.status === 400 && e.param === 'input');
  await assert.rejects(client.embeddings.create({ model: expected.model, input: ['ok', 7] }),
    (e) => e instanceof BadRequestError && /'input\[1\]' must be a string/.test(e.message));
  await assert.rejects(client.embeddings.create({ model: expected.model, input: 'x', dimensions: 7 }),
    (e) => e instanceof BadRequestError && e.param === 'dimensions');
  await assert.rejects(client.embeddings.create({ model: expected.model, input: 'x', temperature: 1 }),
    (e) => e instanceof BadRequestError && /Unrecognized request argument supplied: temperature/.test(e.message));
  client.close();
});
