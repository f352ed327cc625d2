// Typings of roto-testing/node-test's ES module entry.
export * from './node-test.cjs';
