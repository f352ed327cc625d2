// Typings of roto-testing/node-test.
import type { RotoServer, RotoServerOptions } from './index.cjs';

export interface UseRotoOptions extends RotoServerOptions {
  /** Reset the server before each test (default true). */
  reset?: boolean;
}

/** Starts a server in `before`, resets it in `beforeEach`, stops it in `after`. */
export function useRoto(options?: UseRotoOptions): RotoServer;
