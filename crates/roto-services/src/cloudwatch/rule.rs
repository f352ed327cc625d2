//! The rule language of composite alarms: `ALARM(name)`, `OK(name)` and
//! `INSUFFICIENT_DATA(name)` (a name or an alarm ARN, bare or in double quotes), `TRUE`,
//! `FALSE`, `NOT`, `AND`, `OR` and parentheses, NOT binding tighter than AND, and AND
//! tighter than OR. Rules are at most 10,240 characters with at most 100 alarm functions,
//! as AWS limits them, and nest at most 64 deep, so parsing never recurses without a bound.

/// The longest rule AWS takes.
const MAX_LEN: usize = 10_240;
/// The most alarm functions in one rule.
const MAX_FUNCTIONS: usize = 100;
/// The deepest nesting the parser follows.
const MAX_DEPTH: usize = 64;

/// A parsed rule.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Rule {
    Const(bool),
    /// The alarm (name or ARN, as written) is in the state.
    State(&'static str, String),
    Not(Box<Rule>),
    And(Box<Rule>, Box<Rule>),
    Or(Box<Rule>, Box<Rule>),
}

impl Rule {
    /// Whether the rule holds, given each alarm's state (None: no such alarm).
    pub fn holds(&self, state_of: &dyn Fn(&str) -> Option<String>) -> bool {
        match self {
            Rule::Const(b) => *b,
            Rule::State(state, alarm) => state_of(alarm).as_deref() == Some(*state),
            Rule::Not(r) => !r.holds(state_of),
            Rule::And(a, b) => a.holds(state_of) && b.holds(state_of),
            Rule::Or(a, b) => a.holds(state_of) || b.holds(state_of),
        }
    }

    /// The alarms the rule names, as written, in order.
    pub fn alarms(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(r) = stack.pop() {
            match r {
                Rule::Const(_) => {}
                Rule::State(_, a) => out.push(a.as_str()),
                Rule::Not(r) => stack.push(r),
                Rule::And(a, b) | Rule::Or(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
            }
        }
        out
    }
}

/// Parses a rule; the error says what is wrong and where.
pub(super) fn parse(text: &str) -> Result<Rule, String> {
    if text.chars().count() > MAX_LEN {
        return Err(format!("the rule is longer than {MAX_LEN} characters"));
    }
    let mut p = Parser {
        text,
        pos: 0,
        functions: 0,
    };
    let rule = p.or(0)?;
    p.skip_space();
    if p.pos < text.len() {
        return Err(format!("unexpected text at character {}", p.pos + 1));
    }
    Ok(rule)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    functions: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn skip_space(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    /// Takes `word` if the text goes on with it as a whole word.
    fn keyword(&mut self, word: &str) -> bool {
        self.skip_space();
        let rest = self.rest();
        let whole = rest.starts_with(word)
            && !rest[word.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if whole {
            self.pos += word.len();
        }
        whole
    }

    fn symbol(&mut self, c: char) -> bool {
        self.skip_space();
        if self.rest().starts_with(c) {
            self.pos += c.len_utf8();
            return true;
        }
        false
    }

    fn expected(&self, what: &str) -> String {
        format!("expected {what} at character {}", self.pos + 1)
    }

    fn or(&mut self, depth: usize) -> Result<Rule, String> {
        let mut left = self.and(depth)?;
        while self.keyword("OR") {
            left = Rule::Or(Box::new(left), Box::new(self.and(depth)?));
        }
        Ok(left)
    }

    fn and(&mut self, depth: usize) -> Result<Rule, String> {
        let mut left = self.unary(depth)?;
        while self.keyword("AND") {
            left = Rule::And(Box::new(left), Box::new(self.unary(depth)?));
        }
        Ok(left)
    }

    fn unary(&mut self, depth: usize) -> Result<Rule, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the rule nests deeper than {MAX_DEPTH}"));
        }
        if self.keyword("NOT") {
            return Ok(Rule::Not(Box::new(self.unary(depth + 1)?)));
        }
        if self.symbol('(') {
            let inner = self.or(depth + 1)?;
            if !self.symbol(')') {
                return Err(self.expected("')'"));
            }
            return Ok(inner);
        }
        if self.keyword("TRUE") {
            return Ok(Rule::Const(true));
        }
        if self.keyword("FALSE") {
            return Ok(Rule::Const(false));
        }
        for state in ["ALARM", "OK", "INSUFFICIENT_DATA"] {
            if self.keyword(state) {
                return self.function(state);
            }
        }
        Err(self.expected("ALARM, OK, INSUFFICIENT_DATA, TRUE, FALSE, NOT or '('"))
    }

    /// The `(name)` of an alarm function.
    fn function(&mut self, state: &'static str) -> Result<Rule, String> {
        self.functions += 1;
        if self.functions > MAX_FUNCTIONS {
            return Err(format!(
                "the rule has more than {MAX_FUNCTIONS} alarm functions"
            ));
        }
        if !self.symbol('(') {
            return Err(self.expected("'('"));
        }
        self.skip_space();
        let name = if self.rest().starts_with('"') {
            self.quoted()?
        } else {
            let end = self.rest().find(')').ok_or_else(|| self.expected("')'"))?;
            let name = self.rest()[..end].trim_end().to_string();
            self.pos += end;
            name
        };
        if name.is_empty() {
            return Err(self.expected("an alarm name"));
        }
        if !self.symbol(')') {
            return Err(self.expected("')'"));
        }
        Ok(Rule::State(state, name))
    }

    /// A double-quoted name, `\"` and `\\` escaped.
    fn quoted(&mut self) -> Result<String, String> {
        let mut out = String::new();
        let mut chars = self.rest().char_indices().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, e)) => out.push(e),
                    None => break,
                },
                c => out.push(c),
            }
        }
        Err("a quoted alarm name is not closed".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(name: &str) -> Option<String> {
        match name {
            "cpu" | "arn:aws:cloudwatch:us-east-1:000000000000:alarm:cpu" => Some("ALARM".into()),
            "disk \"x\"" => Some("OK".into()),
            "new" => Some("INSUFFICIENT_DATA".into()),
            _ => None,
        }
    }

    #[test]
    fn functions_operators_and_precedence() {
        let holds = |text: &str| parse(text).unwrap().holds(&states);
        assert!(holds("ALARM(cpu)"));
        assert!(holds("ALARM(\"cpu\") AND OK(\"disk \\\"x\\\"\")"));
        assert!(holds(
            "ALARM(arn:aws:cloudwatch:us-east-1:000000000000:alarm:cpu)"
        ));
        assert!(holds("INSUFFICIENT_DATA(new)"));
        assert!(!holds("NOT ALARM(cpu)"));
        assert!(holds("FALSE AND FALSE OR TRUE"));
        assert!(!holds("FALSE AND (FALSE OR TRUE)"));
        assert!(holds("NOT FALSE AND TRUE"));
        assert!(!holds("ALARM(missing)"));
        assert_eq!(
            parse("ALARM(a) OR (OK(b) AND NOT ALARM(c))")
                .unwrap()
                .alarms(),
            vec!["a", "b", "c"]
        );
    }

    #[test]
    fn bad_rules_are_refused_with_where() {
        assert_eq!(
            parse("ALARM(a) AND").unwrap_err(),
            "expected ALARM, OK, INSUFFICIENT_DATA, TRUE, FALSE, NOT or '(' at character 13"
        );
        assert!(parse("ALARM()").is_err());
        assert!(parse("ALARM(\"a)").is_err());
        assert!(parse("(TRUE").is_err());
        assert!(parse("TRUE TRUE").is_err());
        assert!(parse("ALARMS(a)").is_err());
        assert!(parse(&"(".repeat(100)).is_err());
        assert!(parse(&"NOT ".repeat(100)).is_err());
        let many = vec!["ALARM(a)"; 101].join(" OR ");
        assert!(parse(&many).is_err());
    }
}
