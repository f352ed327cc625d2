//! JSONata for Step Functions (work in progress).
