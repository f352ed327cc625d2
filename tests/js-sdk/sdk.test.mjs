// Roto against the AWS SDK for JavaScript v3, for what boto3 does not send: the SDK's default
// CRC32 checksums, aws-chunked bodies with unsigned and signed trailers, lib-storage's
// multipart uploads, DocumentClient's marshalling, and presigned URLs used with fetch. One
// server with signature verification on, so that what the SDK signs is checked as AWS
// checks it.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import {
  CreateBucketCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { CreateTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand, paginateQuery,
} from '@aws-sdk/lib-dynamodb';
import { RotoServer } from '../../js/roto-testing/index.mjs';

const BUCKET = 'js-sdk';
let server;
let s3;

before(async () => {
  server = await RotoServer.start({ args: ['--verify-signatures'] });
  s3 = new S3Client(server.clientConfig());
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
});

after(async () => {
  await server?.stop();
});

// CRC-32 (IEEE), as S3 reports it: the big-endian value in base64.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  const out = Buffer.alloc(4);
  out.writeUInt32BE((c ^ 0xffffffff) >>> 0);
  return out.toString('base64');
}

async function body(bucket, key) {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await object.Body.transformToByteArray());
}

test('a PutObject carries the SDK\'s default CRC32, which S3 keeps and returns', async () => {
  const text = 'checksummed by default';
  const put = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'default.txt', Body: text }));
  assert.equal(put.ChecksumCRC32, crc32(Buffer.from(text)));
  const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'default.txt', ChecksumMode: 'ENABLED' }));
  assert.equal(head.ChecksumCRC32, crc32(Buffer.from(text)));
  assert.equal((await body(BUCKET, 'default.txt')).toString(), text);
});

test('a stream of unknown length goes as aws-chunked with an unsigned CRC32 trailer', async () => {
  const parts = ['first chunk, ', 'second chunk, ', 'last'];
  const put = await s3.send(new PutObjectCommand({
    Bucket: BUCKET, Key: 'streamed.txt', Body: Readable.from(parts.map((p) => Buffer.from(p))),
    ContentLength: parts.join('').length,
  }));
  assert.equal(put.ChecksumCRC32, crc32(Buffer.from(parts.join(''))));
  assert.equal((await body(BUCKET, 'streamed.txt')).toString(), parts.join(''));
});

test('a wrong CRC32 is refused with BadDigest and stores nothing', async () => {
  await assert.rejects(
    s3.send(new PutObjectCommand({
      Bucket: BUCKET, Key: 'wrong.txt', Body: 'some bytes', ChecksumCRC32: crc32(Buffer.from('other bytes')),
    })),
    (e) => e.name === 'BadDigest' && e.$metadata.httpStatusCode === 400,
  );
  await assert.rejects(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'wrong.txt' })),
    (e) => e.$metadata.httpStatusCode === 404);
});

test('lib-storage uploads a large body in parts, with a checksum per part', async () => {
  const size = 11 * 1024 * 1024 + 17;
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + 7) & 0xff;
  const upload = new Upload({
    client: s3, params: { Bucket: BUCKET, Key: 'large.bin', Body: Readable.from([data]) },
    partSize: 5 * 1024 * 1024, queueSize: 2,
  });
  const done = await upload.done();
  assert.match(done.ETag, /-3"$/);
  const got = await body(BUCKET, 'large.bin');
  assert.equal(got.length, size);
  assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(data).digest('hex'));
});

// The SigV4 signing key, for signing an aws-chunked body's chunks by hand (the SDK signs
// the seed request; S3's chunk signatures chain from it).
function signingKey(secret, date, region, service) {
  let key = createHmac('sha256', `AWS4${secret}`).update(date).digest();
  for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return key;
}

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

// A PUT whose body is aws-chunked with signed chunks and a signed trailer
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER), built as S3's documentation describes.
async function putWithSignedTrailer(key, chunks, checksum, { tamperChunk = false } = {}) {
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const date = amzDate.slice(0, 8);
  const scope = `${date}/us-east-1/s3/aws4_request`;
  const url = new URL(`${server.endpoint}/${BUCKET}/${key}`);
  const decodedLength = chunks.reduce((n, c) => n + c.length, 0);
  const headers = {
    host: url.host,
    'content-encoding': 'aws-chunked',
    'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
    'x-amz-date': amzDate,
    'x-amz-decoded-content-length': String(decodedLength),
    'x-amz-trailer': 'x-amz-checksum-crc32',
  };
  const names = Object.keys(headers).sort();
  const canonical = ['PUT', url.pathname, '', ...names.map((n) => `${n}:${headers[n]}`), '', names.join(';'),
    headers['x-amz-content-sha256']].join('\n');
  const keyBytes = signingKey('test', date, 'us-east-1', 's3');
  const sign = (text) => createHmac('sha256', keyBytes).update(text).digest('hex');
  let previous = sign(['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n'));
  const authorization = `AWS4-HMAC-SHA256 Credential=test/${scope}, SignedHeaders=${names.join(';')}, Signature=${previous}`;
  const pieces = [];
  for (const chunk of [...chunks, Buffer.alloc(0)]) {
    previous = sign(['AWS4-HMAC-SHA256-PAYLOAD', amzDate, scope, previous, sha256(''), sha256(chunk)].join('\n'));
    const sent = tamperChunk && chunk.length ? Buffer.from(chunk.toString().toUpperCase()) : chunk;
    pieces.push(Buffer.from(`${chunk.length.toString(16)};chunk-signature=${previous}\r\n`), sent,
      Buffer.from(chunk.length ? '\r\n' : ''));
  }
  const trailer = `x-amz-checksum-crc32:${checksum}\n`;
  const trailerSignature = sign(['AWS4-HMAC-SHA256-TRAILER', amzDate, scope, previous, sha256(trailer)].join('\n'));
  pieces.push(Buffer.from(`x-amz-checksum-crc32:${checksum}\r\nx-amz-trailer-signature:${trailerSignature}\r\n\r\n`));
  const payload = Buffer.concat(pieces);
  const { host, ...sent } = headers;
  assert.ok(host);
  return fetch(url, { method: 'PUT', body: payload, headers: { ...sent, authorization, 'content-length': String(payload.length) } });
}

test('an aws-chunked body with signed chunks and a signed CRC32 trailer is decoded and checked', async () => {
  const chunks = [Buffer.alloc(8192, 'a'), Buffer.from('tail of the body')];
  const whole = Buffer.concat(chunks);
  const response = await putWithSignedTrailer('signed-trailer.txt', chunks, crc32(whole));
  assert.equal(response.status, 200, await response.text());
  assert.equal(response.headers.get('x-amz-checksum-crc32'), crc32(whole));
  assert.deepEqual(await body(BUCKET, 'signed-trailer.txt'), whole);

  const wrong = await putWithSignedTrailer('signed-wrong.txt', chunks, crc32(Buffer.from('not the body')));
  assert.equal(wrong.status, 400);
  assert.match(await wrong.text(), /<Code>BadDigest<\/Code>/);
});

test('a chunk whose bytes do not match its signature is refused', async () => {
  const chunks = [Buffer.from('signed lower case')];
  const response = await putWithSignedTrailer('tampered.txt', chunks, crc32(Buffer.from('SIGNED LOWER CASE')),
    { tamperChunk: true });
  assert.equal(response.status, 403);
  assert.match(await response.text(), /<Code>SignatureDoesNotMatch<\/Code>/);
});

test('presigned URLs work with fetch, and an altered or expired one is refused', async () => {
  const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: BUCKET, Key: 'presigned.txt' }), { expiresIn: 60 });
  const put = await fetch(putUrl, { method: 'PUT', body: 'sent through a presigned URL' });
  assert.equal(put.status, 200, await put.text());
  const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: BUCKET, Key: 'presigned.txt' }), { expiresIn: 60 });
  const got = await fetch(getUrl);
  assert.equal(got.status, 200);
  assert.equal(await got.text(), 'sent through a presigned URL');

  const altered = await fetch(getUrl.replace('presigned.txt', 'presigned.tx'));
  assert.equal(altered.status, 403);
  assert.match(await altered.text(), /<Code>SignatureDoesNotMatch<\/Code>/);

  const shortLived = await getSignedUrl(s3, new GetObjectCommand({ Bucket: BUCKET, Key: 'presigned.txt' }), { expiresIn: 1 });
  await new Promise((resolve) => setTimeout(resolve, 2100));
  const expired = await fetch(shortLived);
  assert.equal(expired.status, 403);
  assert.match(await expired.text(), /<Code>AccessDenied<\/Code>[\s\S]*Request has expired/);
});

test('DocumentClient marshals native values, sets and nested maps both ways', async () => {
  const dynamodb = new DynamoDBClient(server.clientConfig());
  await dynamodb.send(new CreateTableCommand({
    TableName: 'orders', BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'customer', AttributeType: 'S' }, { AttributeName: 'seq', AttributeType: 'N' }],
    KeySchema: [{ AttributeName: 'customer', KeyType: 'HASH' }, { AttributeName: 'seq', KeyType: 'RANGE' }],
  }));
  const documents = DynamoDBDocumentClient.from(dynamodb, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
  const order = {
    customer: 'ada', seq: 1, total: 12.5, paid: false, note: null, skipped: undefined,
    lines: [{ sku: 'tea', qty: 2 }, { sku: 'cake', qty: 1 }],
    tags: new Set(['gift', 'express']), scores: new Set([3, 5]), blob: new Uint8Array([1, 2, 3]),
    address: { city: 'London', geo: { lat: 51.5, lon: -0.12 } },
  };
  await documents.send(new PutCommand({ TableName: 'orders', Item: order }));
  const raw = (await dynamodb.send(new GetItemCommand({
    TableName: 'orders', Key: { customer: { S: 'ada' }, seq: { N: '1' } },
  }))).Item;
  assert.deepEqual(raw.tags.SS.sort(), ['express', 'gift']);
  assert.deepEqual(raw.scores.NS.sort(), ['3', '5']);
  assert.equal(raw.note.NULL, true);
  assert.equal(raw.address.M.geo.M.lat.N, '51.5');
  assert.equal('skipped' in raw, false);

  await documents.send(new UpdateCommand({
    TableName: 'orders', Key: { customer: 'ada', seq: 1 },
    UpdateExpression: 'SET #lines = list_append(#lines, :more) ADD scores :seven',
    ExpressionAttributeNames: { '#lines': 'lines' },
    ExpressionAttributeValues: { ':more': [{ sku: 'jam', qty: 3 }], ':seven': new Set([7]) },
  }));
  const { Item } = await documents.send(new GetCommand({ TableName: 'orders', Key: { customer: 'ada', seq: 1 } }));
  assert.equal(Item.total, 12.5);
  assert.deepEqual(Item.lines.map((l) => l.sku), ['tea', 'cake', 'jam']);
  assert.deepEqual([...Item.scores].sort(), [3, 5, 7]);
  assert.deepEqual([...Item.blob], [1, 2, 3]);

  for (let seq = 2; seq <= 25; seq++) {
    await documents.send(new PutCommand({ TableName: 'orders', Item: { customer: 'ada', seq, total: seq } }));
  }
  const seen = [];
  const pages = paginateQuery({ client: documents, pageSize: 10 }, {
    TableName: 'orders', KeyConditionExpression: 'customer = :c', ExpressionAttributeValues: { ':c': 'ada' },
  });
  let count = 0;
  for await (const page of pages) {
    count += 1;
    seen.push(...page.Items.map((i) => i.seq));
  }
  assert.equal(count, 3);
  assert.deepEqual(seen, Array.from({ length: 25 }, (_, i) => i + 1));
});
