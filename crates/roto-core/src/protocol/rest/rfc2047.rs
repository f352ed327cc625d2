//! Prefix-header map values (S3's `x-amz-meta-*`) as S3 carries them, so no byte is lost.
//!
//! HTTP header values are bytes, not text. S3 reads a raw metadata value as ISO-8859-1
//! (each byte one character, so every byte survives), decodes a value made of RFC 2047
//! encoded-words (`=?UTF-8?B?w6k=?=`) to the text they carry, and answers a value that is
//! not printable US-ASCII as one `=?UTF-8?B?...?=` encoded-word over its UTF-8 bytes.

use base64::Engine;

/// The text a raw header value carries: its encoded-words decoded when it consists only of
/// encoded-words (separated by whitespace, which RFC 2047 drops between them), else its
/// bytes read as ISO-8859-1.
pub(super) fn decode(raw: &[u8]) -> String {
    std::str::from_utf8(raw)
        .ok()
        .and_then(decode_words)
        .unwrap_or_else(|| raw.iter().map(|&b| char::from(b)).collect())
}

/// The header text for a value: itself when printable US-ASCII, else an encoded-word.
pub(super) fn encode(value: &str) -> String {
    if value
        .bytes()
        .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
    {
        return value.to_string();
    }
    let base64 = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
    format!("=?UTF-8?B?{base64}?=")
}

fn decode_words(text: &str) -> Option<String> {
    let mut out = Vec::new();
    let mut words = text.split_ascii_whitespace().peekable();
    words.peek()?;
    for word in words {
        let inner = word.strip_prefix("=?")?.strip_suffix("?=")?;
        let mut parts = inner.splitn(3, '?');
        let (charset, encoding, encoded) = (parts.next()?, parts.next()?, parts.next()?);
        let bytes = match encoding {
            "B" | "b" => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?,
            "Q" | "q" => q_decode(encoded)?,
            _ => return None,
        };
        match charset.to_ascii_uppercase().as_str() {
            "UTF-8" | "US-ASCII" => out.extend_from_slice(&bytes),
            "ISO-8859-1" | "LATIN1" => {
                let text: String = bytes.iter().map(|&b| char::from(b)).collect();
                out.extend_from_slice(text.as_bytes());
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

/// RFC 2047's "Q" encoding: `_` is a space, `=XX` a byte in hex, anything else itself.
fn q_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        out.push(match b {
            b'_' => b' ',
            b'=' => {
                let hex = [bytes.next()?, bytes.next()?];
                u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?
            }
            other => other,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_bytes_are_read_as_latin1_and_answered_as_one_encoded_word() {
        let text = decode(b"caf\xc3\xa9");
        assert_eq!(text, "caf\u{c3}\u{a9}");
        assert_eq!(encode(&text), "=?UTF-8?B?Y2Fmw4PCqQ==?=");
        let every_high_byte: Vec<u8> = (0x80..=0xff).collect();
        let text = decode(&every_high_byte);
        assert_eq!(
            text.chars().map(|c| c as u32 as u8).collect::<Vec<_>>(),
            every_high_byte
        );
    }

    #[test]
    fn encoded_words_are_decoded_and_ascii_stays_as_it_is() {
        assert_eq!(decode(b"=?UTF-8?B?w6k=?="), "\u{e9}");
        assert_eq!(
            decode(b"=?utf-8?q?caf=C3=A9_au_lait?="),
            "caf\u{e9} au lait"
        );
        assert_eq!(
            decode(b"=?UTF-8?B?w6k=?= =?ISO-8859-1?Q?=E9?="),
            "\u{e9}\u{e9}"
        );
        assert_eq!(decode(b"plain =?UTF-8?B?w6k=?="), "plain =?UTF-8?B?w6k=?=");
        assert_eq!(decode(b"=?UTF-8?B?/w==?="), "=?UTF-8?B?/w==?=");
        assert_eq!(decode(b""), "");
        assert_eq!(encode("blue\tsky"), "blue\tsky");
        assert_eq!(encode("\u{e9}"), "=?UTF-8?B?w6k=?=");
    }
}
