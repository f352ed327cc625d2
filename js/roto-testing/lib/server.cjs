'use strict';
/**
 * RotoServer: the real roto-server binary on a free port for a test suite. It launches the
 * binary with `--port 0`, reads the port from the start line, waits until STS
 * GetCallerIdentity answers (setup scripts run before the port opens, so ready means
 * seeded), and stops it with SIGTERM, then SIGKILL if it hangs. A server the test forgets to
 * stop neither keeps Node running nor outlives it: the child is unreferenced once ready and
 * killed when the process exits or is ended by a signal.
 */

const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { finished } = require('node:stream/promises');
const { setTimeout: sleep } = require('node:timers/promises');
const { findBinary } = require('./binary.cjs');
const { RotoClient } = require('./client.cjs');

const START_LINE = /^roto-server \S+ listening on http:\/\/(.+):(\d+) store=\w+ services=\S+$/;
const IDENTITY_BODY = 'Action=GetCallerIdentity&Version=2011-06-15';
const DEFAULT_START_TIMEOUT_MS = 20000;
const DEFAULT_STOP_TIMEOUT_MS = 15000;
const STDERR_KEPT = 64 * 1024;
const ANY_ADDRESS = { '0.0.0.0': '127.0.0.1', '[::]': '[::1]' };

class RotoServer extends RotoClient {
  #options;
  #child;
  #stderr = '';
  #startLine = '';
  #host = '';
  #port = 0;

  /** A server to start with `start()`: `{ binary, args, env, setup, ephemeral, cwd, timeout }`. */
  constructor(options = {}) {
    super('');
    this.#options = options;
  }

  /** Starts a server and resolves once it is ready. */
  static start(options = {}) {
    return new RotoServer(options).start();
  }

  get endpoint() {
    if (!this.#port) throw new Error('roto-server is not started: await server.start() first');
    return `http://${this.#host}:${this.#port}`;
  }

  /** The port the server listens on. */
  get port() {
    return this.#port;
  }

  /** The server process's id (once started). */
  get pid() {
    return this.#child?.pid;
  }

  /** The start line the server printed. */
  get startLine() {
    return this.#startLine;
  }

  /** The last 64 KiB the server wrote to stderr. */
  get stderr() {
    return this.#stderr;
  }

  /** The command line `start()` runs: `[binary, ...flags]`. */
  command() {
    const { binary, args = [], setup = [], ephemeral = true } = this.#options;
    const scripts = typeof setup === 'string' ? [setup] : setup;
    return [
      binary ?? findBinary({ cwd: this.#options.cwd }),
      '--port', '0',
      ...(ephemeral ? ['--ephemeral'] : []),
      ...scripts.flatMap((script) => ['--setup', script]),
      ...args,
    ];
  }

  /** Launches the binary and resolves with this server once it answers GetCallerIdentity;
   * rejects with the server's exit code and stderr if it exits or is not ready in time. */
  async start() {
    if (this.#child) throw new Error('roto-server is already started');
    const [binary, ...args] = this.command();
    const timeout = this.#options.timeout ?? DEFAULT_START_TIMEOUT_MS;
    const deadline = Date.now() + timeout;
    const child = await launch(binary, args, this.#options);
    this.#child = child;
    track(child);
    child.stderr.setEncoding('utf8').on('data', (text) => {
      this.#stderr = (this.#stderr + text).slice(-STDERR_KEPT);
    });
    try {
      await this.#readStartLine(binary, deadline);
      await this.#waitReady(deadline, timeout);
    } catch (error) {
      await this.stop({ signal: 'SIGKILL' });
      throw error;
    }
    for (const handle of [child, child.stdout, child.stderr]) handle.unref();
    return this;
  }

  async #readStartLine(binary, deadline) {
    const child = this.#child;
    const line = await withDeadline(firstLine(child.stdout), deadline, () =>
      `roto-server (${binary}) printed no start line in time; stderr: ${this.#stderr}`);
    child.stdout.resume();
    if (line === undefined) {
      await finished(child.stderr).catch(() => {});
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
      throw new Error(`roto-server (${binary}) exited with ${child.exitCode ?? child.signalCode} ` +
        `before it listened; stderr: ${this.#stderr}`);
    }
    const match = START_LINE.exec(line);
    if (!match) {
      throw new Error(`${binary} printed ${JSON.stringify(line)}, not roto-server's start line; ` +
        `stderr: ${this.#stderr}`);
    }
    this.#startLine = line;
    this.#host = ANY_ADDRESS[match[1]] ?? match[1];
    this.#port = Number(match[2]);
  }

  async #waitReady(deadline, timeout) {
    while (Date.now() < deadline && this.#child.exitCode === null) {
      if (await this.#answersIdentity()) return;
      await sleep(10);
    }
    throw new Error(`roto-server did not become ready within ${timeout} ms ` +
      `(exit status ${this.#child.exitCode}); stderr: ${this.#stderr}`);
  }

  async #answersIdentity() {
    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: IDENTITY_BODY,
        signal: AbortSignal.timeout(1000),
      });
      await response.arrayBuffer();
      return response.status === 200;
    } catch {
      return false;
    }
  }

  /** Stops the server (SIGTERM, then SIGKILL after `timeout` ms) and resolves with how it
   * ended: `{ code, signal }`. Stopping a stopped server returns the same. */
  async stop({ signal = 'SIGTERM', timeout = DEFAULT_STOP_TIMEOUT_MS } = {}) {
    const child = this.#child;
    if (!child) return { code: null, signal: null };
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.ref();
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
      await exited;
      clearTimeout(timer);
    }
    child.stdout.destroy();
    child.stderr.destroy();
    return { code: child.exitCode, signal: child.signalCode };
  }
}

/** Resolves with the first line of a stream, or undefined if it ends before one. */
function firstLine(stream) {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end >= 0) finish(text.slice(0, end).trim());
    };
    const onEnd = () => finish(undefined);
    const finish = (line) => {
      stream.off('data', onData).off('end', onEnd).off('error', reject);
      resolve(line);
    };
    stream.setEncoding('utf8').on('data', onData).once('end', onEnd).once('error', reject);
  });
}

/** Spawns the binary; rejects when it cannot run (missing, not executable). */
async function launch(binary, args, { cwd, env }) {
  const child = spawn(binary, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await once(child, 'spawn');
  } catch (error) {
    throw new Error(`cannot run roto-server ${binary}: ${error.message}`);
  }
  return child;
}

/** `promise`, or a rejection with `message()` once `deadline` passes. */
async function withDeadline(promise, deadline, message) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const running = new Set();
let hooked = false;

/** Remembers a child to kill if this process exits or is ended by a signal first. */
function track(child) {
  if (!hooked) {
    hooked = true;
    process.on('exit', killAll);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, onSignal);
  }
  running.add(child);
  child.once('exit', () => running.delete(child));
}

function killAll() {
  for (const child of running) child.kill('SIGKILL');
}

/** Kills the servers, then lets the signal do what it would have done without this handler:
 * end the process, unless the program has handlers of its own. */
function onSignal(signal) {
  killAll();
  if (process.listenerCount(signal) === 1) {
    process.off(signal, onSignal);
    process.kill(process.pid, signal);
  }
}

module.exports = { RotoServer };
