'use strict';
/**
 * roto-testing/jest: Jest globalSetup and globalTeardown functions that run one roto-server
 * for the run. Test files reach it through `process.env.AWS_ENDPOINT_URL` (and the rest of
 * `server.env()`) or with `RotoClient.fromEnv()`. `roto-testing/jest/global-setup` and
 * `roto-testing/jest/global-teardown` are the ready-made modules; `rotoGlobalSetup(options)`
 * makes a setup with `RotoServer` options.
 */

const { RotoServer } = require('./lib/server.cjs');

const SERVER = Symbol.for('roto-testing.jest.server');

/** A Jest globalSetup function that starts a server with these options. */
function rotoGlobalSetup(options = {}) {
  return async function globalSetup() {
    const server = await RotoServer.start(options);
    Object.assign(process.env, server.env());
    globalThis[SERVER] = server;
  };
}

/** The Jest globalTeardown function: stops the server the global setup started. */
async function globalTeardown() {
  await globalThis[SERVER]?.stop();
  delete globalThis[SERVER];
}

module.exports = { rotoGlobalSetup, globalSetup: rotoGlobalSetup(), globalTeardown };
