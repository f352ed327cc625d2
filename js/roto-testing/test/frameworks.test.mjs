// The Vitest and Jest global setups, called the way those runners call them (neither runner
// is installed): each starts one server, publishes its endpoint in process.env (and to
// Vitest's `provide`), and its teardown stops it. The package's entries resolve by name.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { afterEach, test } from 'node:test';
import { RotoClient, RotoServer } from 'roto-testing';

const require = createRequire(import.meta.url);
const saved = { ...process.env };

afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});

async function assertStopped(endpoint) {
  await assert.rejects(fetch(`${endpoint}/_roto/health`), /fetch failed/);
}

test('the Vitest global setup provides the endpoint and sets the environment', async () => {
  const { default: setup } = await import('roto-testing/vitest');
  const provided = {};
  const teardown = await setup({ provide: (key, value) => { provided[key] = value; } });
  const endpoint = provided.rotoEndpoint;
  try {
    assert.match(endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(process.env.AWS_ENDPOINT_URL, endpoint);
    assert.equal(process.env.AWS_ACCESS_KEY_ID, 'test');
    assert.equal((await RotoClient.fromEnv().health()).status, 'running');
  } finally {
    await teardown();
  }
  await assertStopped(endpoint);
});

test('a Vitest global setup made with options passes them to the server', async () => {
  const { rotoGlobalSetup } = await import('roto-testing/vitest');
  const teardown = await rotoGlobalSetup({ args: ['--region', 'eu-west-1'] })({ provide() {} });
  try {
    const client = RotoClient.fromEnv();
    await fetch(client.endpoint, { method: 'POST', body: 'Action=GetCallerIdentity&Version=2011-06-15' });
    const [entry] = await client.traces({ service: 'sts' });
    assert.equal(entry.region, 'eu-west-1');
  } finally {
    await teardown();
  }
});

test('the Jest global setup and teardown modules start and stop one server', async () => {
  const globalSetup = require('roto-testing/jest/global-setup');
  const globalTeardown = require('roto-testing/jest/global-teardown');
  await globalSetup({}, {});
  const endpoint = process.env.ROTO_ENDPOINT;
  try {
    assert.equal(process.env.AWS_ENDPOINT_URL, endpoint);
    assert.equal((await RotoClient.fromEnv().health()).status, 'running');
  } finally {
    await globalTeardown({}, {});
  }
  await assertStopped(endpoint);
});

test('a Jest global setup made with options passes them to the server', async () => {
  const { rotoGlobalSetup, globalTeardown } = require('roto-testing/jest');
  await assert.rejects(rotoGlobalSetup({ args: ['--no-such-flag'] })({}, {}), /--no-such-flag/);
  await globalTeardown();
});

test('require and import of the main entry give the same classes', async () => {
  assert.equal(require('roto-testing').RotoServer, RotoServer);
  assert.equal(require('roto-testing/node-test').useRoto, (await import('roto-testing/node-test')).useRoto);
});

test('RotoClient.fromEnv needs ROTO_ENDPOINT or AWS_ENDPOINT_URL', () => {
  assert.throws(() => RotoClient.fromEnv({}), /neither ROTO_ENDPOINT nor AWS_ENDPOINT_URL is set/);
  assert.equal(RotoClient.fromEnv({ AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }).endpoint, 'http://127.0.0.1:4566');
});
