//! Random identifiers in the forms AWS issues them: lowercase hex runs (SSM's `mw-`,
//! `pb-` and `oi-` ids) and UUIDs (window targets and tasks, association ids).

/// `len` random lowercase hex digits.
pub fn hex(len: usize) -> String {
    (0..len)
        .map(|_| char::from(b"0123456789abcdef"[fastrand::usize(..16)]))
        .collect()
}

/// A random version-4 UUID in its lowercase hyphenated form.
pub fn uuid() -> String {
    let h = hex(32);
    let variant = char::from(b"89ab"[fastrand::usize(..4)]);
    format!(
        "{}-{}-4{}-{}{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        variant,
        &h[17..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn uuids_have_the_version_and_variant_digits() {
        let id = super::uuid();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!("89ab".contains(&id[19..20]));
        assert!(super::hex(17).chars().all(|c| c.is_ascii_hexdigit()));
    }
}
