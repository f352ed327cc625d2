-- The demo shop: a small online shop, seeded across Roto's eleven stateful services.
--
--   target/release/roto-server --ephemeral --setup examples/demo/setup.lua
--
-- Every call below is an ordinary AWS API call with the SDK's input shape
-- (aws.<service>.<Operation>{...}); README.md beside this file shows what it made with the
-- AWS CLI. The first part builds the shop; the last part places an order and lets it flow
-- through EventBridge, Lambda, DynamoDB, SNS, SQS, S3 and CloudWatch Logs. The server
-- answers its first request only once all of it, deliveries included, has happened.

local json = roto.json
local account = aws.sts.GetCallerIdentity{}.Account

---------------------------------------------------------------------------------------------
-- IAM: the role the order processor runs as, and what it may do.
---------------------------------------------------------------------------------------------
local role = aws.iam.CreateRole{
  RoleName = "shop-order-processor",
  Description = "Runs the shop's order processor function",
  AssumeRolePolicyDocument = json.encode{
    Version = "2012-10-17",
    Statement = {{
      Effect = "Allow",
      Principal = {Service = "lambda.amazonaws.com"},
      Action = "sts:AssumeRole",
    }},
  },
  Tags = {{Key = "app", Value = "shop"}},
}.Role

aws.iam.AttachRolePolicy{
  RoleName = role.RoleName,
  PolicyArn = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
}

local orders_access = aws.iam.CreatePolicy{
  PolicyName = "shop-orders-access",
  Description = "Read and update orders, publish order events",
  PolicyDocument = json.encode{
    Version = "2012-10-17",
    Statement = {
      {
        Effect = "Allow",
        Action = {"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:Query"},
        Resource = "arn:aws:dynamodb:*:" .. account .. ":table/shop-orders*",
      },
      {Effect = "Allow", Action = "sns:Publish", Resource = "arn:aws:sns:*:" .. account .. ":shop-*"},
    },
  },
}.Policy
aws.iam.AttachRolePolicy{RoleName = role.RoleName, PolicyArn = orders_access.Arn}

aws.iam.PutRolePolicy{
  RoleName = role.RoleName,
  PolicyName = "read-shop-config",
  PolicyDocument = json.encode{
    Version = "2012-10-17",
    Statement = {{
      Effect = "Allow",
      Action = {"ssm:GetParameter", "secretsmanager:GetSecretValue", "kms:Decrypt"},
      Resource = "*",
    }},
  },
}

---------------------------------------------------------------------------------------------
-- KMS: one key encrypts the shop's secrets and parameters, another signs receipts.
---------------------------------------------------------------------------------------------
local data_key = aws.kms.CreateKey{
  Description = "Shop data: secrets and SecureString parameters",
  Tags = {{TagKey = "app", TagValue = "shop"}},
}.KeyMetadata
aws.kms.CreateAlias{AliasName = "alias/shop-data", TargetKeyId = data_key.KeyId}
aws.kms.EnableKeyRotation{KeyId = data_key.KeyId}

local receipts_key = aws.kms.CreateKey{
  Description = "Signs shop receipts",
  KeySpec = "ECC_NIST_P256",
  KeyUsage = "SIGN_VERIFY",
}.KeyMetadata
aws.kms.CreateAlias{AliasName = "alias/shop-receipts", TargetKeyId = receipts_key.KeyId}

---------------------------------------------------------------------------------------------
-- Configuration: SSM parameters (one SecureString) and Secrets Manager secrets.
---------------------------------------------------------------------------------------------
aws.ssm.PutParameter{Name = "/shop/config/currency", Type = "String", Value = "EUR"}
aws.ssm.PutParameter{Name = "/shop/config/shipping-countries", Type = "StringList", Value = "DE,FR,NL,IE"}
aws.ssm.PutParameter{
  Name = "/shop/config/payments-api-key",
  Type = "SecureString",
  Value = "pk_demo_51HxShop",
  KeyId = "alias/shop-data",
  Description = "Payment provider API key",
}

aws.secretsmanager.CreateSecret{
  Name = "shop/db/credentials",
  Description = "Orders database login",
  KmsKeyId = "alias/shop-data",
  SecretString = json.encode{username = "shop", password = "demo-only-password"},
}
aws.secretsmanager.CreateSecret{
  Name = "shop/payments/webhook-secret",
  KmsKeyId = "alias/shop-data",
  SecretString = "whsec_demo_7f3a9c",
}

---------------------------------------------------------------------------------------------
-- S3: the catalogue and product images, and a bucket for receipts.
---------------------------------------------------------------------------------------------
local products = {
  {sku = "mug-blue", name = "Blue mug", unitCents = 1250},
  {sku = "tee-logo", name = "Logo T-shirt", unitCents = 1999},
  {sku = "poster-a2", name = "A2 poster", unitCents = 900},
}

aws.s3.CreateBucket{Bucket = "shop-assets"}
aws.s3.PutObject{
  Bucket = "shop-assets",
  Key = "catalog/products.json",
  Body = json.encode(products),
  ContentType = "application/json",
}
for _, product in ipairs(products) do
  aws.s3.PutObject{
    Bucket = "shop-assets",
    Key = "images/" .. product.sku .. ".svg",
    Body = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><text y="32">'
      .. product.name .. "</text></svg>",
    ContentType = "image/svg+xml",
  }
end
aws.s3.CreateBucket{Bucket = "shop-receipts"}

---------------------------------------------------------------------------------------------
-- DynamoDB: orders, with a global secondary index to list a customer's orders by date.
---------------------------------------------------------------------------------------------
aws.dynamodb.CreateTable{
  TableName = "shop-orders",
  BillingMode = "PAY_PER_REQUEST",
  AttributeDefinitions = {
    {AttributeName = "orderId", AttributeType = "S"},
    {AttributeName = "customerId", AttributeType = "S"},
    {AttributeName = "createdAt", AttributeType = "S"},
  },
  KeySchema = {{AttributeName = "orderId", KeyType = "HASH"}},
  GlobalSecondaryIndexes = {{
    IndexName = "by-customer",
    KeySchema = {
      {AttributeName = "customerId", KeyType = "HASH"},
      {AttributeName = "createdAt", KeyType = "RANGE"},
    },
    Projection = {ProjectionType = "ALL"},
  }},
}

-- An order as a DynamoDB item.
local function order_item(order, status)
  local lines = {}
  for i, line in ipairs(order.lines) do
    lines[i] = {M = {sku = {S = line.sku}, quantity = {N = line.quantity}, unitCents = {N = line.unitCents}}}
  end
  return {
    orderId = {S = order.orderId},
    customerId = {S = order.customerId},
    createdAt = {S = order.createdAt},
    status = {S = status},
    lines = {L = lines},
  }
end

aws.dynamodb.PutItem{TableName = "shop-orders", Item = order_item({
  orderId = "o-1001", customerId = "alice", createdAt = "2026-11-28T09:12:00Z",
  lines = {{sku = "poster-a2", quantity = 3, unitCents = 900}},
}, "DELIVERED")}
aws.dynamodb.PutItem{TableName = "shop-orders", Item = order_item({
  orderId = "o-1002", customerId = "bob", createdAt = "2026-11-30T17:40:00Z",
  lines = {{sku = "tee-logo", quantity = 1, unitCents = 1999}},
}, "SHIPPED")}

---------------------------------------------------------------------------------------------
-- SQS: customer notifications (with a dead-letter queue), fulfilment in order (FIFO), and
-- the events of the receipts bucket.
---------------------------------------------------------------------------------------------
local function queue_arn(url)
  return aws.sqs.GetQueueAttributes{QueueUrl = url, AttributeNames = {"QueueArn"}}.Attributes.QueueArn
end

local notifications_dlq = aws.sqs.CreateQueue{QueueName = "shop-notifications-dlq"}.QueueUrl
local notifications = aws.sqs.CreateQueue{
  QueueName = "shop-notifications",
  Attributes = {
    VisibilityTimeout = "30",
    RedrivePolicy = json.encode{deadLetterTargetArn = queue_arn(notifications_dlq), maxReceiveCount = 3},
  },
}.QueueUrl
local fulfilment = aws.sqs.CreateQueue{
  QueueName = "shop-fulfilment.fifo",
  Attributes = {FifoQueue = "true", ContentBasedDeduplication = "true"},
}.QueueUrl
local receipt_events = aws.sqs.CreateQueue{QueueName = "shop-receipt-events"}.QueueUrl

aws.s3.PutBucketNotificationConfiguration{
  Bucket = "shop-receipts",
  NotificationConfiguration = {
    QueueConfigurations = {{
      Id = "receipt-created",
      QueueArn = queue_arn(receipt_events),
      Events = {"s3:ObjectCreated:*"},
      Filter = {Key = {FilterRules = {{Name = "prefix", Value = "receipts/"}}}},
    }},
  },
}

---------------------------------------------------------------------------------------------
-- Lambda: the order processor (functions/orders.py), logging to CloudWatch Logs.
---------------------------------------------------------------------------------------------
local processor = aws.lambda.CreateFunction{
  FunctionName = "shop-order-processor",
  Description = "Prices orders and tells customers about confirmed ones",
  Runtime = "python3.12",
  Handler = "orders.handler",
  Role = role.Arn,
  Code = {ZipFile = roto.zip{["orders.py"] = roto.read_file("functions/orders.py")}},
  Environment = {Variables = {SHOP_CURRENCY = "EUR"}},
  Timeout = 10,
  Tags = {app = "shop"},
}

---------------------------------------------------------------------------------------------
-- SNS: order events fan out to the notifications queue and, for confirmed orders, to the
-- order processor.
---------------------------------------------------------------------------------------------
local topic = aws.sns.CreateTopic{Name = "shop-order-events"}.TopicArn
aws.sns.Subscribe{TopicArn = topic, Protocol = "sqs", Endpoint = queue_arn(notifications)}
aws.sns.Subscribe{
  TopicArn = topic,
  Protocol = "lambda",
  Endpoint = processor.FunctionArn,
  Attributes = {FilterPolicy = json.encode{status = {"CONFIRMED"}}},
}
aws.lambda.AddPermission{
  FunctionName = processor.FunctionName,
  StatementId = "shop-order-events",
  Action = "lambda:InvokeFunction",
  Principal = "sns.amazonaws.com",
  SourceArn = topic,
}

---------------------------------------------------------------------------------------------
-- CloudWatch Logs: the web front end's access log, and a group for the shop's events.
---------------------------------------------------------------------------------------------
aws.logs.CreateLogGroup{logGroupName = "/shop/web", tags = {app = "shop"}}
aws.logs.PutRetentionPolicy{logGroupName = "/shop/web", retentionInDays = 14}
aws.logs.CreateLogStream{logGroupName = "/shop/web", logStreamName = "web-1"}
local now_ms = os.time() * 1000
aws.logs.PutLogEvents{
  logGroupName = "/shop/web",
  logStreamName = "web-1",
  logEvents = {
    {timestamp = now_ms - 3000, message = "GET /products 200 12ms"},
    {timestamp = now_ms - 2000, message = "GET /products/mug-blue 200 4ms"},
    {timestamp = now_ms - 1000, message = "POST /orders 201 31ms"},
  },
}
aws.logs.CreateLogGroup{logGroupName = "/aws/events/shop"}

---------------------------------------------------------------------------------------------
-- EventBridge: the shop's bus; placed orders go to fulfilment, every shop event to Logs.
---------------------------------------------------------------------------------------------
aws.events.CreateEventBus{Name = "shop"}
aws.events.PutRule{
  Name = "order-placed",
  EventBusName = "shop",
  Description = "Placed orders go to fulfilment, in order",
  EventPattern = json.encode{source = {"shop.orders"}, ["detail-type"] = {"OrderPlaced"}},
}
aws.events.PutTargets{
  Rule = "order-placed",
  EventBusName = "shop",
  Targets = {{Id = "fulfilment", Arn = queue_arn(fulfilment), SqsParameters = {MessageGroupId = "orders"}}},
}
aws.events.PutRule{
  Name = "audit-log",
  EventBusName = "shop",
  Description = "Every shop event, kept in CloudWatch Logs",
  EventPattern = json.encode{source = {{prefix = "shop."}}},
}
aws.events.PutTargets{
  Rule = "audit-log",
  EventBusName = "shop",
  Targets = {{
    Id = "audit-log-group",
    Arn = aws.logs.DescribeLogGroups{logGroupNamePrefix = "/aws/events/shop"}.logGroups[1].logGroupArn,
  }},
}

---------------------------------------------------------------------------------------------
-- The story: alice orders two blue mugs and a T-shirt.
---------------------------------------------------------------------------------------------
local order = {
  orderId = "o-1003",
  customerId = "alice",
  createdAt = "2026-12-02T10:05:00Z",
  lines = {
    {sku = "mug-blue", quantity = 2, unitCents = 1250},
    {sku = "tee-logo", quantity = 1, unitCents = 1999},
  },
}

-- 1. The shop stores the order and announces it on its bus (-> fulfilment queue, audit log).
aws.dynamodb.PutItem{TableName = "shop-orders", Item = order_item(order, "PLACED")}
aws.events.PutEvents{Entries = {{
  EventBusName = "shop",
  Source = "shop.orders",
  DetailType = "OrderPlaced",
  Detail = json.encode(order),
}}}

-- 2. The order processor prices it; its answer is recorded on the order.
local priced = json.decode(aws.lambda.Invoke{
  FunctionName = "shop-order-processor",
  Payload = json.encode(order),
}.Payload)
aws.dynamodb.UpdateItem{
  TableName = "shop-orders",
  Key = {orderId = {S = order.orderId}},
  UpdateExpression = "SET #status = :status, #total = :total",
  ExpressionAttributeNames = {["#status"] = "status", ["#total"] = "total"},
  ExpressionAttributeValues = {[":status"] = {S = priced.status}, [":total"] = {N = priced.total}},
}

-- 3. The confirmation goes out on the topic (-> notifications queue, and the processor,
--    which "emails" alice).
aws.sns.Publish{
  TopicArn = topic,
  Subject = "Order " .. order.orderId .. " confirmed",
  Message = json.encode{orderId = order.orderId, customerId = order.customerId, status = priced.status},
  MessageAttributes = {
    orderId = {DataType = "String", StringValue = order.orderId},
    customerId = {DataType = "String", StringValue = order.customerId},
    status = {DataType = "String", StringValue = priced.status},
  },
}

-- 4. The receipt and its signature land in S3 (receipts/ -> receipt events queue).
local receipt = string.format("Receipt %s\nCustomer: %s\nTotal: %s %s\n",
  order.orderId, order.customerId, priced.total, priced.currency)
local signature = aws.kms.Sign{
  KeyId = "alias/shop-receipts",
  Message = receipt,
  SigningAlgorithm = "ECDSA_SHA_256",
}.Signature
aws.s3.PutObject{
  Bucket = "shop-receipts",
  Key = "signatures/" .. order.orderId .. ".sig",
  Body = signature,
  Metadata = {["signing-key"] = "alias/shop-receipts"},
}
aws.s3.PutObject{
  Bucket = "shop-receipts",
  Key = "receipts/" .. order.orderId .. ".txt",
  Body = receipt,
  ContentType = "text/plain",
}

-- Deliveries run in the background; wait for them, so a server that answers has them all.
local function messages_in(url)
  local attributes = aws.sqs.GetQueueAttributes{
    QueueUrl = url,
    AttributeNames = {"ApproximateNumberOfMessages"},
  }.Attributes
  return tonumber(attributes.ApproximateNumberOfMessages)
end
local function logged(group, pattern)
  return #aws.logs.FilterLogEvents{logGroupName = group, filterPattern = pattern}.events > 0
end
roto.wait_for(function()
  return messages_in(fulfilment) == 1
    and messages_in(notifications) == 1
    and messages_in(receipt_events) == 2 -- s3:TestEvent on configuration, then the receipt
    and logged("/aws/events/shop", '"OrderPlaced"')
    and logged("/aws/lambda/shop-order-processor", '"emailing alice"')
end)
roto.log("the demo shop is open: order", order.orderId, priced.status, priced.total, priced.currency)
