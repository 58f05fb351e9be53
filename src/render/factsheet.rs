//! The factsheet: exact strings that models misread in tiny glyphs (UUIDs, hashes, long numbers, hex, file
//! paths), listed as text beside the pages, plus the characters the font could not draw. Bounded in size.

use std::collections::HashSet;

use super::{SourceText, Unrendered};

fn is_hex(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_hexdigit())
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts.iter().all(|p| is_hex(p))
}

/// What kind of exact string a token is, if any.
fn kind(t: &str) -> Option<&'static str> {
    let digits = t.chars().filter(char::is_ascii_digit).count();
    if is_uuid(t) {
        Some("uuid")
    } else if t.len() >= 7 && is_hex(t) && digits > 0 && t.chars().any(|c| c.is_ascii_alphabetic())
    {
        Some("hash")
    } else if t.starts_with("0x") && t.len() > 3 && is_hex(&t[2..]) {
        Some("hex")
    } else if digits >= 6
        && t.chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',' || c == '_')
    {
        Some("number")
    } else if t.len() >= 4
        && t.contains('/')
        && !t.contains("//")
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-~".contains(c))
        && t.chars().any(|c| c.is_ascii_alphabetic())
    {
        Some("path")
    } else {
        None
    }
}

pub fn build(sources: &[SourceText], unrendered: &[Unrendered], max_bytes: usize) -> String {
    let mut out =
        String::from("# Exact strings from the imaged text (ids, hashes, numbers, paths)\n");
    let mut seen: HashSet<&str> = HashSet::new();
    let mut full = false;
    'outer: for s in sources {
        for raw in s
            .text
            .split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;=".contains(c))
        {
            let t = raw.trim_end_matches([':', '.']);
            if t.is_empty() || seen.contains(t) {
                continue;
            }
            if let Some(k) = kind(t) {
                let line = format!("{} {k}: {t}\n", &s.id[..s.id.len().min(8)]);
                if out.len() + line.len() > max_bytes {
                    full = true;
                    break 'outer;
                }
                seen.insert(t);
                out.push_str(&line);
            }
        }
    }
    if !unrendered.is_empty() {
        out.push_str("# Characters drawn as a box (the font has no glyph): message index char\n");
        for u in unrendered {
            let line = format!(
                "{} {} {}\n",
                &u.message[..u.message.len().min(8)],
                u.index,
                u.char
            );
            if out.len() + line.len() > max_bytes {
                full = true;
                break;
            }
            out.push_str(&line);
        }
    }
    if full {
        out.push_str("# (truncated at the factsheet's size limit)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::kind;

    #[test]
    fn exact_strings_are_recognised() {
        assert_eq!(kind("550e8400-e29b-41d4-a716-446655440000"), Some("uuid"));
        assert_eq!(kind("5d262a0"), Some("hash"));
        assert_eq!(kind("1779512153106"), Some("number"));
        assert_eq!(kind("src/render/font.rs"), Some("path"));
        assert_eq!(kind("0xdeadbeef"), Some("hex"));
        assert_eq!(kind("hello"), None);
        assert_eq!(kind("and/or"), Some("path"));
    }
}
