//! Keys of families no rule set names yet. Providers mint keys the same way: a short lowercase prefix naming the
//! family (`gsk_`, `fw_`, `tgp_v1_`, `sk-or-v1-`), then a long random body. A family released after the rule
//! sets were written (or a known family whose key grew) is found by that shape: a token that is only the prefix
//! and the body, the body at least [`MIN_BODY`] characters with a run of [`MIN_RUN`] letters and digits that mixes
//! upper case, lower case and digits, and [`MIN_ENTROPY`] bits a character.
//!
//! What stays out, by the shape alone (none of it a hand list of names): the ids harnesses and providers write
//! (`toolu_`, `msg_`, `req_`, `call_`, `ses_`: bodies of 24 to 26 characters; OpenAI's `rs_`, `fc_`: lowercase
//! hex), hashes (one case), slugs and dated names (no long run), base64 and paths (the token runs on with `+`,
//! `/`, `=` or starts after `.`, `/`, `+`). Measured on every sample transcript and fixture: no token found. One
//! prefix says a token is a secret whatever the case of its body ([`SAYS_SECRET`]); a family prefix may end with
//! a dot (`ya29.`).

/// The least length of a key's body.
const MIN_BODY: usize = 32;
/// The least run of letters and digits a key's body holds.
const MIN_RUN: usize = 24;
/// The least Shannon entropy (bits a character) of a key's body.
const MIN_ENTROPY: f64 = 4.0;
/// The words of a prefix that say a token is a secret: OpenAI's `sk`, which the providers that copy its API copy too
/// with a body of one case (DeepSeek's and Qwen's DashScope's `sk-` and 32 hexadecimal digits, SiliconFlow's 48
/// lowercase letters), and `secret` (age's `AGE-SECRET-KEY-1` and 58 upper-case characters). Such a body needs no
/// mix of cases, only to be one random run: [`MIN_ONE_CASE_ENTROPY`] bits a character (32 random hexadecimal
/// digits give 3.6, a repeated `deadbeef` 2.2).
const SAYS_SECRET: &[&str] = &["sk", "secret"];
const MIN_ONE_CASE_ENTROPY: f64 = 3.0;

/// The byte ranges of key-shaped tokens in `s`.
pub fn find(s: &str) -> Vec<(usize, usize)> {
    let bytes = s.as_bytes();
    let in_token = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !in_token(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && in_token(bytes[i]) {
            i += 1;
        }
        let before = start.checked_sub(1).map(|p| bytes[p]);
        let after = bytes.get(i).copied();
        if matches!(after, Some(b'/' | b'+' | b'=')) {
            continue;
        }
        // a family whose prefix ends with a dot (Google's OAuth access tokens, `ya29.` and the token)
        if before == Some(b'.') {
            if let Some(from) = dotted_prefix(bytes, start - 1)
                && random_body(&s[start..i])
                && !worded(&s[start..i])
            {
                out.push((from, i));
            }
            continue;
        }
        if matches!(before, Some(b'/' | b'+')) {
            continue;
        }
        if key_shaped(&s[start..i]) {
            out.push((start, i));
        }
    }
    out
}

/// Whether a body reads as words run together (`AtomicInt64OnDescriptorHeap`, a field a program reads after a
/// dot): its runs of lower-case letters are 3 long or more on average, where a random body's are under 2.
pub(super) fn worded(body: &str) -> bool {
    let runs: Vec<usize> = body
        .split(|c: char| !c.is_ascii_lowercase())
        .map(str::len)
        .filter(|&n| n > 0)
        .collect();
    !runs.is_empty() && runs.iter().sum::<usize>() as f64 >= 3.0 * runs.len() as f64
}

/// Where the family prefix before the dot at `dot` starts: a lowercase word of 2 to 12 letters and digits, with a
/// digit (`ya29`; a name a program reads a field of, `data.`, `self.`, has none), that stands alone (not the end of
/// a path, a dotted name or a longer token). None where there is none.
fn dotted_prefix(bytes: &[u8], dot: usize) -> Option<usize> {
    let mut from = dot;
    while from > 0 && (bytes[from - 1].is_ascii_lowercase() || bytes[from - 1].is_ascii_digit()) {
        from -= 1;
    }
    let alone = from == 0
        || !(bytes[from - 1].is_ascii_alphanumeric() || b"_-./+".contains(&bytes[from - 1]));
    let digit = bytes[from..dot].iter().any(u8::is_ascii_digit);
    ((2..=12).contains(&(dot - from)) && bytes[from].is_ascii_lowercase() && digit && alone)
        .then_some(from)
}

/// Whether a whole token is a prefix and a key's body.
fn key_shaped(token: &str) -> bool {
    if token.len() < MIN_BODY + 3 {
        return false;
    }
    // a prefix that says it is a secret, then a random run of any case: whole as the last part (`sk-` and 32 hex
    // digits, 48 lower-case letters), or in parts that hold digits (Langfuse's `sk-lf-` and a UUID; a name in
    // words, `SECRET_ACCESS_KEY_FOR_…`, has none)
    let mut at = 0;
    let says_secret = token.split(['-', '_']).any(|part| {
        at += part.len() + 1;
        SAYS_SECRET.iter().any(|w| part.eq_ignore_ascii_case(w))
    });
    if says_secret {
        let rest = token.get(at..).unwrap_or("");
        let random = |s: &str| super::rules::entropy(s) >= MIN_ONE_CASE_ENTROPY;
        let last = rest.rsplit(['-', '_']).next().unwrap_or("");
        let in_parts_with_digits: usize = rest
            .split(['-', '_'])
            .filter(|p| p.bytes().any(|b| b.is_ascii_digit()))
            .map(str::len)
            .sum();
        if (last.len() >= MIN_BODY && random(last))
            || (in_parts_with_digits >= MIN_BODY && !worded(rest) && random(rest))
        {
            return true;
        }
    }
    body_after_prefix(token).is_some_and(random_body)
}

/// Whether a key's body (after its family prefix) is long and random: at least [`MIN_BODY`] characters, a run of
/// [`MIN_RUN`] letters and digits that mixes cases and digits, [`MIN_ENTROPY`] bits a character.
fn random_body(body: &str) -> bool {
    if body.len() < MIN_BODY {
        return false;
    }
    let mixed = body
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|run| run.len() >= MIN_RUN)
        .any(|run| {
            run.bytes().any(|b| b.is_ascii_uppercase())
                && run.bytes().any(|b| b.is_ascii_lowercase())
                && run.bytes().any(|b| b.is_ascii_digit())
        });
    mixed && super::rules::entropy(body) >= MIN_ENTROPY
}

/// The body after a family prefix: a lowercase word of 2 to 12 characters, then up to two short lowercase parts
/// (`tgp_v1_`, `sk-or-v1-`), each ended by `-` or `_`. The body is what follows the last part that is one.
fn body_after_prefix(token: &str) -> Option<&str> {
    let word = |w: &str, min: usize, max: usize| {
        (min..=max).contains(&w.len())
            && w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    let first = token.find(['-', '_'])?;
    let head = &token[..first];
    if !word(head, 2, 12) || !head.as_bytes()[0].is_ascii_lowercase() {
        return None;
    }
    let mut body = &token[first + 1..];
    for _ in 0..2 {
        match body.find(['-', '_']) {
            Some(p) if word(&body[..p], 1, 8) && body.len() - p > MIN_BODY => {
                body = &body[p + 1..];
            }
            _ => break,
        }
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(s: &str) -> Vec<&str> {
        crate::redact::at(s, find(s))
    }

    #[test]
    fn keys_of_families_no_rule_names_are_found_by_their_shape() {
        for key in [
            "fw_3ZkLm9Qp2Rs7Tv1Wx5Yz0Ab4Cd8Ef2Gh6Ij0Kl",
            "tgp_v1_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2Qr5Tu8Wx1",
            "zeta-live-8Hk2Lm9Qp3Rs7Tv1Wx5Yz0Ab4Cd8Ef2Gh6Ij0Kl3Mn7",
            "vercel_blob_rw_AbCdEf123456_GhIjKlMnOpQrStUvWxYz0123456789",
            // a secret key of one case, as OpenAI's imitators mint them (DeepSeek, DashScope; SiliconFlow), and
            // age's
            "sk-561c5cb347611a3ce9d97dcbee500fe7",
            "sk-qhvmzrxkdwpfnbtylgcesajuoiqhvmzrxkdwpfnbtylgce",
            // a secret key whose body is a UUID (Langfuse's)
            "sk-lf-3f63af83-bd05-61e6-211c-70cf49952399",
            "AGE-SECRET-KEY-1MRPMP6MCDARQ1BCGO8REFK9PX44WNVV5IEH2N21QYJXJUS9L1XG3UF8F15",
            // a family whose prefix ends with a dot: a Google OAuth access token
            "ya29.a0AfB_byC3x9Kq2LmN8pR4sT7vW1yZ5bD0fH3jK6mP9qS2uV5xY8aC1eG4iL7nO0rT3wZ6",
        ] {
            let text = format!("export KEY={key}\nor \"{key}\" in JSON");
            assert_eq!(found(&text), [key, key], "{key}");
        }
    }

    #[test]
    fn ids_hashes_slugs_and_base64_are_not_keys() {
        for s in [
            // ids harnesses and providers write
            "toolu_014io8Xzj9KmduZGduKZGSDL",
            "msg_01XwTPVdM5y8bf1EDKvGBV35",
            "req_011CaBJWhtEYGeXKSjCTPCH9",
            "ses_30bde60cfffeUl5MlvvKDIuSi1",
            "call_Mb8n6F4YBVRTnWW7xqCgOzYp",
            "fc_0bedf3b17fbaa2ea0169b74ce93db481968f50874c189e8bc6",
            "toolu_vrtx_015DftySYnbcnL4NByF5tnm1",
            // hashes, slugs, dated names
            "sha256_9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "n2026-07-22-harness-design-round4-REJECT-ESCALATED",
            "pi-session-2025-12-08T23-22-21-320Z_0db2eb3b-5ed8-4b70-88c6-a3f7104eb251",
            // base64 (an SRI hash) and a path
            "sha512-Zk8Lm2Nq9Rs4Tu7Vw1Xy5Za0Bc3De6Fg7Hi9Jk2Lm4No6Pq8Rs0Tu2Vw4Xy6Za8/Bc==",
            "/srv/files/key_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6K.txt",
            "data.key_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2",
            // long identifiers in code
            "get_user_profile_settings_for_current_session_with_defaults",
            // what says it is a secret key but is no random run
            "sk-deadbeefdeadbeefdeadbeefdeadbeef",
            "sk-learn-model-selection-cross-validation-grid-search",
            "SECRET_KEY_BASE",
            "AWS_SECRET_ACCESS_KEY_FOR_PRODUCTION_DEPLOYMENTS_IN_EUROPE",
            "sk-2026-01-15-backup-of-the-production-database-volume-7",
            // a dotted name, and a dot inside a path or a longer name
            "com.example.Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2",
            "src/ya29.Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2",
            "Xya29.Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2",
            "a.Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2",
            "self.Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2",
            "features11.AtomicInt64OnDescriptorHeapResourceSupported",
        ] {
            assert!(found(s).is_empty(), "{s}: {:?}", found(s));
        }
    }
}
