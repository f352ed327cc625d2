// Typings of roto-testing (hand-written; the implementation is index.cjs and lib/).

/** One entry of the trace: a request, or an attempt of an asynchronous delivery. */
export interface TraceEntry {
  seq: number;
  /** Milliseconds since the epoch on the server's clock. */
  time: number;
  kind: 'request' | 'delivery';
  account: string;
  region: string;
  service: string;
  /** The operation; for a delivery, the event kind (`s3:ObjectCreated:Put`, `sns:Notification`). */
  operation: string;
  status?: number;
  error_code?: string;
  duration_ms?: number;
  source?: string;
  target?: string;
  outcome?: 'delivered' | 'retrying' | 'failed';
  attempt?: number;
  [field: string]: unknown;
}

/** Filters of `GET /_roto/traces`; undefined members are left out. */
export interface TraceFilter {
  service?: string;
  operation?: string;
  kind?: 'request' | 'delivery';
  error_code?: string;
  target?: string;
  outcome?: 'delivered' | 'retrying' | 'failed';
  /** Only entries after this sequence number. */
  after?: number;
  limit?: number;
  /** Seconds to wait for a first match. */
  wait?: number;
}

export interface WaitOptions {
  /** Milliseconds to wait for a match (default 5000). */
  timeout?: number;
}

/** The server's clock (`GET /_roto/clock`). */
export interface Clock {
  now: string;
  now_millis: number;
  advanced_millis: number;
}

/** `GET /_roto/health`. */
export interface Health {
  status: string;
  version: string;
  store: string;
  services: string[];
}

/** Options to spread into an AWS SDK for JavaScript v3 client's constructor. */
export interface ClientConfig {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  forcePathStyle: true;
  maxAttempts: number;
}

/** Environment variables for a child process (the AWS CLI, an SDK) to reach the server. */
export interface RotoEnv {
  AWS_ENDPOINT_URL: string;
  AWS_ACCESS_KEY_ID: string;
  AWS_SECRET_ACCESS_KEY: string;
  AWS_REGION: string;
  AWS_DEFAULT_REGION: string;
  ROTO_ENDPOINT: string;
  [name: string]: string;
}

/** A running roto-server reached by its endpoint: reset, the trace, deliveries, the clock. */
export class RotoClient {
  constructor(endpoint: string);
  /** A client for ROTO_ENDPOINT (set by the global setups), else AWS_ENDPOINT_URL. */
  static fromEnv(env?: Record<string, string | undefined>): RotoClient;
  /** `http://127.0.0.1:PORT`. */
  readonly endpoint: string;
  /** Endpoint, region (default us-east-1), test credentials, path-style S3, no retries. */
  clientConfig(options?: { region?: string }): ClientConfig;
  /** AWS_ENDPOINT_URL, test credentials, AWS_REGION and AWS_DEFAULT_REGION, ROTO_ENDPOINT. */
  env(options?: { region?: string }): RotoEnv;
  health(): Promise<Health>;
  /** Empties every service's state and the trace. */
  reset(): Promise<void>;
  clock(): Promise<Clock>;
  /** Moves the server's clock forward by `seconds` (fractions allowed). */
  advanceClock(seconds: number): Promise<Clock>;
  traces(filter?: TraceFilter): Promise<TraceEntry[]>;
  /** The first matching entry; rejects with an AssertionError listing the recent trace. */
  waitForTrace(filter?: TraceFilter, options?: WaitOptions): Promise<TraceEntry>;
  deliveries(filter?: Omit<TraceFilter, 'kind'>): Promise<TraceEntry[]>;
  waitForDelivery(filter?: Omit<TraceFilter, 'kind'>, options?: WaitOptions): Promise<TraceEntry>;
}

export interface RotoServerOptions {
  /** The binary; default $ROTO_BINARY, else target/release/roto-server from the working
   * directory upwards, else roto-server on PATH. */
  binary?: string;
  /** Extra flags (`['--region', 'eu-west-1']`). */
  args?: string[];
  /** Extra environment variables for the server. */
  env?: Record<string, string>;
  /** Lua setup scripts run before the port opens (`--setup`). */
  setup?: string | string[];
  /** Pass `--ephemeral` (default true); false for `--data-dir` in `args`. */
  ephemeral?: boolean;
  /** The server's working directory. */
  cwd?: string;
  /** Milliseconds to wait for the server to be ready (default 20000). */
  timeout?: number;
}

export interface StopOptions {
  /** The first signal (default SIGTERM). */
  signal?: string;
  /** Milliseconds before SIGKILL follows (default 15000). */
  timeout?: number;
}

/** How the server process ended. */
export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

/** The real roto-server binary on a free port. */
export class RotoServer extends RotoClient {
  constructor(options?: RotoServerOptions);
  /** Starts a server and resolves once it answers STS GetCallerIdentity. */
  static start(options?: RotoServerOptions): Promise<RotoServer>;
  readonly port: number;
  readonly pid: number | undefined;
  readonly startLine: string;
  /** The last 64 KiB the server wrote to stderr. */
  readonly stderr: string;
  /** `[binary, ...flags]` as `start()` runs them. */
  command(): string[];
  start(): Promise<this>;
  /** SIGTERM, then SIGKILL after the timeout; resolves with how the process ended. */
  stop(options?: StopOptions): Promise<ExitStatus>;
}

/** The binary `RotoServer` runs; throws an Error naming ROTO_BINARY when there is none. */
export function findBinary(options?: { cwd?: string; env?: Record<string, string | undefined> }): string;
