// SubscribeToShard through the JavaScript SDK v3, which speaks HTTP/2 to Kinesis (h2c
// with prior knowledge to an http:// endpoint). Prints what it read as one JSON line.
import {
  KinesisClient,
  PutRecordCommand,
  SubscribeToShardCommand,
} from "@aws-sdk/client-kinesis";

const [endpoint, stream, consumer] = process.argv.slice(2);
const client = new KinesisClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
});
await client.send(
  new PutRecordCommand({ StreamName: stream, Data: Buffer.from("from js"), PartitionKey: "k" }),
);
const out = await client.send(
  new SubscribeToShardCommand({
    ConsumerARN: consumer,
    ShardId: "shardId-000000000000",
    StartingPosition: { Type: "TRIM_HORIZON" },
  }),
);
for await (const event of out.EventStream) {
  const records = event.SubscribeToShardEvent?.Records ?? [];
  if (records.length) {
    console.log(
      JSON.stringify({
        handler: client.config.requestHandler.constructor.name,
        data: records.map((r) => Buffer.from(r.Data).toString()),
        continuation: event.SubscribeToShardEvent.ContinuationSequenceNumber,
      }),
    );
    break;
  }
}
client.destroy();
process.exit(0);
