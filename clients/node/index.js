'use strict';
// opgen for Node.js: call functions compiled by `opgen compile` in-process.
const { loadCompiled, Tensor, OpgenError } = require('./src/compiled');
const { Client, APIError, BadRequestError, NotFoundError } = require('./src/embeddings');

module.exports = { loadCompiled, Tensor, OpgenError, Client, APIError, BadRequestError, NotFoundError };
