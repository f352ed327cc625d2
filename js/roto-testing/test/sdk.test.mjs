// The AWS SDK for JavaScript v3 against the server, configured by clientConfig() in this
// process and by env() in a child process: S3 objects, SQS messages, an S3 notification
// delivered to SQS and awaited with waitForDelivery, and a reset that empties the services.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  CreateBucketCommand, GetObjectCommand, ListBucketsCommand, PutBucketNotificationConfigurationCommand,
  PutObjectCommand, S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient,
} from '@aws-sdk/client-sqs';
import { useRoto } from 'roto-testing/node-test';

const roto = useRoto();

test('S3: create a bucket, put an object, get it back', async () => {
  const s3 = new S3Client(roto.clientConfig());
  await s3.send(new CreateBucketCommand({ Bucket: 'uploads' }));
  await s3.send(new PutObjectCommand({ Bucket: 'uploads', Key: 'notes/hello.txt', Body: 'hello, roto' }));
  const object = await s3.send(new GetObjectCommand({ Bucket: 'uploads', Key: 'notes/hello.txt' }));
  assert.equal(await object.Body.transformToString(), 'hello, roto');
  assert.ok(await roto.waitForTrace({ service: 's3', operation: 'PutObject' }));
});

test('reset empties what the previous test created', async () => {
  const s3 = new S3Client(roto.clientConfig());
  assert.deepEqual((await s3.send(new ListBucketsCommand({}))).Buckets ?? [], []);
});

test('SQS: send a message and receive it', async () => {
  const sqs = new SQSClient(roto.clientConfig({ region: 'eu-west-1' }));
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'jobs' }));
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'job 1' }));
  const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
  assert.deepEqual(Messages.map((message) => message.Body), ['job 1']);
  const [sent] = await roto.traces({ service: 'sqs', operation: 'SendMessage' });
  assert.equal(sent.region, 'eu-west-1');
});

test('an S3 notification to SQS is awaited with waitForDelivery', async () => {
  const s3 = new S3Client(roto.clientConfig());
  const sqs = new SQSClient(roto.clientConfig());
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'uploads' }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  await s3.send(new CreateBucketCommand({ Bucket: 'inbox' }));
  await s3.send(new PutBucketNotificationConfigurationCommand({
    Bucket: 'inbox',
    NotificationConfiguration: {
      QueueConfigurations: [{ QueueArn: Attributes.QueueArn, Events: ['s3:ObjectCreated:*'] }],
    },
  }));
  await s3.send(new PutObjectCommand({ Bucket: 'inbox', Key: 'a.txt', Body: 'a' }));
  const delivery = await roto.waitForDelivery({
    service: 's3', operation: 's3:ObjectCreated:Put', target: Attributes.QueueArn,
  });
  assert.equal(delivery.outcome, 'delivered');
  const kinds = (await roto.deliveries({ service: 's3' })).map((entry) => entry.operation);
  assert.deepEqual(kinds, ['s3:TestEvent', 's3:ObjectCreated:Put']);
});

test('env() points an SDK in a child process at the server', async () => {
  await new SQSClient(roto.clientConfig()).send(new CreateQueueCommand({ QueueName: 'from-parent' }));
  const script = `
    import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
    const { QueueUrls } = await new SQSClient({}).send(new ListQueuesCommand({}));
    console.log(JSON.stringify(QueueUrls));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    env: { PATH: process.env.PATH, ...roto.env() },
  });
  const [url] = JSON.parse(stdout);
  assert.match(url, /\/000000000000\/from-parent$/);
});
