'use strict';
// client.embeddings.create served by a compiled function: the seed example
// (examples/embeddings/seed.py:embed, opgen.pipelines.embed inside). Driven by
// tests/test_compile_pipeline.py, which compiles it (OPGEN_SEED_COMPILED) and writes
// sentence-transformers' vectors and token counts for the prefixed texts (OPGEN_SEED_EXPECTED).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { Client, BadRequestError } = require('..');

const dir = process.env.OPGEN_SEED_COMPILED;
const expectedFile = process.env.OPGEN_SEED_EXPECTED;
const skip = !dir || !expectedFile ? 'run through tests/test_compile_pipeline.py (it compiles the seed example first)' : false;

function cosine(a, b) {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

test('the seed example ranks the Paris document first, with sentence-transformers vectors and token counts', { skip }, async () => {
  const expected = JSON.parse(fs.readFileSync(expectedFile, 'utf8'));
  // One registration with a fixed task, one taking the task per request.
  const client = new Client({ compiled: { 'seed-query': { path: dir, args: { task: 'query' } }, seed: dir } });
  const q = await client.embeddings.create({ model: 'seed-query', input: expected.question });
  assert.strictEqual(q.object, 'list');
  assert.strictEqual(q.model, 'seed-query');
  assert.deepStrictEqual(q.usage, { prompt_tokens: expected.question_tokens, total_tokens: expected.question_tokens });
  const docs = await client.embeddings.create({ model: 'seed', input: expected.documents, task: 'document' });
  assert.deepStrictEqual(docs.data.map((d) => [d.object, d.index]), expected.documents.map((_, i) => ['embedding', i]));
  assert.strictEqual(docs.usage.total_tokens, expected.document_tokens);
  const vectors = [q.data[0].embedding, ...docs.data.map((d) => d.embedding)];
  vectors.forEach((v, i) => {
    const c = cosine(v, expected.vectors[i]);
    assert.ok(c >= 0.99999, `text ${i}: cosine ${c} to sentence-transformers`);
  });
  const ranked = docs.data.map((d, i) => [cosine(q.data[0].embedding, d.embedding), i]).sort((a, b) => b[0] - a[0]);
  assert.strictEqual(ranked[0][1], expected.paris, `ranking: ${JSON.stringify(ranked)}`);
  client.close();
});

test('an unknown task is a bad request', { skip }, async () => {
  const client = new Client({ compiled: { seed: dir } });
  await assert.rejects(client.embeddings.create({ model: 'seed', input: ['x'], task: 'poetry' }),
    (e) => e instanceof BadRequestError && e.status === 400 && /KeyError/.test(e.message));
  await assert.rejects(client.embeddings.create({ model: 'seed', input: ['x'], task: 'query', colour: 'red' }),
    (e) => e instanceof BadRequestError && e.param === 'colour');
  client.close();
});
