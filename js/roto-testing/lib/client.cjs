'use strict';
/**
 * RotoClient: what a test does with a running roto-server through its `/_roto/*` interface
 * (reset, the trace, deliveries, the clock) and the settings AWS SDKs and child processes
 * need to reach it. RotoServer extends it with the process; a test worker that did not start
 * the server (Jest and Vitest run tests apart from their global setup) makes one from the
 * endpoint with `RotoClient.fromEnv()`.
 */

const { AssertionError } = require('node:assert');

const DEFAULT_REGION = 'us-east-1';
const ACCESS_KEY = 'test';
const DEFAULT_WAIT_MS = 5000;

class RotoClient {
  #endpoint;

  /** A client for the server at `endpoint` (`http://127.0.0.1:PORT`). */
  constructor(endpoint) {
    this.#endpoint = endpoint;
  }

  /** A client for the server named by ROTO_ENDPOINT (which the global setups set), else
   * by AWS_ENDPOINT_URL. */
  static fromEnv(env = process.env) {
    const endpoint = env.ROTO_ENDPOINT || env.AWS_ENDPOINT_URL;
    if (!endpoint) {
      throw new Error('neither ROTO_ENDPOINT nor AWS_ENDPOINT_URL is set: start roto-server with a global setup from roto-testing');
    }
    return new RotoClient(endpoint);
  }

  /** The endpoint URL SDKs and the CLI use. */
  get endpoint() {
    return this.#endpoint;
  }

  /** Options to spread into an AWS SDK for JavaScript v3 client's constructor. */
  clientConfig({ region = DEFAULT_REGION } = {}) {
    return {
      endpoint: this.endpoint,
      region,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: ACCESS_KEY },
      forcePathStyle: true,
      maxAttempts: 1,
    };
  }

  /** Environment variables that point the AWS CLI and SDKs in a child process here. */
  env({ region = DEFAULT_REGION } = {}) {
    return {
      AWS_ENDPOINT_URL: this.endpoint,
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: ACCESS_KEY,
      AWS_REGION: region,
      AWS_DEFAULT_REGION: region,
      ROTO_ENDPOINT: this.endpoint,
    };
  }

  /** GET /_roto/health: version, store and services. */
  health() {
    return this.#call('GET', '/_roto/health');
  }

  /** Empties every service's state and the trace (POST /_roto/reset). */
  async reset() {
    await this.#call('POST', '/_roto/reset');
  }

  /** The server's clock: `{ now, now_millis, advanced_millis }`. */
  clock() {
    return this.#call('GET', '/_roto/clock');
  }

  /** Moves the server's clock forward by `seconds` (fractions allowed); returns the clock. */
  advanceClock(seconds) {
    return this.#call('POST', `/_roto/clock?advance=${encodeURIComponent(seconds)}`);
  }

  /** Trace entries matching the filter (`wait: SECONDS` blocks until one matches). */
  async traces(filter = {}) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(filter)) {
      if (value !== undefined && value !== null) query.set(name, String(value));
    }
    return (await this.#call('GET', `/_roto/traces?${query}`)).traces;
  }

  /** The first trace entry matching the filter, waiting up to `timeout` ms for one; an
   * AssertionError listing the recent trace if none arrives. */
  async waitForTrace(filter = {}, { timeout = DEFAULT_WAIT_MS } = {}) {
    const [first] = await this.traces({ ...filter, wait: timeout / 1000 });
    if (first) return first;
    const recent = await this.traces({ limit: 20 });
    throw new AssertionError({
      message: `no trace entry matched ${JSON.stringify(filter)} within ${timeout} ms; recent: ${JSON.stringify(recent)}`,
    });
  }

  /** Asynchronous deliveries (trace entries of kind `delivery`) matching the filter. */
  deliveries(filter = {}) {
    return this.traces({ ...filter, kind: 'delivery' });
  }

  /** The first delivery matching the filter (`service`, `operation` the event kind,
   * `target`, `outcome`), waiting up to `timeout` ms for one. */
  waitForDelivery(filter = {}, options = {}) {
    return this.waitForTrace({ ...filter, kind: 'delivery' }, options);
  }

  async #call(method, path) {
    const response = await fetch(`${this.endpoint}${path}`, { method });
    const body = await response.text();
    if (!response.ok) {
      throw new Error(`roto-server answered ${response.status} to ${method} ${path}: ${body}`);
    }
    return JSON.parse(body);
  }
}

module.exports = { RotoClient, DEFAULT_REGION };
