// A small serverless app for tests/test_cdk.py: a function whose code is a file asset
// (handler/, zipped by the CDK and uploaded to the bootstrap bucket), a table and a queue,
// with the grants that make IAM policies, and outputs the test reads back.
const cdk = require("aws-cdk-lib");
const dynamodb = require("aws-cdk-lib/aws-dynamodb");
const lambda = require("aws-cdk-lib/aws-lambda");
const sqs = require("aws-cdk-lib/aws-sqs");
const path = require("path");

const app = new cdk.App();
const stack = new cdk.Stack(app, process.env.ROTO_CDK_STACK || "RotoCdkApp");
const table = new dynamodb.Table(stack, "Items", {
  partitionKey: { name: "id", type: dynamodb.AttributeType.STRING },
  billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
  removalPolicy: cdk.RemovalPolicy.DESTROY,
});
const queue = new sqs.Queue(stack, "Jobs", { visibilityTimeout: cdk.Duration.seconds(60) });
const fn = new lambda.Function(stack, "Handler", {
  runtime: lambda.Runtime.NODEJS_20_X,
  handler: "index.handler",
  code: lambda.Code.fromAsset(path.join(__dirname, "handler")),
  environment: { TABLE: table.tableName, QUEUE: queue.queueUrl },
});
table.grantReadWriteData(fn);
queue.grantSendMessages(fn);
new cdk.CfnOutput(stack, "FunctionName", { value: fn.functionName });
new cdk.CfnOutput(stack, "TableName", { value: table.tableName });
new cdk.CfnOutput(stack, "QueueUrl", { value: queue.queueUrl });
