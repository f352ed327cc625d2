//! "Did you mean ...?" for misspelt services, operations and members.

/// The candidate nearest to `name` (ignoring case), if it is close enough to be a likely
/// typo: at most a third of the name's letters differ.
pub(crate) fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let wanted = name.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (distance(&wanted, &c.to_ascii_lowercase()), *c))
        .filter(|(d, _)| *d <= wanted.chars().count().div_ceil(3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The Levenshtein distance between two strings, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_suggests_the_candidate() {
        assert_eq!(
            closest("CreateQueu", &["CreateQueue", "DeleteQueue"]),
            Some("CreateQueue")
        );
        assert_eq!(
            closest("queuename", &["QueueName", "Attributes"]),
            Some("QueueName")
        );
    }

    #[test]
    fn an_unrelated_name_suggests_nothing() {
        assert_eq!(closest("Frobnicate", &["CreateQueue", "DeleteQueue"]), None);
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("same", "same"), 0);
    }
}
