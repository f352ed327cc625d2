// Typings of roto-testing/jest.
import type { RotoServerOptions } from './index.cjs';

/** A Jest globalSetup function that starts a server with these options. */
export function rotoGlobalSetup(options?: RotoServerOptions): () => Promise<void>;
/** Starts a server with the default options. */
export const globalSetup: () => Promise<void>;
/** Stops the server the global setup started. */
export function globalTeardown(): Promise<void>;
