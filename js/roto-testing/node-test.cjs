'use strict';
/**
 * roto-testing/node-test: one roto-server for a node:test file or `describe` block. It starts
 * in `before`, is reset in `beforeEach` (unless `reset: false`) and stops in `after`.
 */

const { before, beforeEach, after } = require('node:test');
const { RotoServer } = require('./lib/server.cjs');

/** Registers the hooks and returns the server, usable from `before` on. Options are
 * `RotoServer`'s, plus `reset` (default true): reset the server before each test. */
function useRoto({ reset = true, ...options } = {}) {
  const server = new RotoServer(options);
  before(() => server.start());
  if (reset) beforeEach(() => server.reset());
  after(() => server.stop());
  return server;
}

module.exports = { useRoto };
