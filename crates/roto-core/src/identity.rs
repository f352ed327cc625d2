//! Access keys that carry their account.
//!
//! AWS access key ids encode the owning account: after the four-letter prefix (`AKIA` for
//! IAM users, `ASIA` for STS sessions) come ten base32 bytes whose first six hold the
//! account number in bits 7..47. Roto issues keys the same way, and adds a check value in
//! the last four bytes so that an arbitrary key a user makes up (`AKIAIOSFODNN7EXAMPLE`) is
//! not mistaken for one of ours: routing decodes the account from the key alone, with no
//! store lookup on the hot path.

use md5::{Digest, Md5};

const ALPHABET: base32::Alphabet = base32::Alphabet::Rfc4648 { padding: false };

fn check(head: &[u8]) -> [u8; 4] {
    let digest = Md5::new_with_prefix(b"roto-access-key")
        .chain_update(head)
        .finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// Issues an access key id (`prefix` is `AKIA` or `ASIA`) that routes to `account`.
pub fn issue_access_key_id(prefix: &str, account: &str) -> String {
    let account: u64 = account.parse().unwrap_or(0) & 0xff_ffff_ffff;
    let z = (account << 7) | fastrand::u64(..128);
    let mut bytes = [0u8; 10];
    bytes[..6].copy_from_slice(&z.to_be_bytes()[2..]);
    let c = check(&bytes[..6]);
    bytes[6..].copy_from_slice(&c);
    format!("{prefix}{}", base32::encode(ALPHABET, &bytes))
}

/// The account a key id routes to: a 12-digit key is that account; a key Roto issued is
/// its account's; anything else is `None` (the default account).
pub fn account_of_access_key(key: &str) -> Option<String> {
    if key.len() == 12 && key.bytes().all(|b| b.is_ascii_digit()) {
        return Some(key.to_string());
    }
    if key.len() != 20 || !(key.starts_with("AKIA") || key.starts_with("ASIA")) {
        return None;
    }
    let bytes = base32::decode(ALPHABET, &key[4..])?;
    if bytes.len() != 10 || bytes[6..] != check(&bytes[..6]) {
        return None;
    }
    let mut z = [0u8; 8];
    z[2..].copy_from_slice(&bytes[..6]);
    let account = (u64::from_be_bytes(z) & 0x7fff_ffff_ff80) >> 7;
    Some(format!("{account:012}"))
}

/// What an issued key's requests are checked against: its secret access key and, for a
/// session's key, the session token they must carry.
#[derive(Debug, Clone)]
pub struct Secret {
    /// The secret access key.
    pub key: String,
    /// The session's token (none for an IAM user's key).
    pub session_token: Option<String>,
}

/// A 40-character secret access key.
pub fn issue_secret_key() -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..40)
        .map(|_| CHARS[fastrand::usize(..CHARS.len())] as char)
        .collect()
}

/// A session token in the shape STS returns (long, base64 text).
pub fn issue_session_token() -> String {
    use base64::Engine;
    let bytes: Vec<u8> = (0..264).map(|_| fastrand::u8(..)).collect();
    format!(
        "FQoGZXIvYXdzE{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issued_keys_route_to_their_account() {
        for account in ["000000000000", "123456789012", "999999999999"] {
            let key = issue_access_key_id("ASIA", account);
            assert_eq!(key.len(), 20);
            assert!(key.starts_with("ASIA"));
            assert_eq!(account_of_access_key(&key).as_deref(), Some(account));
        }
    }

    #[test]
    fn made_up_keys_route_to_the_default_account() {
        assert_eq!(account_of_access_key("AKIAIOSFODNN7EXAMPLE"), None);
        assert_eq!(account_of_access_key("test"), None);
        assert_eq!(account_of_access_key("ASIA!!!!!!!!!!!!!!!!"), None);
        assert_eq!(
            account_of_access_key("111122223333").as_deref(),
            Some("111122223333")
        );
    }

    #[test]
    fn secrets_are_forty_characters() {
        assert_eq!(issue_secret_key().len(), 40);
        assert!(issue_session_token().len() > 300);
    }
}
