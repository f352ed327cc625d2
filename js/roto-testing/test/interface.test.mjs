// The /_roto/* interface through one server per file (useRoto): reset before each test, the
// trace and its filters, waiting for an entry, the clock.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useRoto } from 'roto-testing/node-test';

const roto = useRoto();

/** One unsigned query-protocol call (the server answers it with the server's account). */
function query(body) {
  return fetch(roto.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  }).then((response) => response.text());
}

const callerIdentity = () => query('Action=GetCallerIdentity&Version=2011-06-15');
const missingQueue = () => query('Action=GetQueueUrl&QueueName=absent&Version=2012-11-05');

describe('useRoto', () => {
  test('starts the server before the first test', async () => {
    assert.ok(roto.port > 0);
    assert.equal((await roto.health()).status, 'running');
    await callerIdentity();
  });

  test('resets it before each test', async () => {
    assert.deepEqual(await roto.traces(), []);
  });
});

describe('traces', () => {
  test('filter by service, operation, kind, error code, after and limit', async () => {
    await callerIdentity();
    await missingQueue();
    await callerIdentity();
    const all = await roto.traces();
    assert.deepEqual(all.map((entry) => entry.operation), ['GetCallerIdentity', 'GetQueueUrl', 'GetCallerIdentity']);
    assert.equal((await roto.traces({ service: 'sts' })).length, 2);
    assert.equal((await roto.traces({ operation: 'GetQueueUrl' }))[0].status, 400);
    assert.equal(all[1].error_code, 'QueueDoesNotExist');
    assert.equal((await roto.traces({ error_code: 'QueueDoesNotExist' })).length, 1);
    assert.equal((await roto.traces({ kind: 'delivery' })).length, 0);
    assert.deepEqual(await roto.traces({ after: all[1].seq }), [all[2]]);
    assert.equal((await roto.traces({ limit: 1 })).length, 1);
    assert.equal((await roto.traces({ service: undefined })).length, 3);
  });

  test('an unknown filter is the server\'s 400', async () => {
    await assert.rejects(roto.traces({ colour: 'red' }), /answered 400 .*unknown trace filter 'colour'/);
  });

  test('waitForTrace resolves when a matching entry arrives', async () => {
    const started = Date.now();
    setTimeout(callerIdentity, 200);
    const entry = await roto.waitForTrace({ service: 'sts', operation: 'GetCallerIdentity' }, { timeout: 5000 });
    assert.equal(entry.status, 200);
    assert.ok(Date.now() - started >= 150);
  });

  test('waitForTrace fails with the recent trace when nothing matches in time', async () => {
    await callerIdentity();
    await assert.rejects(roto.waitForTrace({ service: 'sqs' }, { timeout: 200 }), (error) => {
      assert.equal(error.name, 'AssertionError');
      assert.match(error.message, /no trace entry matched \{"service":"sqs"\} within 200 ms; recent: .*GetCallerIdentity/);
      return true;
    });
  });

  test('deliveries and waitForDelivery look only at deliveries', async () => {
    await callerIdentity();
    assert.deepEqual(await roto.deliveries({ service: 'sts' }), []);
    await assert.rejects(roto.waitForDelivery({ service: 'sts' }, { timeout: 100 }), /"kind":"delivery"/);
  });
});

describe('clock', () => {
  test('advanceClock moves the server clock forward by seconds, fractions included', async () => {
    const before = await roto.clock();
    const after = await roto.advanceClock(1.5);
    assert.equal(after.advanced_millis - before.advanced_millis, 1500);
    assert.ok(after.now_millis >= before.now_millis + 1500);
    assert.equal((await roto.clock()).advanced_millis, after.advanced_millis);
  });

  test('a negative advance is the server\'s 400', async () => {
    await assert.rejects(roto.advanceClock(-1), /answered 400/);
  });
});
