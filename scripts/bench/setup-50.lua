-- 50 resources across services, for the benchmark's --setup start-up measurement
-- (scripts/benchmark.py --modes ephemeral,seeded --setup scripts/bench/setup-50.lua).
for i = 1, 10 do
  aws.s3.CreateBucket{Bucket = "bench-bucket-" .. i}
  aws.s3.PutObject{Bucket = "bench-bucket-" .. i, Key = "seed.txt", Body = "seed " .. i}
end
for i = 1, 10 do
  aws.sqs.CreateQueue{QueueName = "bench-queue-" .. i, Attributes = {VisibilityTimeout = "30"}}
end
for i = 1, 5 do
  aws.dynamodb.CreateTable{
    TableName = "bench-table-" .. i,
    AttributeDefinitions = {{AttributeName = "id", AttributeType = "S"}},
    KeySchema = {{AttributeName = "id", KeyType = "HASH"}},
    BillingMode = "PAY_PER_REQUEST",
  }
  aws.dynamodb.PutItem{TableName = "bench-table-" .. i, Item = {id = {S = "seed"}, n = {N = i}}}
end
for i = 1, 5 do
  aws.logs.CreateLogGroup{logGroupName = "/bench/group-" .. i}
  aws.iam.CreateUser{UserName = "bench-user-" .. i}
end
