'use strict';
// Jest `globalTeardown: 'roto-testing/jest/global-teardown'`: stops the global setup's server.
module.exports = require('../jest.cjs').globalTeardown;
