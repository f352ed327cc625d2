// Typings of roto-testing's ES module entry: the same as the CommonJS entry's.
export * from './index.cjs';
