'use strict';
// Jest `globalSetup: 'roto-testing/jest/global-setup'`: starts one roto-server for the run.
module.exports = require('../jest.cjs').globalSetup;
