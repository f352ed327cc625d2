// Setup scripts: a server started with `setup` is seeded when it is ready; a failing script
// fails the start with the server's message; useRoto with `reset: false` keeps the seed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { HeadBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { RotoServer } from 'roto-testing';
import { useRoto } from 'roto-testing/node-test';

function script(lua) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'roto-testing-')), 'setup.lua');
  fs.writeFileSync(file, lua);
  return file;
}

const seed = script('aws.s3.CreateBucket{Bucket = "seeded"}\naws.s3.CreateBucket{Bucket = "also-seeded"}\n');

test('a server started with setup scripts is seeded when it is ready', async () => {
  const server = await RotoServer.start({ setup: [seed] });
  try {
    assert.deepEqual(server.command().slice(-2), ['--setup', seed]);
    const s3 = new S3Client(server.clientConfig());
    await s3.send(new HeadBucketCommand({ Bucket: 'seeded' }));
    await server.reset();
    assert.deepEqual((await s3.send(new ListBucketsCommand({}))).Buckets ?? [], []);
  } finally {
    await server.stop();
  }
});

test('a failing setup script fails start with the script\'s error', async () => {
  const broken = script('aws.s3.CreateBucket{Bucket = "fine"}\nerror("no fixtures here")\n');
  await assert.rejects(RotoServer.start({ setup: broken }),
    /exited with 1 before it listened; stderr: .*setup script .*setup\.lua failed: .*no fixtures here/s);
});

describe('useRoto with reset: false', () => {
  const roto = useRoto({ setup: seed, reset: false });
  const names = async () => ((await new S3Client(roto.clientConfig()).send(new ListBucketsCommand({}))).Buckets ?? [])
    .map((bucket) => bucket.Name).sort();

  test('keeps the seed for the first test', async () => {
    assert.deepEqual(await names(), ['also-seeded', 'seeded']);
  });

  test('and for the next', async () => {
    assert.deepEqual(await names(), ['also-seeded', 'seeded']);
  });
});
