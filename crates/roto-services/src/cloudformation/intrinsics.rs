//! The intrinsic functions: a template's values evaluated against its parameters,
//! pseudo parameters, mappings, conditions, the stack's resources and the account's exports.
//!
//! Evaluation recurses over a tree whose depth the template reader bounds, and carries a
//! depth counter too ([`MAX_DEPTH`]). `AWS::NoValue` evaluates to `None`, which removes the
//! property or list item that holds it.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value as Json};

use super::parameters::rule_function;
use super::template::scalar_text;

/// How deep evaluation may nest.
const MAX_DEPTH: usize = 128;

/// What a resource offers to `Ref` and `Fn::GetAtt`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Resolved {
    /// What `Ref` gives.
    pub reference: String,
    /// What `Fn::GetAtt` gives, by attribute name.
    pub attributes: Map<String, Json>,
}

/// The stack's facts that pseudo parameters name.
#[derive(Debug, Clone)]
pub(crate) struct Pseudo {
    pub account: String,
    pub region: String,
    pub stack_name: String,
    pub stack_id: String,
    pub notification_arns: Vec<String>,
}

/// Everything values are evaluated against.
pub(crate) struct Scope<'a> {
    pub pseudo: &'a Pseudo,
    pub parameters: &'a BTreeMap<String, Json>,
    pub mappings: &'a Map<String, Json>,
    pub conditions: &'a BTreeMap<String, bool>,
    pub resources: &'a BTreeMap<String, Resolved>,
    pub exports: &'a BTreeMap<String, String>,
}

type Eval = Result<Option<Json>, String>;

impl Scope<'_> {
    /// A value with its intrinsic functions evaluated (`None` for `AWS::NoValue`).
    pub(crate) fn eval(&self, value: &Json) -> Eval {
        self.eval_at(value, 0)
    }

    /// A value that must not be `AWS::NoValue`.
    pub(crate) fn value(&self, value: &Json, depth: usize) -> Result<Json, String> {
        Ok(self.eval_at(value, depth)?.unwrap_or(Json::Null))
    }

    fn eval_at(&self, value: &Json, depth: usize) -> Eval {
        if depth > MAX_DEPTH {
            return Err("Template error: the template nests too deeply".into());
        }
        match value {
            Json::Object(map) if map.len() == 1 => {
                let (name, arg) = map.iter().next().expect("one entry");
                if let Some(result) = self.function(name, arg, depth + 1) {
                    return result;
                }
                self.object(map, depth)
            }
            Json::Object(map) => self.object(map, depth),
            Json::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    if let Some(v) = self.eval_at(item, depth + 1)? {
                        out.push(v);
                    }
                }
                Ok(Some(Json::Array(out)))
            }
            other => Ok(Some(other.clone())),
        }
    }

    fn object(&self, map: &Map<String, Json>, depth: usize) -> Eval {
        let mut out = Map::new();
        for (k, v) in map {
            if let Some(v) = self.eval_at(v, depth + 1)? {
                out.insert(k.clone(), v);
            }
        }
        Ok(Some(Json::Object(out)))
    }

    /// An intrinsic function's value, or `None` when `name` names none.
    fn function(&self, name: &str, arg: &Json, depth: usize) -> Option<Eval> {
        let some = |r: Result<Json, String>| Some(r.map(Some));
        match name {
            "Ref" => Some(self.reference(arg)),
            "Fn::GetAtt" => some(self.get_att(arg, depth)),
            "Fn::Sub" => some(self.sub(arg, depth).map(Json::String)),
            "Fn::Join" => some(self.join(arg, depth)),
            "Fn::Select" => some(self.select(arg, depth)),
            "Fn::Split" => some(self.split(arg, depth)),
            "Fn::If" => Some(self.fn_if(arg, depth)),
            "Fn::Equals" | "Fn::And" | "Fn::Or" | "Fn::Not" | "Condition" => {
                some(self.condition(name, arg, depth).map(Json::Bool))
            }
            "Fn::FindInMap" => some(self.find_in_map(arg, depth)),
            "Fn::GetAZs" => some(Ok(self.azs())),
            "Fn::ImportValue" => some(self.import(arg, depth)),
            "Fn::Base64" => some(
                self.string(arg, depth)
                    .map(|s| Json::String(base64::engine::general_purpose::STANDARD.encode(s))),
            ),
            "Fn::Cidr" => some(self.cidr(arg, depth)),
            "Fn::Length" => some(self.length(arg, depth)),
            "Fn::ToJsonString" => some(self.value(arg, depth).map(|v| Json::String(v.to_string()))),
            "Fn::Contains" | "Fn::EachMemberEquals" | "Fn::EachMemberIn" => {
                some(self.rule(name, arg, depth))
            }
            _ => None,
        }
    }

    fn rule(&self, name: &str, arg: &Json, depth: usize) -> Result<Json, String> {
        let Json::Array(args) = self.value(arg, depth)? else {
            return Err(format!(
                "Template error: {name} requires a list of two values"
            ));
        };
        rule_function(name, &args)
            .unwrap_or_else(|| Err(format!("Template error: unknown function {name}")))
            .map(Json::Bool)
    }

    fn reference(&self, arg: &Json) -> Eval {
        let name = arg.as_str().ok_or("Template error: Ref takes a string")?;
        let p = self.pseudo;
        Ok(Some(match name {
            "AWS::NoValue" => return Ok(None),
            "AWS::AccountId" => Json::String(p.account.clone()),
            "AWS::Region" => Json::String(p.region.clone()),
            "AWS::StackName" => Json::String(p.stack_name.clone()),
            "AWS::StackId" => Json::String(p.stack_id.clone()),
            "AWS::Partition" => Json::String("aws".into()),
            "AWS::URLSuffix" => Json::String("amazonaws.com".into()),
            "AWS::NotificationARNs" => Json::Array(
                p.notification_arns
                    .iter()
                    .cloned()
                    .map(Json::String)
                    .collect(),
            ),
            _ => {
                if let Some(v) = self.parameters.get(name) {
                    v.clone()
                } else if let Some(r) = self.resources.get(name) {
                    Json::String(r.reference.clone())
                } else {
                    return Err(format!(
                        "Template format error: Unresolved resource dependencies [{name}] in the Resources block of the template"
                    ));
                }
            }
        }))
    }

    fn get_att(&self, arg: &Json, depth: usize) -> Result<Json, String> {
        let (resource, attribute) = match self.value(arg, depth)? {
            Json::Array(items) if items.len() == 2 => {
                (scalar_text(&items[0]), scalar_text(&items[1]))
            }
            Json::String(s) => match s.split_once('.') {
                Some((r, a)) => (r.to_string(), a.to_string()),
                None => return Err("Template error: invalid Fn::GetAtt".into()),
            },
            _ => {
                return Err(
                    "Template error: every Fn::GetAtt object requires two non-empty parameters"
                        .into(),
                )
            }
        };
        self.attribute(&resource, &attribute)
    }

    fn attribute(&self, resource: &str, attribute: &str) -> Result<Json, String> {
        let r = self.resources.get(resource).ok_or_else(|| {
            format!(
                "Template error: instance of Fn::GetAtt references undefined resource {resource}"
            )
        })?;
        r.attributes.get(attribute).cloned().ok_or_else(|| {
            format!("Template error: resource {resource} does not support attribute type {attribute} in Fn::GetAtt")
        })
    }

    fn string(&self, arg: &Json, depth: usize) -> Result<String, String> {
        Ok(scalar_text(&self.value(arg, depth)?))
    }

    fn sub(&self, arg: &Json, depth: usize) -> Result<String, String> {
        let (text, vars) = match arg {
            Json::String(s) => (s.clone(), Map::new()),
            Json::Array(items) if items.len() == 2 => {
                let text = items[0]
                    .as_str()
                    .ok_or("Template error: Fn::Sub's first element must be a string")?;
                let mut vars = Map::new();
                for (k, v) in items[1]
                    .as_object()
                    .ok_or("Template error: Fn::Sub's variables must be an object")?
                {
                    vars.insert(k.clone(), self.value(v, depth + 1)?);
                }
                (text.to_string(), vars)
            }
            _ => return Err("Template error: Fn::Sub takes a string or a list of two".into()),
        };
        substitute(&text, |name| {
            if let Some(v) = vars.get(name) {
                return Ok(scalar_text(v));
            }
            match name.split_once('.') {
                Some((r, a))
                    if !self.parameters.contains_key(name) && self.resources.contains_key(r) =>
                {
                    self.attribute(r, a).map(|v| scalar_text(&v))
                }
                _ => Ok(scalar_text(
                    &self
                        .reference(&Json::String(name.to_string()))?
                        .unwrap_or_default(),
                )),
            }
        })
    }

    fn join(&self, arg: &Json, depth: usize) -> Result<Json, String> {
        let Json::Array(args) = self.value(arg, depth)? else {
            return Err("Template error: Fn::Join takes a delimiter and a list".into());
        };
        match args.as_slice() {
            [Json::String(delimiter), Json::Array(items)] => Ok(Json::String(
                items
                    .iter()
                    .map(scalar_text)
                    .collect::<Vec<_>>()
                    .join(delimiter),
            )),
            _ => Err("Template error: every Fn::Join object requires two parameters, (1) a string delimiter and (2) a list of strings to be joined or a function that returns a list of strings (such as Fn::GetAZs) to be joined.".into()),
        }
    }

    fn select(&self, arg: &Json, depth: usize) -> Result<Json, String> {
        let Json::Array(args) = self.value(arg, depth)? else {
            return Err("Template error: Fn::Select requires a list argument with two elements: an integer index and a list".into());
        };
        let (index, list) = match args.as_slice() {
            [index, Json::Array(list)] => (scalar_text(index), list.clone()),
            [index, Json::String(s)] => (
                scalar_text(index),
                s.split(',').map(|p| Json::String(p.to_string())).collect(),
            ),
            _ => return Err("Template error: Fn::Select requires a list argument with two elements: an integer index and a list".into()),
        };
        let i: usize = index
            .parse()
            .map_err(|_| "Template error: Fn::Select requires a list argument with two elements: an integer index and a list".to_string())?;
        list.get(i).cloned().ok_or_else(|| {
            "Template error: Fn::Select cannot select nonexistent value at index ".to_string()
                + &i.to_string()
        })
    }

    fn split(&self, arg: &Json, depth: usize) -> Result<Json, String> {
        let Json::Array(args) = self.value(arg, depth)? else {
            return Err("Template error: every Fn::Split object requires two parameters, (1) a string delimiter and (2) a string to be split or a function that returns a string to be split.".into());
        };
        match args.as_slice() {
            [Json::String(d), Json::String(s)] if !d.is_empty() => Ok(Json::Array(
                s.split(d.as_str()).map(|p| Json::String(p.to_string())).collect(),
            )),
            _ => Err("Template error: every Fn::Split object requires two parameters, (1) a string delimiter and (2) a string to be split or a function that returns a string to be split.".into()),
        }
    }

    fn fn_if(&self, arg: &Json, depth: usize) -> Eval {
        let items = arg
            .as_array()
            .filter(|a| a.len() == 3)
            .ok_or("Template error: Fn::If requires a list argument with three elements")?;
        let name = items[0]
            .as_str()
            .ok_or("Template error: Fn::If requires a condition name")?;
        let chosen = if self.named_condition(name)? {
            &items[1]
        } else {
            &items[2]
        };
        self.eval_at(chosen, depth + 1)
    }

    fn named_condition(&self, name: &str) -> Result<bool, String> {
        self.conditions.get(name).copied().ok_or_else(|| {
            format!("Template error: unresolved condition dependency {name} in Fn::If")
        })
    }

    /// A condition function's value (Rules' assertions use these too).
    pub(crate) fn condition(&self, name: &str, arg: &Json, depth: usize) -> Result<bool, String> {
        let list = || {
            arg.as_array()
                .ok_or_else(|| format!("Template error: {name} requires a list argument"))
        };
        match name {
            "Condition" => self.named_condition(arg.as_str().unwrap_or_default()),
            "Fn::Equals" => match list()?.as_slice() {
                [a, b] => Ok(equal_values(&self.value(a, depth)?, &self.value(b, depth)?)),
                _ => Err("Template error: Fn::Equals requires a list of two values".into()),
            },
            "Fn::Not" => match list()?.as_slice() {
                [a] => Ok(!self.truth(a, depth)?),
                _ => Err("Template error: Fn::Not requires a list of one condition".into()),
            },
            "Fn::And" => {
                let mut all = true;
                for c in list()? {
                    all &= self.truth(c, depth)?;
                }
                Ok(all)
            }
            _ => {
                let mut any = false;
                for c in list()? {
                    any |= self.truth(c, depth)?;
                }
                Ok(any)
            }
        }
    }

    /// A condition's value, from a condition function, a `Condition` reference, or a
    /// boolean.
    pub(crate) fn truth(&self, value: &Json, depth: usize) -> Result<bool, String> {
        match self.value(value, depth + 1)? {
            Json::Bool(b) => Ok(b),
            Json::String(s) if s == "true" || s == "false" => Ok(s == "true"),
            _ => {
                Err("Template error: a condition must be a condition function or a boolean".into())
            }
        }
    }

    fn find_in_map(&self, arg: &Json, depth: usize) -> Result<Json, String> {
        let Json::Array(args) = self.value(arg, depth)? else {
            return Err("Template error: Fn::FindInMap requires a list of three values".into());
        };
        let (map, top, second) = match args.as_slice() {
            [m, t, s] | [m, t, s, _] => (scalar_text(m), scalar_text(t), scalar_text(s)),
            _ => {
                return Err("Template error: Fn::FindInMap requires a list of three values".into())
            }
        };
        let found = self
            .mappings
            .get(&map)
            .ok_or_else(|| {
                format!("Template error: Unable to get mapping for {map}::{top}::{second}")
            })?
            .get(&top)
            .and_then(|t| t.get(&second))
            .cloned();
        match (found, args.get(3)) {
            (Some(v), _) => Ok(v),
            (None, Some(default)) => Ok(default.get("DefaultValue").cloned().unwrap_or_default()),
            (None, None) => Err(format!(
                "Template error: Unable to get mapping for {map}::{top}::{second}"
            )),
        }
    }

    fn azs(&self) -> Json {
        Json::Array(
            ["a", "b", "c"]
                .iter()
                .map(|z| Json::String(format!("{}{z}", self.pseudo.region)))
                .collect(),
        )
    }

    fn import(&self, arg: &Json, depth: usize) -> Result<Json, String> {
        let name = self.string(arg, depth)?;
        self.exports
            .get(&name)
            .map(|v| Json::String(v.clone()))
            .ok_or_else(|| format!("No export named {name} found. Rollback requested by user."))
    }

    fn cidr(&self, arg: &Json, depth: usize) -> Result<Json, String> {
        let Json::Array(args) = self.value(arg, depth)? else {
            return Err("Template error: Fn::Cidr requires a list of three values".into());
        };
        let (block, count, bits) = match args.as_slice() {
            [b, c, s] => (scalar_text(b), scalar_text(c), scalar_text(s)),
            _ => return Err("Template error: Fn::Cidr requires a list of three values".into()),
        };
        cidr(&block, &count, &bits)
            .map(|nets| Json::Array(nets.into_iter().map(Json::String).collect()))
    }

    fn length(&self, arg: &Json, depth: usize) -> Result<Json, String> {
        match self.value(arg, depth)? {
            Json::Array(items) => Ok(Json::from(items.len())),
            _ => Err("Template error: Fn::Length requires a list".into()),
        }
    }
}

/// Fn::Equals compares values as strings, as CloudFormation does for parameters.
fn equal_values(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x == y,
        _ => scalar_text(a) == scalar_text(b),
    }
}

/// `${Name}` replaced through `lookup`; `${!Literal}` stays `${Literal}`.
pub(crate) fn substitute(
    text: &str,
    mut lookup: impl FnMut(&str) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        match name.strip_prefix('!') {
            Some(literal) => {
                out.push_str("${");
                out.push_str(literal);
                out.push('}');
            }
            None => out.push_str(&lookup(name.trim())?),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Fn::Cidr: `count` subnets of `bits` host bits each, carved in order from `block`.
fn cidr(block: &str, count: &str, bits: &str) -> Result<Vec<String>, String> {
    let invalid = || format!("Template error: invalid Fn::Cidr arguments {block}, {count}, {bits}");
    let (addr, prefix) = block.split_once('/').ok_or_else(invalid)?;
    let addr: std::net::Ipv4Addr = addr.parse().map_err(|_| invalid())?;
    let prefix: u32 = prefix.parse().map_err(|_| invalid())?;
    let count: u32 = count.parse().map_err(|_| invalid())?;
    let bits: u32 = bits.parse().map_err(|_| invalid())?;
    if prefix > 32 || bits == 0 || bits > 32 - prefix || !(1..=256).contains(&count) {
        return Err(invalid());
    }
    let size = 1u64 << bits;
    let base = u64::from(u32::from(addr)) & !((1u64 << (32 - prefix)) - 1);
    if u64::from(count) * size > 1u64 << (32 - prefix) {
        return Err(invalid());
    }
    Ok((0..u64::from(count))
        .map(|i| {
            let net = u32::try_from(base + i * size).unwrap_or_default();
            format!("{}/{}", std::net::Ipv4Addr::from(net), 32 - bits)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_scope(f: impl FnOnce(&Scope<'_>)) {
        let pseudo = Pseudo {
            account: "000000000000".into(),
            region: "us-east-1".into(),
            stack_name: "s".into(),
            stack_id: "id".into(),
            notification_arns: Vec::new(),
        };
        let parameters = BTreeMap::from([("Env".to_string(), json!("prod"))]);
        let mappings = json!({"M": {"prod": {"Size": "10"}}});
        let conditions = BTreeMap::from([("IsProd".to_string(), true)]);
        let mut attributes = Map::new();
        attributes.insert("Arn".into(), json!("arn:q"));
        let resources = BTreeMap::from([(
            "Q".to_string(),
            Resolved {
                reference: "url".into(),
                attributes,
            },
        )]);
        let exports = BTreeMap::from([("E".to_string(), "exported".to_string())]);
        f(&Scope {
            pseudo: &pseudo,
            parameters: &parameters,
            mappings: mappings.as_object().unwrap(),
            conditions: &conditions,
            resources: &resources,
            exports: &exports,
        });
    }

    #[test]
    fn functions_evaluate_as_cloudformation_documents() {
        with_scope(|s| {
            let v = s
                .eval(&json!({
                    "a": {"Fn::Sub": "${AWS::StackName}-${Env}-${Q.Arn}-${!Lit}"},
                    "b": {"Fn::Join": ["-", ["x", {"Ref": "Q"}]]},
                    "c": {"Fn::Select": [1, {"Fn::Split": [",", "p,q,r"]}]},
                    "d": {"Fn::If": ["IsProd", {"Fn::FindInMap": ["M", {"Ref": "Env"}, "Size"]}, "no"]},
                    "e": {"Fn::If": ["IsProd", {"Ref": "AWS::NoValue"}, "x"]},
                    "f": {"Fn::Sub": ["${x}!", {"x": {"Fn::ImportValue": "E"}}]},
                    "g": {"Fn::Base64": "hi"},
                    "h": {"Fn::Cidr": ["10.0.0.0/16", 2, 8]},
                    "i": {"Fn::Length": [1, 2, 3]},
                    "j": {"Fn::ToJsonString": {"k": [1]}},
                    "k": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
                }))
                .unwrap()
                .unwrap();
            assert_eq!(
                v,
                json!({
                    "a": "s-prod-arn:q-${Lit}", "b": "x-url", "c": "q", "d": "10",
                    "f": "exported!", "g": "aGk=", "h": ["10.0.0.0/24", "10.0.1.0/24"],
                    "i": 3, "j": "{\"k\":[1]}", "k": true
                })
            );
            assert!(s
                .eval(&json!({"Ref": "Nope"}))
                .unwrap_err()
                .contains("Unresolved"));
            assert!(s
                .eval(&json!({"Fn::GetAtt": ["Q", "Nope"]}))
                .unwrap_err()
                .contains("does not support attribute type Nope"));
        });
    }
}
