'use strict';
// The compiled example collection for the node tests: $OPGEN_COMPILED_DIR when the Python suite
// compiled it already (tests/test_compile_node.py), else compiled here with `opgen compile`
// (run the tests from a shell where the opgen virtual environment is active).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const EXAMPLES = path.resolve(__dirname, '..', '..', '..', 'examples', 'compile');

function compiledExamples(functions) {
  if (process.env.OPGEN_COMPILED_DIR) return process.env.OPGEN_COMPILED_DIR;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opgen-node-'));
  for (const [file, name] of functions) {
    execFileSync(process.env.OPGEN || 'opgen', ['compile', `${path.join(EXAMPLES, file)}:${name}`, '-o', path.join(dir, name)],
      { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return dir;
}

module.exports = { compiledExamples };
