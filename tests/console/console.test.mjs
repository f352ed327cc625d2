// Roto's web console (/_roto/ui) in headless Chromium: Debian's chromium driven by
// playwright-core (Playwright's own browser download is never used). The page loads, lists
// seeded resources of several services, shows a queue's messages without receiving them,
// and shows a new trace entry as it happens; opening it adds nothing to the trace.
//
// The browser is $ROTO_CHROMIUM, else `chromium` on the PATH (scripts/chromium.sh installs
// Debian's). Without one the tests skip saying so, except under CI=true, where they fail.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { RotoServer } from '../../js/roto-testing/index.mjs';

function findChromium() {
  if (process.env.ROTO_CHROMIUM) return process.env.ROTO_CHROMIUM;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const executablePath = findChromium();
const missing = executablePath ? false
  : 'Debian\'s chromium is not installed (scripts/chromium.sh installs it; ROTO_CHROMIUM names another)';
if (missing && process.env.CI === 'true') {
  throw new Error(`${missing}; CI runs the console's tests for real`);
}

const SETUP = `
aws.s3.CreateBucket{Bucket = "console-seeded-bucket"}
aws.s3.PutObject{Bucket = "console-seeded-bucket", Key = "reports/today.txt", Body = "hello"}
local queue = aws.sqs.CreateQueue{QueueName = "console-jobs"}.QueueUrl
aws.sqs.SendMessage{QueueUrl = queue, MessageBody = "job for the console"}
aws.dynamodb.CreateTable{
  TableName = "console-orders", BillingMode = "PAY_PER_REQUEST",
  AttributeDefinitions = {{AttributeName = "id", AttributeType = "S"}},
  KeySchema = {{AttributeName = "id", KeyType = "HASH"}},
}
aws.dynamodb.PutItem{TableName = "console-orders", Item = {id = {S = "order-7"}}}
aws.ssm.PutParameter{Name = "/console/flag", Value = "on", Type = "String"}
aws.sns.CreateTopic{Name = "console-topic"}
aws.events.PutRule{Name = "console-rule", EventPattern = '{"source":["console"]}'}
aws.s3.CreateBucket{Bucket = "console-many"}
for i = 1, 105 do
  aws.s3.PutObject{Bucket = "console-many", Key = string.format("item-%03d", i), Body = "x"}
end
`;

let server;
let browser;
let page;

before(async () => {
  if (missing) return;
  const dir = mkdtempSync(join(tmpdir(), 'roto-console-'));
  writeFileSync(join(dir, 'setup.lua'), SETUP);
  server = await RotoServer.start({ setup: join(dir, 'setup.lua') });
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  page = await browser.newPage();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const opts = { skip: missing };

test('the page loads and lists seeded resources of several services', opts, async () => {
  const traced = (await server.traces()).length;
  const response = await page.goto(`${server.endpoint}/_roto/ui`);
  assert.equal(response.status(), 200);
  assert.match(response.headers()['content-security-policy'], /default-src 'self'/);
  const resources = page.locator('#services');
  for (const name of ['console-seeded-bucket', 'console-jobs', 'console-orders', '/console/flag', 'console-topic']) {
    await resources.getByText(name, { exact: false }).first().waitFor({ timeout: 10000 });
  }
  assert.equal((await server.traces()).length, traced, 'opening the console traced nothing');
});

test('opening a bucket, a table, a queue and a bus shows their contents; the message stays unreceived', opts, async () => {
  await page.getByText('console-seeded-bucket').first().click();
  await page.getByText('reports/today.txt (5 bytes)').waitFor({ timeout: 10000 });
  await page.getByText('console-orders').first().click();
  await page.getByText('{"id":"order-7"}').waitFor({ timeout: 10000 });
  await page.getByText('console-jobs').first().click();
  await page.getByText('job for the console').waitFor({ timeout: 10000 });
  await page.locator('summary', { hasText: /^default$/ }).click();
  await page.getByText('console-rule (ENABLED): {"source":["console"]}').waitFor({ timeout: 10000 });
  const attributes = await fetch(`${server.endpoint}/_roto/ui/api/call`, {
    method: 'POST',
    body: JSON.stringify({
      service: 'sqs', operation: 'GetQueueAttributes',
      input: { QueueUrl: `${server.endpoint}/000000000000/console-jobs`, AttributeNames: ['All'] },
    }),
  }).then((r) => r.json());
  assert.equal(attributes.Attributes.ApproximateNumberOfMessages, '1');
  assert.equal(attributes.Attributes.ApproximateNumberOfMessagesNotVisible, '0');
});

test('a listing longer than a page shows its first page and the next one on "more"', opts, async () => {
  const summary = page.locator('summary', { hasText: /^console-many$/ });
  const bucket = summary.locator('..');
  await summary.click();
  await bucket.getByText('item-100 (1 bytes)').waitFor({ timeout: 10000 });
  assert.equal(await bucket.getByText('item-101 (1 bytes)').count(), 0, 'the first page ends at MaxKeys');
  const more = bucket.getByRole('button', { name: 'more…' });
  await more.click();
  await bucket.getByText('item-105 (1 bytes)').waitFor({ timeout: 10000 });
  await more.waitFor({ state: 'detached', timeout: 5000 });
  assert.equal(await bucket.locator('li').count(), 105);
});

test('a new request appears in the live trace as it happens, and the filters hide others', opts, async () => {
  const rows = page.locator('#trace-rows tr');
  const call = await fetch(server.endpoint, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: 'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sts/aws4_request, '
        + 'SignedHeaders=host;x-amz-date, Signature=00',
    },
    body: 'Action=GetCallerIdentity&Version=2011-06-15',
  });
  assert.equal(call.status, 200);
  const row = rows.filter({ hasText: 'GetCallerIdentity' }).last();
  await row.waitFor({ timeout: 10000 });
  await page.fill('#f-service', 's3');
  await row.waitFor({ state: 'hidden', timeout: 5000 });
  await page.fill('#f-service', 'sts');
  await row.waitFor({ state: 'visible', timeout: 5000 });
});

test('the console refuses writes and cross-site pages', opts, async () => {
  const write = await fetch(`${server.endpoint}/_roto/ui/api/call`, {
    method: 'POST',
    body: JSON.stringify({ service: 's3', operation: 'DeleteBucket', input: { Bucket: 'console-seeded-bucket' } }),
  });
  assert.equal(write.status, 403);
  const crossSite = await fetch(`${server.endpoint}/_roto/ui`, { headers: { 'Sec-Fetch-Site': 'cross-site' } });
  assert.equal(crossSite.status, 403);
  const otherOrigin = await fetch(`${server.endpoint}/_roto/ui/api/scopes`, { headers: { Origin: 'http://evil.test' } });
  assert.equal(otherOrigin.status, 403);
});
