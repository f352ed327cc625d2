# A configuration across Roto's services, applied by tests/test_terraform.py with the
# Terraform AWS provider the machine has installed (never fetched from a registry).
terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
  }
}

variable "lambda_zip" { type = string }

provider "aws" {
  region                      = "us-east-1"
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  skip_requesting_account_id  = true
  s3_use_path_style           = true
}

resource "aws_s3_bucket" "assets" { bucket = "tf-assets" }

resource "aws_s3_object" "readme" {
  bucket  = aws_s3_bucket.assets.id
  key     = "readme.txt"
  content = "hello"
}

resource "aws_dynamodb_table" "items" {
  name         = "tf-items"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"
  attribute {
    name = "pk"
    type = "S"
  }
}

resource "aws_sqs_queue" "jobs" { name = "tf-jobs" }

resource "aws_sns_topic" "alerts" { name = "tf-alerts" }

resource "aws_sns_topic_subscription" "alerts_to_jobs" {
  topic_arn = aws_sns_topic.alerts.arn
  protocol  = "sqs"
  endpoint  = aws_sqs_queue.jobs.arn
}

resource "aws_ssm_parameter" "stage" {
  name  = "/tf/stage"
  type  = "String"
  value = "test"
}

resource "aws_secretsmanager_secret" "token" { name = "tf-token" }

resource "aws_secretsmanager_secret_version" "token" {
  secret_id     = aws_secretsmanager_secret.token.id
  secret_string = "s3cret"
}

resource "aws_kms_key" "data" { description = "tf data key" }

resource "aws_kms_alias" "data" {
  name          = "alias/tf-data"
  target_key_id = aws_kms_key.data.key_id
}

resource "aws_cloudwatch_log_group" "app" {
  name              = "/tf/app"
  retention_in_days = 7
}

resource "aws_iam_role" "fn" {
  name = "tf-fn"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "sts:AssumeRole", Principal = { Service = "lambda.amazonaws.com" } }]
  })
}

resource "aws_lambda_function" "worker" {
  function_name    = "tf-worker"
  role             = aws_iam_role.fn.arn
  runtime          = "python3.12"
  handler          = "index.handler"
  filename         = var.lambda_zip
  source_code_hash = filebase64sha256(var.lambda_zip)
  environment {
    variables = { TABLE = aws_dynamodb_table.items.name }
  }
}

resource "aws_lambda_event_source_mapping" "jobs" {
  event_source_arn = aws_sqs_queue.jobs.arn
  function_name    = aws_lambda_function.worker.arn
  batch_size       = 5
}

resource "aws_cloudwatch_event_rule" "nightly" {
  name                = "tf-nightly"
  schedule_expression = "rate(1 day)"
}

resource "aws_cloudwatch_event_target" "nightly" {
  rule = aws_cloudwatch_event_rule.nightly.name
  arn  = aws_lambda_function.worker.arn
}

output "function_arn" { value = aws_lambda_function.worker.arn }
output "queue_url" { value = aws_sqs_queue.jobs.url }
