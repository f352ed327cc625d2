'use strict';
/**
 * roto-testing: a real Roto (local AWS emulator) server for JavaScript and TypeScript test
 * suites. `RotoServer` starts the roto-server binary on a free port and stops it;
 * `RotoClient` reaches a server another process started; `findBinary` says which binary runs.
 */

const { findBinary } = require('./lib/binary.cjs');
const { RotoClient } = require('./lib/client.cjs');
const { RotoServer } = require('./lib/server.cjs');

module.exports = { RotoServer, RotoClient, findBinary };
