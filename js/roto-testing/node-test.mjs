// The ES module entry of roto-testing/node-test (the implementation is node-test.cjs).
import nodeTest from './node-test.cjs';

export const { useRoto } = nodeTest;
