//! IAM's wildcard matching (`*` any run, `?` one character), which IAM's policy evaluator
//! and API Gateway's authorizer policies both apply to actions and resource ARNs: one
//! iterative matcher with backtracking, linear in memory whatever the pattern.

/// `*` and `?` wildcards over `text`, optionally ignoring case.
pub fn glob(pattern: &str, text: &str, ignore_case: bool) -> bool {
    let fold = |s: &str| -> Vec<char> {
        match ignore_case {
            true => s.to_lowercase().chars().collect(),
            false => s.chars().collect(),
        }
    };
    let (p, t) = (fold(pattern), fold(text));
    let (mut pi, mut ti) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                backtrack = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match backtrack {
                Some((star, at)) => {
                    pi = star + 1;
                    ti = at + 1;
                    backtrack = Some((star, at + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_backtrack() {
        assert!(glob("a*b*c", "axxbyyc", false));
        assert!(!glob("a*b*c", "axxbyy", false));
        assert!(glob("s3:*", "s3:GetObject", true));
        assert!(glob("?3:Get*", "s3:GetObject", false));
    }
}
