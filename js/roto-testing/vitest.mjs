/**
 * roto-testing/vitest: a Vitest globalSetup that starts one roto-server for the run. Tests
 * reach it through `process.env.AWS_ENDPOINT_URL` (and the rest of `server.env()`), through
 * `inject('rotoEndpoint')`, or with `RotoClient.fromEnv()` for reset, traces and the clock.
 *
 *   // vitest.config.js
 *   export default defineConfig({ test: { globalSetup: ['roto-testing/vitest'] } });
 *
 * For server options, write a setup file: `export default rotoGlobalSetup({ setup: 'seed.lua' })`.
 */

import roto from './index.cjs';

/** A Vitest global setup function that starts a server with these `RotoServer` options. */
export function rotoGlobalSetup(options = {}) {
  return async function setup(project) {
    const server = await roto.RotoServer.start(options);
    Object.assign(process.env, server.env());
    project?.provide?.('rotoEndpoint', server.endpoint);
    return async function teardown() {
      await server.stop();
    };
  };
}

export default rotoGlobalSetup();
