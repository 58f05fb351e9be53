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
//! prefix says a token is a secret key whatever the case of its body ([`SECRET_KEY_PREFIX`]).

/// The least length of a key's body.
const MIN_BODY: usize = 32;
/// The least run of letters and digits a key's body holds.
const MIN_RUN: usize = 24;
/// The least Shannon entropy (bits a character) of a key's body.
const MIN_ENTROPY: f64 = 4.0;
/// The prefix that says a token is a secret key: OpenAI's, which the providers that copy its API copy too, with a
/// body of one case (DeepSeek's and Qwen's DashScope's `sk-` and 32 hexadecimal digits, SiliconFlow's 48 lowercase
/// letters). Such a body needs no mix of cases, only to be one random run: [`MIN_ONE_CASE_ENTROPY`] bits a
/// character (32 random hexadecimal digits give 3.6, a repeated `deadbeef` 2.2).
const SECRET_KEY_PREFIX: &str = "sk";
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
        if matches!(before, Some(b'.' | b'/' | b'+')) || matches!(after, Some(b'/' | b'+' | b'=')) {
            continue;
        }
        if key_shaped(&s[start..i]) {
            out.push((start, i));
        }
    }
    out
}

/// Whether a whole token is a prefix and a key's body.
fn key_shaped(token: &str) -> bool {
    if token.len() < MIN_BODY + 3 {
        return false;
    }
    let Some(body) = body_after_prefix(token) else {
        return false;
    };
    if body.len() < MIN_BODY {
        return false;
    }
    if token.split(['-', '_']).next() == Some(SECRET_KEY_PREFIX)
        && body.bytes().all(|b| b.is_ascii_alphanumeric())
        && super::rules::entropy(body) >= MIN_ONE_CASE_ENTROPY
    {
        return true;
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
        find(s).into_iter().map(|(a, b)| &s[a..b]).collect()
    }

    #[test]
    fn keys_of_families_no_rule_names_are_found_by_their_shape() {
        for key in [
            "fw_3ZkLm9Qp2Rs7Tv1Wx5Yz0Ab4Cd8Ef2Gh6Ij0Kl",
            "tgp_v1_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2Qr5Tu8Wx1",
            "zeta-live-8Hk2Lm9Qp3Rs7Tv1Wx5Yz0Ab4Cd8Ef2Gh6Ij0Kl3Mn7",
            "vercel_blob_rw_AbCdEf123456_GhIjKlMnOpQrStUvWxYz0123456789",
            // a secret key of one case, as OpenAI's imitators mint them (DeepSeek, DashScope; SiliconFlow)
            "sk-561c5cb347611a3ce9d97dcbee500fe7",
            "sk-qhvmzrxkdwpfnbtylgcesajuoiqhvmzrxkdwpfnbtylgce",
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
        ] {
            assert!(found(s).is_empty(), "{s}: {:?}", found(s));
        }
    }
}
