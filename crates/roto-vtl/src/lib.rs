//! Velocity templates for API Gateway mapping templates (work in progress).
