//! An edit as a reader wants to see it: each line with the file's own line numbers where the harness recorded
//! them (Claude Code's `structuredPatch` in the call's result, pi's numbered `details.diff`), and within a replaced
//! line the words that changed.
//!
//! A call's input alone tells no line numbers (an edit names a fragment, not where it sits), so a diff made from it
//! is drawn without numbers rather than with the fragment's own (which would be wrong for the file).

use serde_json::Value;

/// What a line of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Context,
    Added,
    Removed,
    /// `@@ … @@`, or a gap between the parts shown.
    Hunk,
    /// `--- a`, `+++ b`, `*** Update File: …`
    File,
}

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub kind: Kind,
    /// Line numbers in the file before and after the edit, where known.
    pub old: Option<u32>,
    pub new: Option<u32>,
    /// The line's text without its `+`/`-`/` ` mark.
    pub text: String,
    /// For a replaced line: its text cut into (changed, piece), the changed pieces against the line it pairs with.
    pub inline: Pieces,
}

/// A line's text cut into pieces, each marked changed or not.
pub type Pieces = Vec<(bool, String)>;

/// A diff, its lines numbered when the harness recorded where they are.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Patch {
    pub lines: Vec<Line>,
    pub numbered: bool,
}

fn line(kind: Kind, old: Option<u32>, new: Option<u32>, text: &str) -> Line {
    Line {
        kind,
        old,
        new,
        text: text.to_string(),
        inline: Vec::new(),
    }
}

/// The diff a harness recorded with a call's result, numbered: Claude Code's `toolUseResult.structuredPatch` on the
/// line that carried the result (Claude Code writes a block a line, so the result's block is its line), pi's
/// `details.diff` on the tool result. `block`: the result's index in the message's content.
pub fn recorded(m: &crate::model::Message, block: usize, call: &str) -> Option<Patch> {
    if let Some(lines) = m.meta.get("lines").and_then(Value::as_array) {
        let l = match lines.len() {
            1 => lines.first(),
            n if n == m.content.len() => lines.get(block),
            _ => None,
        }?;
        return from_structured(l.pointer("/toolUseResult/structuredPatch")?.as_array()?);
    }
    let e = m.meta.pointer("/entry/message")?;
    (e.get("toolCallId").and_then(Value::as_str) == Some(call))
        .then(|| e.pointer("/details/diff").and_then(Value::as_str))
        .flatten()
        .and_then(from_pi)
}

/// A diff as HTML: a gutter with the file's line numbers when known, added and removed lines classed, the words
/// that changed within a replaced line marked.
pub fn html(p: &Patch) -> String {
    use super::markup::html_escape as esc;
    let mut out = String::new();
    let no = |n: Option<u32>| n.map_or(String::new(), |n| n.to_string());
    for l in &p.lines {
        let (class, mark) = match l.kind {
            Kind::Added => ("d-add", "+"),
            Kind::Removed => ("d-del", "-"),
            Kind::Hunk => ("d-hunk", ""),
            Kind::File => ("d-file", ""),
            Kind::Context => ("d-ctx", " "),
        };
        let gutter = if p.numbered && matches!(l.kind, Kind::Added | Kind::Removed | Kind::Context)
        {
            format!(
                "<span class=\"ln\">{:>5} {:>5} </span>",
                no(l.old),
                no(l.new)
            )
        } else if p.numbered {
            "<span class=\"ln\">            </span>".to_string()
        } else {
            String::new()
        };
        let text = if l.inline.is_empty() {
            esc(&l.text)
        } else {
            l.inline
                .iter()
                .map(|(changed, t)| {
                    if *changed {
                        format!("<span class=\"d-wc\">{}</span>", esc(t))
                    } else {
                        esc(t)
                    }
                })
                .collect()
        };
        out.push_str(&format!(
            "<span class=\"{class}\">{gutter}{mark}{text}\n</span>"
        ));
    }
    out
}

/// A unified diff's text (cairn's diff of an edit, a Codex patch): marks read, no file line numbers.
pub fn from_unified(text: &str) -> Patch {
    let lines = text
        .lines()
        .map(|l| {
            if l.starts_with("+++") || l.starts_with("---") || l.starts_with("***") {
                line(Kind::File, None, None, l)
            } else if l.starts_with("@@") {
                line(Kind::Hunk, None, None, l)
            } else if let Some(t) = l.strip_prefix('+') {
                line(Kind::Added, None, None, t)
            } else if let Some(t) = l.strip_prefix('-') {
                line(Kind::Removed, None, None, t)
            } else {
                line(Kind::Context, None, None, l.strip_prefix(' ').unwrap_or(l))
            }
        })
        .collect();
    with_inline(Patch {
        lines,
        numbered: false,
    })
}

/// Claude Code's `structuredPatch`: hunks with where they start in the file before and after.
pub fn from_structured(hunks: &[Value]) -> Option<Patch> {
    let mut lines = Vec::new();
    for h in hunks {
        let n = |k: &str| h.get(k).and_then(Value::as_u64).map(|x| x as u32);
        let (mut old, mut new) = (n("oldStart")?, n("newStart")?);
        lines.push(line(
            Kind::Hunk,
            None,
            None,
            &format!(
                "@@ -{old},{} +{new},{} @@",
                n("oldLines").unwrap_or(0),
                n("newLines").unwrap_or(0)
            ),
        ));
        for l in h.get("lines")?.as_array()? {
            let l = l.as_str()?;
            if let Some(t) = l.strip_prefix('+') {
                lines.push(line(Kind::Added, None, Some(new), t));
                new += 1;
            } else if let Some(t) = l.strip_prefix('-') {
                lines.push(line(Kind::Removed, Some(old), None, t));
                old += 1;
            } else if l.starts_with('\\') {
                // "\ No newline at end of file"
                lines.push(line(Kind::Hunk, None, None, l));
            } else {
                let t = l.strip_prefix(' ').unwrap_or(l);
                lines.push(line(Kind::Context, Some(old), Some(new), t));
                old += 1;
                new += 1;
            }
        }
    }
    (!lines.is_empty()).then(|| {
        with_inline(Patch {
            lines,
            numbered: true,
        })
    })
}

/// pi's `details.diff` (`edit-diff.ts`): each line a mark (`+`, `-` or a space), a line number (the new file's for an
/// added line, the old file's otherwise) and its text; `...` between the parts shown.
pub fn from_pi(text: &str) -> Option<Patch> {
    let mut lines = Vec::new();
    // the offset between the old and the new numbering, as the lines so far moved it
    let mut shift: i64 = 0;
    for l in text.lines() {
        let (mark, rest) = match l.chars().next() {
            Some(c @ ('+' | '-')) => (c, &l[1..]),
            _ => (' ', l),
        };
        let rest = rest.trim_start();
        if rest == "..." || rest.is_empty() {
            lines.push(line(Kind::Hunk, None, None, "…"));
            continue;
        }
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let no: u32 = rest[..digits].parse().ok()?;
        // one space separates the number from the text
        let t = rest[digits..].strip_prefix(' ').unwrap_or(&rest[digits..]);
        let other = |n: u32, by: i64| u32::try_from(i64::from(n) + by).ok();
        lines.push(match mark {
            '+' => {
                shift += 1;
                line(Kind::Added, None, Some(no), t)
            }
            '-' => {
                shift -= 1;
                line(Kind::Removed, Some(no), None, t)
            }
            _ => line(Kind::Context, Some(no), other(no, shift), t),
        });
    }
    lines.iter().any(|l| l.kind != Kind::Hunk).then(|| {
        with_inline(Patch {
            lines,
            numbered: true,
        })
    })
}

/// Pairs each run of removed lines with the run of added lines after it, line by line, and marks the words that
/// changed within each pair.
fn with_inline(mut p: Patch) -> Patch {
    let mut i = 0;
    while i < p.lines.len() {
        if p.lines[i].kind != Kind::Removed {
            i += 1;
            continue;
        }
        let del_start = i;
        while i < p.lines.len() && p.lines[i].kind == Kind::Removed {
            i += 1;
        }
        let add_start = i;
        while i < p.lines.len() && p.lines[i].kind == Kind::Added {
            i += 1;
        }
        let pairs = (add_start - del_start).min(i - add_start);
        for k in 0..pairs {
            let (old, new) = (
                p.lines[del_start + k].text.clone(),
                p.lines[add_start + k].text.clone(),
            );
            let (a, b) = inline(&old, &new);
            p.lines[del_start + k].inline = a;
            p.lines[add_start + k].inline = b;
        }
    }
    p
}

/// The pieces of `old` and of `new`, each marked changed or not, by a word diff; nothing when the lines share too
/// little for a word diff to help (a rewritten line reads better whole).
fn inline(old: &str, new: &str) -> (Pieces, Pieces) {
    let (ta, tb) = (tokens(old), tokens(new));
    let d = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(20))
        .diff_slices(&ta, &tb);
    if d.ratio() < 0.4 {
        return (Vec::new(), Vec::new());
    }
    let (mut a, mut b): (Pieces, Pieces) = (Vec::new(), Vec::new());
    let push = |v: &mut Pieces, changed: bool, s: &str| match v.last_mut() {
        Some((c, t)) if *c == changed => t.push_str(s),
        _ => v.push((changed, s.to_string())),
    };
    for c in d.iter_all_changes() {
        match c.tag() {
            similar::ChangeTag::Equal => {
                push(&mut a, false, c.value());
                push(&mut b, false, c.value());
            }
            similar::ChangeTag::Delete => push(&mut a, true, c.value()),
            similar::ChangeTag::Insert => push(&mut b, true, c.value()),
        }
    }
    (a, b)
}

/// A line cut into words (letters, digits and `_`), runs of spaces, and single other characters: what a change
/// within a line is counted in.
fn tokens(s: &str) -> Vec<&str> {
    let kind = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<u8> = None;
    for (i, c) in s.char_indices() {
        let k = kind(c);
        if let Some(p) = prev
            && (p != k || k == 2)
        {
            out.push(&s[start..i]);
            start = i;
        }
        prev = Some(k);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_hunks_number_each_side() {
        let h: Vec<Value> = serde_json::from_str(
            r#"[{"oldStart":3,"oldLines":3,"newStart":3,"newLines":3,"lines":[" a","-let x = 1;","+let x = 2;"," b"]}]"#,
        )
        .unwrap();
        let p = from_structured(&h).unwrap();
        assert!(p.numbered);
        let nos: Vec<_> = p.lines.iter().map(|l| (l.kind, l.old, l.new)).collect();
        assert_eq!(
            nos,
            vec![
                (Kind::Hunk, None, None),
                (Kind::Context, Some(3), Some(3)),
                (Kind::Removed, Some(4), None),
                (Kind::Added, None, Some(4)),
                (Kind::Context, Some(5), Some(5)),
            ]
        );
        // only the number changed within the line
        let changed: Vec<&str> = p.lines[3]
            .inline
            .iter()
            .filter(|(c, _)| *c)
            .map(|(_, t)| t.as_str())
            .collect();
        assert_eq!(changed, vec!["2"]);
    }

    #[test]
    fn pi_numbered_diff_is_read_with_both_sides() {
        let p = from_pi("      ...\n   83   get state();\n-  87   get messages(): Message[];\n+  87   get messages(): AppMessage[];\n+  88   extra();\n   88   end();\n      ...").unwrap();
        let nos: Vec<_> = p.lines.iter().map(|l| (l.kind, l.old, l.new)).collect();
        assert_eq!(
            nos,
            vec![
                (Kind::Hunk, None, None),
                (Kind::Context, Some(83), Some(83)),
                (Kind::Removed, Some(87), None),
                (Kind::Added, None, Some(87)),
                (Kind::Added, None, Some(88)),
                (Kind::Context, Some(88), Some(89)),
                (Kind::Hunk, None, None),
            ]
        );
        assert_eq!(p.lines[2].text, "  get messages(): Message[];");
        assert!(
            p.lines[3]
                .inline
                .iter()
                .any(|(c, t)| *c && t.contains("AppMessage"))
        );
    }

    #[test]
    fn a_rewritten_line_is_not_cut_into_words() {
        let p = from_unified("-completely different\n+nothing alike here at all\n");
        assert!(p.lines.iter().all(|l| l.inline.is_empty()));
        assert!(!p.numbered);
    }
}
