//! JSONata 2.x over `serde_json::Value`, as Step Functions evaluates it (`{% expr %}` in a
//! state's Arguments, Output, Assign, Condition...). The crate knows nothing of Roto.
//!
//! ```
//! use roto_jsonata::{Environment, Expression};
//! use serde_json::json;
//!
//! let expr = Expression::parse("$sum(items.price) * $rate").unwrap();
//! let mut env = Environment::with_step_functions();
//! env.bind("rate", json!(2));
//! let input = json!({"items": [{"price": 1}, {"price": 2.5}]});
//! assert_eq!(expr.evaluate(&input, &env).unwrap(), Some(json!(7)));
//! ```
//!
//! Evaluation is bounded: parse nesting, evaluation depth (U1001) and the number of
//! evaluation steps (D1012) are all limited, so a hostile expression ends with an error.
//! Errors carry JSONata's codes and messages ([`Error`]). `None` is JSONata's undefined.

mod ast;
mod datetime;
mod error;
mod eval;
mod format;
mod functions;
mod lexer;
mod parser;
mod process;
mod regex;
mod signature;
pub mod stepfunctions;
mod value;
mod words;

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;

pub use error::Error;

use eval::{Evaluator, Fun};
use signature::Signature;
use value::{from_json, to_json, Arr, V};

/// A caller's native function: it receives the arguments as JSON (undefined as `null`).
pub type NativeImpl = dyn Fn(&[Value]) -> Result<Option<Value>, Error> + Send + Sync;

/// A native function bound into an [`Environment`].
pub(crate) struct NativeFn {
    name: String,
    signature: Result<Signature, Error>,
    pub(crate) arity: usize,
    f: Box<NativeImpl>,
}

impl NativeFn {
    fn call(&self, args: &[Option<V>], input: Option<&V>) -> Result<Option<V>, Error> {
        let signature = self.signature.as_ref().map_err(Clone::clone)?;
        let args = signature
            .validate(args, input)
            .map_err(|e| e.token(self.name.clone()))?;
        let mut json = Vec::with_capacity(args.len());
        for arg in &args {
            json.push(match arg {
                Some(v) => to_json(v, 0)?.unwrap_or(Value::Null),
                None => Value::Null,
            });
        }
        Ok((self.f)(&json)?.as_ref().map(from_json))
    }
}

/// A parsed expression, ready to evaluate any number of times.
#[derive(Debug)]
pub struct Expression {
    root: ast::Node,
}

/// Variables and functions an evaluation sees besides the built-ins.
#[derive(Clone, Default)]
pub struct Environment {
    vars: BTreeMap<String, Value>,
    natives: BTreeMap<String, Arc<NativeFn>>,
    step_functions: bool,
}

impl Expression {
    /// Parses JSONata text; syntax errors carry codes `S0101`...`S0500`.
    pub fn parse(text: &str) -> Result<Expression, Error> {
        let raw = parser::parse(text)?;
        let root = process::process(raw)?;
        Ok(Expression { root })
    }

    pub(crate) fn root(&self) -> &ast::Node {
        &self.root
    }

    /// Evaluates against `input`; `Ok(None)` is JSONata's undefined.
    pub fn evaluate(&self, input: &Value, env: &Environment) -> Result<Option<Value>, Error> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_millis() as f64);
        let mut ev = Evaluator::new(now, env.step_functions);
        let result = self.run(&mut ev, input, env);
        ev.release();
        result
    }

    fn run(
        &self,
        ev: &mut Evaluator,
        input: &Value,
        env: &Environment,
    ) -> Result<Option<Value>, Error> {
        let root = ev.frame(None);
        for (name, value) in &env.vars {
            Evaluator::bind(&root, name, Some(from_json(value)));
        }
        for (name, native) in &env.natives {
            Evaluator::bind(
                &root,
                name,
                Some(V::Fun(Rc::new(Fun::Native(native.clone())))),
            );
        }
        let input = from_json(input);
        Evaluator::bind(&root, "$", Some(input.clone()));
        let input = match input {
            V::Arr(_) => V::Arr(Rc::new(Arr {
                items: vec![input],
                seq: true,
                outer: true,
                ..Arr::default()
            })),
            other => other,
        };
        let result = ev.eval(&self.root, Some(&input), &root)?;
        match result {
            Some(v) => to_json(&v, 0),
            None => Ok(None),
        }
    }
}

impl Environment {
    /// An environment with JSONata's built-ins only.
    pub fn new() -> Environment {
        Environment::default()
    }

    /// An environment with Step Functions' functions too ([`stepfunctions`]).
    pub fn with_step_functions() -> Environment {
        Environment {
            step_functions: true,
            ..Environment::default()
        }
    }

    /// Binds `$name` (without the `$`) to a value.
    pub fn bind(&mut self, name: &str, value: Value) {
        self.vars.insert(name.to_string(), value);
    }

    /// Binds `$name` to a native function with a JSONata signature such as `<n-n:n>`; a
    /// signature that does not parse makes every call fail with its error.
    pub fn bind_function(&mut self, name: &str, signature: &str, f: Box<NativeImpl>) {
        let signature = Signature::parse(signature);
        let arity = signature.as_ref().map_or(0, Signature::arity);
        let native = NativeFn {
            name: name.to_string(),
            signature,
            arity,
            f,
        };
        self.natives.insert(name.to_string(), Arc::new(native));
    }
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("vars", &self.vars)
            .field("functions", &self.natives.keys().collect::<Vec<_>>())
            .field("step_functions", &self.step_functions)
            .finish()
    }
}
