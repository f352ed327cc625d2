//! JSONPath for Step Functions paths and API Gateway mapping templates (work in progress).
