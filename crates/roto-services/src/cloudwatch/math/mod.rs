//! Metric math: the expressions of GetMetricData and of math-expression alarms.
//!
//! - [`parse`]: the grammar, bounded in length and depth (the text is request input).
//! - [`eval`]: values (scalars, series, arrays of series) and the functions over them.
//!
//! The expression never reads the store itself: what it needs from the request (other
//! queries, METRICS(), SEARCH() over the stored metrics, the period grid) comes through
//! [`eval::Inputs`], which `data.rs` implements.

pub(crate) mod eval;
pub(crate) mod parse;

pub(crate) use eval::{constant, eval, Fault, Inputs, Series, Val};
pub(crate) use parse::{parse, Expr};
