// Starting, readiness and stopping: the port from the start line, no process left behind
// (after stop, after a hung SIGTERM, when the parent exits or is signalled), and the errors
// a suite sees when the binary is missing, refuses its flags or never becomes ready.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { RotoServer, findBinary } from 'roto-testing';

const binary = findBinary();

/** Whether a process is alive (a zombie awaiting its reaper counts as gone). */
function isRunning(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function assertGone(pid) {
  for (let i = 0; i < 100 && isRunning(pid); i++) await sleep(20);
  assert.equal(isRunning(pid), false, `process ${pid} is still running`);
}

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'roto-testing-'));
}

test('start reads the port from the start line and waits until the server answers', async () => {
  const server = await RotoServer.start();
  try {
    assert.ok(server.port > 0);
    assert.equal(server.endpoint, `http://127.0.0.1:${server.port}`);
    assert.match(server.startLine, /^roto-server \S+ listening on http:\/\/127\.0\.0\.1:\d+ store=ephemeral /);
    assert.deepEqual(server.command().slice(1, 4), ['--port', '0', '--ephemeral']);
    assert.equal((await server.health()).status, 'running');
    const [ready] = await server.traces({ service: 'sts', operation: 'GetCallerIdentity' });
    assert.equal(ready.status, 200);
  } finally {
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  }
  await assertGone(server.pid);
  assert.deepEqual(await server.stop(), { code: 0, signal: null });
});

test('stop kills a server that does not end on SIGTERM once the timeout passes', async () => {
  const server = await RotoServer.start();
  process.kill(server.pid, 'SIGSTOP');
  assert.deepEqual(await server.stop({ timeout: 200 }), { code: null, signal: 'SIGKILL' });
  await assertGone(server.pid);
});

test('the endpoint of a server not yet started is an error', () => {
  assert.throws(() => new RotoServer().endpoint, /not started/);
});

/** Runs a Node script that starts a server and prints its pid; returns the script's process
 * and the server's pid. */
async function parentOfServer(script) {
  const parent = spawn(process.execPath, ['--input-type=module', '-e',
    `import { RotoServer } from 'roto-testing';
     const server = await RotoServer.start({ binary: ${JSON.stringify(binary)} });
     console.log(server.pid);
     ${script}`], { cwd: fileURLToPath(new URL('.', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = await once(parent.stdout, 'data');
  return { parent, pid: Number(String(chunk).trim()) };
}

test('a server left running neither keeps Node alive nor outlives it', async () => {
  const { parent, pid } = await parentOfServer('');
  assert.ok(pid > 0);
  const [code] = await once(parent, 'exit');
  assert.equal(code, 0);
  await assertGone(pid);
});

test('a server dies with a parent ended by SIGTERM', async () => {
  const { parent, pid } = await parentOfServer('setInterval(() => {}, 1000);');
  assert.ok(isRunning(pid));
  parent.kill('SIGTERM');
  const [, signal] = await once(parent, 'exit');
  assert.equal(signal, 'SIGTERM');
  await assertGone(pid);
});

test('a missing ROTO_BINARY is named in the error', () => {
  assert.throws(() => findBinary({ env: { ROTO_BINARY: '/nonexistent/roto-server' } }),
    /ROTO_BINARY=\/nonexistent\/roto-server is not an executable file/);
});

test('no binary anywhere is an error that says to set ROTO_BINARY', async () => {
  const dir = tempDir();
  assert.throws(() => findBinary({ cwd: dir, env: { PATH: dir } }), /set ROTO_BINARY/);
  await assert.rejects(RotoServer.start({ binary: path.join(dir, 'roto-server') }),
    /cannot run roto-server .*ENOENT/);
});

test('the binary is found in target/release above the working directory, else on PATH', () => {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, 'target', 'release'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
  fs.symlinkSync(binary, path.join(dir, 'target', 'release', 'roto-server'));
  const env = { PATH: '' };
  assert.equal(findBinary({ cwd: path.join(dir, 'a', 'b'), env }), path.join(dir, 'target', 'release', 'roto-server'));
  const bin = tempDir();
  fs.symlinkSync(binary, path.join(bin, 'roto-server'));
  assert.equal(findBinary({ cwd: bin, env: { PATH: `/nonexistent:${bin}` } }), path.join(bin, 'roto-server'));
});

test('a server that refuses its flags fails start with its exit code and stderr', async () => {
  await assert.rejects(RotoServer.start({ args: ['--no-such-flag'] }),
    /exited with 2 before it listened; stderr: .*--no-such-flag/s);
});

test('a server that never answers fails start after the timeout, with its stderr, and is killed', async () => {
  const fake = path.join(tempDir(), 'roto-server');
  fs.writeFileSync(fake, '#!/bin/sh\necho "warming up" >&2\n' +
    'echo "roto-server 0.0.0 listening on http://127.0.0.1:9 store=ephemeral services=s3"\nexec sleep 30\n',
  { mode: 0o755 });
  const server = new RotoServer({ binary: fake, timeout: 300 });
  await assert.rejects(server.start(), /did not become ready within 300 ms .*stderr: warming up/s);
  await assertGone(server.pid);
});
