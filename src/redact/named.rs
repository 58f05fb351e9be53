//! Values a text names as credentials: `my Deepgram key is 3f2a…`, `railway token: <uuid>`, `Mistral API key
//! Ab3…`. Many vendors mint keys with no prefix at all (40 hexadecimal digits, a UUID, 32 letters and digits): no
//! rule can tell such a key from the ids and hashes sessions are full of, and the rule sets only look for one after
//! an assignment (`KEY=…`, `"key": "…"`). People paste them in prose, after the word that says what they are.
//!
//! A value is taken when it follows a word naming a credential ([`CREDENTIAL`], alone or ending an identifier:
//! `key`, `DEEPGRAM_API_KEY`, `railwayToken`), with nothing between them but separators (`:`, `=`, quotes) and up
//! to [`MAX_LINKS`] linking words (`is`, `was`, `here`, ...), and when it looks random: letters and digits (or
//! letters of both cases), not words run together, [`MIN_ENTROPY`] bits a character, at least [`MIN_LEN`]
//! characters ([`MIN_PASSWORD_LEN`] after a word for a password). A key of a kind that is no secret (`primary key`,
//! `cache key`, `public key`, `next token`: [`NOT_SECRET`]) names none; neither does a path, a call or a member
//! access.

/// The words that name a credential, lower case: a value after one is what it names.
const CREDENTIAL: &[&str] = &[
    "key",
    "keys",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "credential",
    "credentials",
];
/// The words that name a password: a shorter value after them is one.
const PASSWORDS: &[&str] = &["password", "passwd", "passphrase", "pwd"];
/// Words before a credential word that say the key or token is no secret: a database's or a map's key, a public
/// key, a page's continuation token, a language model's tokens.
const NOT_SECRET: &[&str] = &[
    "primary",
    "foreign",
    "unique",
    "composite",
    "partition",
    "sort",
    "row",
    "cache",
    "idempotency",
    "dedup",
    "dedupe",
    "map",
    "hash",
    "lookup",
    "index",
    "object",
    "dict",
    "public",
    "pub",
    "next",
    "page",
    "continuation",
    "cursor",
    "sync",
    "end",
    "start",
    "stop",
    "special",
    "input",
    "output",
    "max",
    "total",
    "cancellation",
    "csrf",
    "xsrf",
];
/// The words that may stand between a credential word and its value.
const LINKS: &[&str] = &[
    "is", "was", "are", "be", "here", "now", "reads", "set", "to", "as", "of", "value", "it's",
    "its", "my", "the", "new",
];
const MAX_LINKS: usize = 3;
/// How far separators and linking words may run between a credential word (or the sign [`bridged`] reaches) and its
/// value.
const MAX_GAP: usize = 40;
/// How far words saying whose a credential is may run before its `:` or `=` ([`bridged`]).
const MAX_BRIDGE: usize = 40;
/// The least length of a named value.
const MIN_LEN: usize = 16;
/// The least length of a value named as a password.
const MIN_PASSWORD_LEN: usize = 12;
/// The least Shannon entropy of a named value, bits a character (32 random hexadecimal digits give about 3.6, a
/// UUID about 3.4; `aaaa1111aaaa1111` 1.0).
const MIN_ENTROPY: f64 = 3.0;

/// The byte ranges of values `s` names as credentials.
pub fn find(s: &str) -> Vec<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphabetic() || (i > 0 && ident_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && ident_byte(bytes[i]) {
            i += 1;
        }
        let Some(word) = credential_word(s, start, i) else {
            continue;
        };
        if let Some(range) = value_after(s, i, PASSWORDS.contains(&word)) {
            i = range.1;
            out.push(range);
        }
    }
    out
}

fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The credential word the identifier `s[start..end]` ends with, if it names a secret: the whole identifier, its
/// last `_`/`-` part, or its last camel-case part; and the part or the word before it is no [`NOT_SECRET`] one.
fn credential_word(s: &str, start: usize, end: usize) -> Option<&'static str> {
    let ident = &s[start..end];
    // a member access (`config.token`) or a path's part names a field, not a value
    if start > 0 && matches!(s.as_bytes()[start - 1], b'.' | b'/') {
        return None;
    }
    let last_sep = ident.rfind(['_', '-']).map_or(0, |p| p + 1);
    let part_at = last_sep + last_camel_part(&ident[last_sep..]);
    let part = &ident[part_at..];
    let word = CREDENTIAL.iter().find(|w| part.eq_ignore_ascii_case(w))?;
    // the part of the identifier before it, else the word before it in the text
    let before = if part_at > 0 {
        let head = ident[..part_at].trim_end_matches(['_', '-']);
        let after_sep = head.rfind(['_', '-']).map_or(0, |p| p + 1);
        &head[after_sep + last_camel_part(&head[after_sep..])..]
    } else {
        s[..start]
            .trim_end()
            .rsplit(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .unwrap_or("")
    };
    (!NOT_SECRET.iter().any(|w| before.eq_ignore_ascii_case(w))).then_some(*word)
}

/// Where the last camel-case part of an identifier's part starts: at the last upper-case letter that follows a
/// lower-case letter or a digit (`railwayToken`: at `T`), else 0.
fn last_camel_part(s: &str) -> usize {
    let b = s.as_bytes();
    (1..b.len())
        .rev()
        .find(|&p| {
            b[p].is_ascii_uppercase()
                && (b[p - 1].is_ascii_lowercase() || b[p - 1].is_ascii_digit())
        })
        .unwrap_or(0)
}

/// The value that follows a credential word ending at `at`: past separators and linking words, one token that
/// looks random. None where what follows is no such value.
fn value_after(s: &str, at: usize, password: bool) -> Option<(usize, usize)> {
    let bytes = s.as_bytes();
    let from = bridged(s, at).unwrap_or(at);
    let mut i = from;
    let mut links = 0;
    loop {
        // separators, and quotes escaped inside a string (`{\"token\": \"…\"}` in a command)
        while i < bytes.len()
            && (matches!(
                bytes[i],
                b' ' | b'\t' | b':' | b'=' | b'>' | b'"' | b'\'' | b'`'
            ) || (bytes[i] == b'\\' && matches!(bytes.get(i + 1), Some(b'"' | b'\''))))
        {
            i += 1;
        }
        // a path in code (`key::Name`) names an item, not a value
        if i - from > MAX_GAP || s[from..i].contains("::") {
            return None;
        }
        let word_end = s[i..]
            .find(|c: char| !(c.is_ascii_alphabetic() || c == '\''))
            .map_or(s.len(), |p| i + p);
        let word = &s[i..word_end];
        if links < MAX_LINKS
            && !word.is_empty()
            && LINKS.iter().any(|l| word.eq_ignore_ascii_case(l))
            && word_end < s.len()
        {
            links += 1;
            i = word_end;
            continue;
        }
        break;
    }
    let start = i;
    if !bytes.get(start).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    // a password may hold symbols too
    let symbol = |b: u8| password && b"!@#%^&*~?".contains(&b);
    let mut end = start;
    while end < bytes.len()
        && (ident_byte(bytes[end])
            || matches!(bytes[end], b'+' | b'/' | b'.')
            || symbol(bytes[end]))
    {
        end += 1;
    }
    while end < bytes.len() && bytes[end] == b'=' && end - start < 400 {
        end += 1;
    }
    // a sentence's end is no part of it
    while end > start && bytes[end - 1] == b'.' {
        end -= 1;
    }
    if matches!(bytes.get(end), Some(b'(' | b'[' | b'{')) {
        return None;
    }
    looks_random(&s[start..end], password).then_some((start, end))
}

/// Where a credential word's value begins when words say whose it is before a `:` or `=` (`password for the
/// staging db: …`, `the key, new one: …`): just after that sign, where it comes within [`MAX_BRIDGE`] bytes of
/// short words (none the value itself) and spaces or commas. None where no such sign follows.
fn bridged(s: &str, at: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = at;
    while i < bytes.len()
        && i - at <= MAX_BRIDGE
        && (bytes[i].is_ascii_alphanumeric() || b" \t,'_-".contains(&bytes[i]))
    {
        i += 1;
    }
    let sign = matches!(bytes.get(i), Some(b':' | b'='));
    let doubled = matches!(bytes.get(i + 1), Some(b':' | b'='));
    // words, not the value itself (`Authorization: Key <uuid>:<hex>`)
    let words = s[at..i]
        .split([' ', '\t', ','])
        .all(|w| w.len() <= 15 && (w.len() <= 3 || !w.bytes().any(|b| b.is_ascii_digit())));
    (s[at..i].contains(' ') && words && sign && !doubled).then_some(i + 1)
}

/// Whether a value looks like a minted key: long enough, letters and digits (or letters of both cases), no path or
/// dotted name, not words run together, random enough.
fn looks_random(v: &str, password: bool) -> bool {
    let least = if password { MIN_PASSWORD_LEN } else { MIN_LEN };
    if v.len() < least || v.len() > 400 {
        return false;
    }
    let core = v.trim_end_matches('=');
    let has = |f: fn(&u8) -> bool| core.as_bytes().iter().any(f);
    // letters and digits, or letters of both cases (a password of letters only)
    let mixed = (has(u8::is_ascii_digit) && has(u8::is_ascii_alphabetic))
        || (has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase));
    // a constant's name: parts of letters or of digits, none both (`CLIENT_TRAFFIC_SECRET_0`)
    let named = core.contains(['_', '-'])
        && core.split(['_', '-']).all(|p| {
            p.bytes().all(|b| b.is_ascii_digit()) || p.bytes().all(|b| b.is_ascii_alphabetic())
        });
    // a path, a file name, a dotted name, or words run together (`user_profile_2024_backup_settings`)
    if !mixed
        || named
        || core.contains('.')
        || core.starts_with('/')
        || core.contains("//")
        || super::shape::worded(core)
    {
        return false;
    }
    super::rules::entropy(core) >= MIN_ENTROPY
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(s: &str) -> Vec<&str> {
        crate::redact::at(s, find(s))
    }

    #[test]
    fn a_value_a_text_names_as_a_key_is_found() {
        for (text, key) in [
            (
                "Here is my Deepgram API key: 3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a, use it",
                "3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a",
            ),
            (
                "The AssemblyAI key is 8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f.",
                "8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f",
            ),
            (
                "my railway token: 1b4e28ba-2fa1-41d2-883f-0016d3cca427",
                "1b4e28ba-2fa1-41d2-883f-0016d3cca427",
            ),
            (
                "Mistral API key Xk9mQ2pL7vR4tW8nZ3bC6dF1gH5jK0sY",
                "Xk9mQ2pL7vR4tW8nZ3bC6dF1gH5jK0sY",
            ),
            (
                "DEEPGRAM_API_KEY: \"3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a\"",
                "3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a",
            ),
            (
                "const upstashToken = 'AX4bASQgYjM2Zjk4ZmItNGE1Yi00Yzc2LTk5NjYtN2I0ZDAxM2M0YTFi=';",
                "AX4bASQgYjM2Zjk4ZmItNGE1Yi00Yzc2LTk5NjYtN2I0ZDAxM2M0YTFi=",
            ),
            ("the db password is q7Rt2mXw9LpZ", "q7Rt2mXw9LpZ"),
            (
                "my password for the staging db: Tr0ub4dor&3xyz",
                "Tr0ub4dor&3xyz",
            ),
            // the words before the colon do not count against the gap after it
            (
                "the API key for the new production db server in eu:   \"Xk9mQ2pL7vR4tW8nZ3bC6dF1gH5jK0sY\"",
                "Xk9mQ2pL7vR4tW8nZ3bC6dF1gH5jK0sY",
            ),
            // the value itself is no word saying whose the key is
            (
                "X-Authorization: Key 5e7c0ded-feed-4bad-9ace-0ddba11c0de5:5a1ed0ff",
                "5e7c0ded-feed-4bad-9ace-0ddba11c0de5",
            ),
            (
                "I rotated the key, new one: 5f1d2c3b4a5968778695a4b3c2d1e0f9",
                "5f1d2c3b4a5968778695a4b3c2d1e0f9",
            ),
            (
                r#"curl -d '{\"token\": \"Xk9mQ2pL7vR4tW8nZ3bC6dF1gH5jK0sY\"}'"#,
                "Xk9mQ2pL7vR4tW8nZ3bC6dF1gH5jK0sY",
            ),
        ] {
            assert_eq!(found(text), [key], "{text}");
        }
    }

    #[test]
    fn keys_of_no_secret_and_values_that_are_no_key_are_not() {
        for text in [
            "The primary key is 1b4e28ba-2fa1-41d2-883f-0016d3cca427 for this row",
            "cache key 3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a missed",
            "public key: 3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a",
            "next_token: eyJvZmZzZXQiOjEwMCwibGltaXQiOjUwfQ2",
            "API key rotation happened at commit 3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a",
            "key points of the design: 3 stores, 2 caches, 1 index",
            "password for the admin: $ADMIN_PASSWORD_2026",
            "token count for this prompt: 123456789012345678",
            "token count is 123456789012345678 for this prompt",
            "the token file is src/auth/token_store_v2.rs",
            "key: user_profile_settings_2024_backup",
            "token = config.resolveToken2026()",
            "token = getToken(3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c)",
            "password is aaaa1111aaaa1111",
            "the keyboard 3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a",
            "self.token 3f9a0c2be41d8f7a6b5c4d3e2f1a0b9c8d7e6f5a",
            "Keysym(key::XF86_KbdLightOnOff)",
            "{ primaryKey: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', cacheKey: 'Xk9mQ2pL7vR4tW8nZ3bC6dF1gH5jK0sY' }",
            "TrafficSecret => \"CLIENT_TRAFFIC_SECRET_0\",",
        ] {
            assert!(found(text).is_empty(), "{text}: {:?}", found(text));
        }
    }
}
