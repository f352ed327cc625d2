// Typings of roto-testing/vitest.
import type { RotoServerOptions } from './index.cjs';

declare module 'vitest' {
  interface ProvidedContext {
    /** The endpoint of the server roto-testing/vitest started. */
    rotoEndpoint: string;
  }
}

/** What Vitest passes a global setup: a project (or, before Vitest 3, a context) with `provide`. */
export interface GlobalSetupProject {
  provide(key: 'rotoEndpoint', value: string): void;
}

export type GlobalSetup = (project: GlobalSetupProject) => Promise<() => Promise<void>>;

/** A global setup that starts a server with these options. */
export function rotoGlobalSetup(options?: RotoServerOptions): GlobalSetup;

declare const setup: GlobalSetup;
export default setup;
