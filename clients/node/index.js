'use strict';
// opgen for Node.js: call functions compiled by `opgen compile` in-process.
const { loadCompiled, Tensor, OpgenError } = require('./src/compiled');

module.exports = { loadCompiled, Tensor, OpgenError };
