//! Compaction markers: the messages that say how the context is assembled from a point on. cairn's rungs write them
//! (elide, images, snapshot, summary); readers write them for the compactions a harness recorded itself (Claude
//! Code's `compact_boundary`, pi's `compaction` entries, Codex's `compacted` items). A marker is a system message
//! whose `meta.cairn` says what it does; [`Marker::of`] reads every form ever written and [`Marker::to_meta`]
//! writes the current one, so no other code looks inside a marker's metadata.
//!
//! A marker names earlier messages of its path by depth (the message's place on the path), which a fork keeps,
//! while it gives every copied message a new id. Markers written before depths were recorded name messages by id
//! (or, for harness markers, by the harness's own entry id); [`crate::reclaim::view`] resolves those.

use serde::Serialize;
use serde_json::{Value, json};

use crate::model::{KIND_COMPACTION, Message};

/// cairn's rungs, cheapest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    Elide,
    Images,
    Snapshot,
    Summary,
}

impl Strategy {
    pub const LADDER: [Strategy; 4] = [
        Strategy::Elide,
        Strategy::Images,
        Strategy::Snapshot,
        Strategy::Summary,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Elide => "elide",
            Strategy::Images => "images",
            Strategy::Snapshot => "snapshot",
            Strategy::Summary => "summary",
        }
    }

    pub fn from_name(s: &str) -> Option<Strategy> {
        Strategy::LADDER.into_iter().find(|x| x.name() == s)
    }

    /// Model calls the rung makes.
    pub fn model_calls(self) -> u32 {
        u32::from(self == Strategy::Summary)
    }
}

/// How a marker names an earlier message of its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ref {
    /// Its depth: its index on the path (kept by forks).
    Depth(usize),
    /// Its cairn id (markers written before depths were recorded).
    Id(String),
    /// The harness's own id of the entry (pi's `firstKeptEntryId` in stores imported before depths).
    Source(String),
}

/// What a harness kept verbatim when it compacted, besides its summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    Nothing,
    /// Every message from this one up to the marker (pi: `firstKeptEntryId` / `firstKeptEntryIndex`).
    From(Ref),
    /// These messages (Claude Code's `preservedMessages`).
    Each(Vec<Ref>),
    /// These messages, sent after the harness's summary message that follows the marker (Claude Code's
    /// `preservedSegment` anchored on its summary: the recent turns kept after the summary).
    AfterSummary {
        summary: Ref,
        each: Vec<Ref>,
    },
    /// The user's prompts before the marker, newest first, up to this many tokens, with the instructions the
    /// harness injected (Codex's history rebuilt after a local compaction).
    UserPrompts(u64),
    /// These messages, the harness's summary (the marker's text) sent after the first `head` of them: OpenHands
    /// keeps its first events (the system prompt, the task), then its summary, then the recent events.
    Around {
        head: usize,
        each: Vec<Ref>,
    },
}

/// The snapshot's page shape, as recorded in its marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub profile: String,
    /// The cell, when not the profile's.
    pub cell: Option<(u32, u32)>,
    /// A named page shape ([`crate::render::shape`]), when one was chosen: glyphs, grid, columns, line layout.
    pub name: Option<String>,
}

/// A compaction marker, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Marker {
    /// The large successful tool results of these messages become placeholders. `legacy_tool_ids`: markers
    /// written before depths named the results by tool_use id.
    Elide {
        at: Vec<Ref>,
        legacy_tool_ids: Vec<String>,
    },
    /// The images of these messages become one-line notes.
    Images { at: Vec<Ref> },
    /// The messages from `from` to `to` are drawn as pages, rendered from their stored text whenever sent.
    Snapshot { from: Ref, to: Ref, shape: Shape },
    /// The messages from `from` to `to` are replaced by a summary.
    Summary { from: Ref, to: Ref, summary: String },
    /// A compaction the harness made: the model saw nothing before it but what it kept, and (when `sends_text`)
    /// the marker's own text as a user message (pi's and Codex's summaries; Claude Code's summary is the user
    /// message after its boundary).
    Harness {
        harness: String,
        kept: Kept,
        sends_text: bool,
    },
    /// An edit a harness made to the context without touching the history (pi's `context_edit`): from here on the
    /// message `at` is left out of what the model sees, or (with a `replacement`) sent with that content instead.
    Edit {
        at: Ref,
        replacement: Option<Vec<crate::model::Block>>,
    },
}

impl Marker {
    /// The strategy of a cairn rung (None for a harness's compaction).
    pub fn strategy(&self) -> Option<Strategy> {
        match self {
            Marker::Elide { .. } => Some(Strategy::Elide),
            Marker::Images { .. } => Some(Strategy::Images),
            Marker::Snapshot { .. } => Some(Strategy::Snapshot),
            Marker::Summary { .. } => Some(Strategy::Summary),
            Marker::Harness { .. } | Marker::Edit { .. } => None,
        }
    }

    /// The marker a message is, if it is one.
    pub fn of(m: &Message) -> Option<Marker> {
        of_meta(&m.meta)
    }

    /// The `meta.cairn` object of a rung's marker; `id_at` gives the id of the message at a depth, written beside
    /// the depths for people reading the store.
    pub fn to_meta(&self, id_at: &dyn Fn(usize) -> Option<String>) -> Value {
        let depths = |refs: &[Ref]| -> (Vec<usize>, Vec<String>) {
            refs.iter()
                .filter_map(|r| match r {
                    Ref::Depth(d) => Some((*d, id_at(*d).unwrap_or_default())),
                    _ => None,
                })
                .unzip()
        };
        let depth = |r: &Ref| match r {
            Ref::Depth(d) => json!(d),
            _ => Value::Null,
        };
        let id = |r: &Ref| match r {
            Ref::Depth(d) => json!(id_at(*d)),
            Ref::Id(i) | Ref::Source(i) => json!(i),
        };
        match self {
            Marker::Elide { at, .. } => {
                let (d, ids) = depths(at);
                json!({"kind": KIND_COMPACTION, "strategy": "elide", "at": d, "messages": ids})
            }
            Marker::Images { at } => {
                let (d, ids) = depths(at);
                json!({"kind": KIND_COMPACTION, "strategy": "images", "at": d, "messages": ids})
            }
            Marker::Snapshot { from, to, shape } => {
                let mut v = json!({"kind": KIND_COMPACTION, "strategy": "snapshot",
                    "span": [depth(from), depth(to)], "from": id(from), "to": id(to), "profile": shape.profile});
                if let Some((w, h)) = shape.cell {
                    v["cell"] = json!([w, h]);
                }
                if let Some(n) = &shape.name {
                    v["shape"] = json!(n);
                }
                v
            }
            Marker::Summary { from, to, summary } => json!({"kind": KIND_COMPACTION,
                "strategy": "summary", "span": [depth(from), depth(to)], "from": id(from), "to": id(to),
                "summary": summary}),
            Marker::Harness {
                harness,
                kept,
                sends_text,
            } => {
                let kept = match kept {
                    Kept::Nothing => Value::Null,
                    Kept::From(r) => json!({"from": depth(r)}),
                    Kept::Each(rs) => json!({"each": rs.iter().map(depth).collect::<Vec<_>>()}),
                    Kept::AfterSummary { summary, each } => json!({
                        "each": each.iter().map(depth).collect::<Vec<_>>(),
                        "after": depth(summary),
                    }),
                    Kept::UserPrompts(t) => json!({"user_prompts": t}),
                    Kept::Around { head, each } => json!({
                        "each": each.iter().map(depth).collect::<Vec<_>>(),
                        "summary_after": head,
                    }),
                };
                json!({"kind": KIND_COMPACTION, "harness": harness, "kept": kept, "sends_text": sends_text})
            }
            Marker::Edit { at, replacement } => {
                let replacement = replacement.as_ref().map(|b| {
                    crate::wire::blocks_to_json(b, &crate::wire::Images::Blob).unwrap_or_default()
                });
                json!({"kind": KIND_COMPACTION, "strategy": "edit", "at": depth(at), "message": id(at),
                       "replacement": replacement})
            }
        }
    }
}

/// A harness marker's `meta.cairn`, as a reader writes it.
pub fn harness_meta(harness: &str, kept: Kept, sends_text: bool) -> Value {
    Marker::Harness {
        harness: harness.to_string(),
        kept,
        sends_text,
    }
    .to_meta(&|_| None)
}

/// A harness marker's `meta.cairn` for a compaction whose text the harness sent but never recorded (Aider's
/// summary): the marker's own text stands in for it, and what it cost is learned from what the provider measured
/// after such compactions ([`crate::reclaim::replay`]).
pub fn unrecorded_harness_meta(harness: &str, kept: Kept) -> Value {
    let mut v = harness_meta(harness, kept, true);
    v[crate::model::cairn_meta::UNRECORDED] = json!(true);
    v
}

/// Whether a marker message's meta says the harness never recorded the text it sent ([`unrecorded_harness_meta`]).
pub fn is_unrecorded(meta: &Value) -> bool {
    meta.get("cairn")
        .and_then(|c| c.get(crate::model::cairn_meta::UNRECORDED))
        .and_then(Value::as_bool)
        == Some(true)
}

fn refs(v: Option<&Value>, make: fn(&Value) -> Option<Ref>) -> Vec<Ref> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(make).collect())
        .unwrap_or_default()
}

/// What a provider returned with a compaction it made that cairn cannot show as text (OpenAI's opaque compaction
/// item), kept in its marker (`meta.cairn.kept`) so nothing it gave is lost and its own API can read it back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderKept {
    pub provider: String,
    pub item: Value,
}

/// The `meta` of a marker cairn writes: the marker, the rung's parameters (`params`: the protect window it ran
/// with) and what a provider kept.
pub fn marker_meta(
    marker: &Marker,
    id_at: &dyn Fn(usize) -> Option<String>,
    protect_tokens: u64,
    kept: Option<&ProviderKept>,
) -> Value {
    let mut c = marker.to_meta(id_at);
    c["params"] = json!({ "protect_tokens": protect_tokens });
    if let Some(k) = kept {
        c["kept"] = json!(k);
    }
    json!({ "cairn": c })
}

/// What a provider kept of the compaction a marker message records (see [`ProviderKept`]), if it kept anything.
pub fn provider_kept(m: &Message) -> Option<ProviderKept> {
    let k = m.meta.get("cairn")?.get("kept")?;
    Some(ProviderKept {
        provider: k.get("provider")?.as_str()?.to_string(),
        item: k.get("item").filter(|i| i.is_object())?.clone(),
    })
}

fn depth_ref(v: &Value) -> Option<Ref> {
    v.as_u64().map(|d| Ref::Depth(d as usize))
}

fn id_ref(v: &Value) -> Option<Ref> {
    v.as_str().map(|s| Ref::Id(s.to_string()))
}

fn of_meta(meta: &Value) -> Option<Marker> {
    let c = meta.get("cairn")?;
    if c.get("kind")?.as_str()? != KIND_COMPACTION {
        return None;
    }
    let s = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
    // a span of depths, or (older markers) the ids at its ends
    let span = || -> Option<(Ref, Ref)> {
        match c.get("span").and_then(Value::as_array) {
            Some(a) if a.len() == 2 && a.iter().all(Value::is_u64) => {
                Some((depth_ref(&a[0])?, depth_ref(&a[1])?))
            }
            _ => Some((Ref::Id(s("from")?), Ref::Id(s("to")?))),
        }
    };
    match c.get("strategy").and_then(Value::as_str) {
        Some("elide") => Some(match c.get("at") {
            Some(at) => Marker::Elide {
                at: refs(Some(at), depth_ref),
                legacy_tool_ids: Vec::new(),
            },
            None => Marker::Elide {
                at: Vec::new(),
                legacy_tool_ids: c
                    .get("elided")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            },
        }),
        Some("images") => Some(Marker::Images {
            at: match c.get("at") {
                Some(at) => refs(Some(at), depth_ref),
                None => refs(c.get("pruned"), id_ref),
            },
        }),
        Some("snapshot") => {
            let (from, to) = span()?;
            let cell = c.get("cell").and_then(Value::as_array).and_then(|a| {
                Some((
                    u32::try_from(a.first()?.as_u64()?).ok()?,
                    u32::try_from(a.get(1)?.as_u64()?).ok()?,
                ))
            });
            Some(Marker::Snapshot {
                from,
                to,
                shape: Shape {
                    profile: s("profile").unwrap_or_else(|| "claude-hires".into()),
                    cell,
                    name: s("shape"),
                },
            })
        }
        Some("summary") => {
            let (from, to) = span()?;
            Some(Marker::Summary {
                from,
                to,
                summary: s("summary").unwrap_or_default(),
            })
        }
        Some("edit") => Some(Marker::Edit {
            at: depth_ref(c.get("at")?)?,
            replacement: match c.get("replacement") {
                None | Some(Value::Null) => None,
                Some(v) => Some(crate::wire::blocks_from_json(v, "context edit").ok()?),
            },
        }),
        Some(_) => None,
        None => Some(harness_of(meta, c)),
    }
}

/// A harness's compaction: the current form (`harness`, `kept`, `sends_text`), or what readers wrote before it
/// (told apart by `meta.source`).
fn harness_of(meta: &Value, c: &Value) -> Marker {
    if let Some(h) = c.get("harness").and_then(Value::as_str) {
        let k = c.get("kept");
        let kept = if let Some(d) = k.and_then(|k| k.get("from")).and_then(depth_ref) {
            Kept::From(d)
        } else if let Some(each) = k.and_then(|k| k.get("each")) {
            let head = k
                .and_then(|k| k.get("summary_after"))
                .and_then(Value::as_u64);
            match (k.and_then(|k| k.get("after")).and_then(depth_ref), head) {
                (Some(summary), _) => Kept::AfterSummary {
                    summary,
                    each: refs(Some(each), depth_ref),
                },
                (None, Some(head)) => Kept::Around {
                    head: usize::try_from(head).unwrap_or(usize::MAX),
                    each: refs(Some(each), depth_ref),
                },
                (None, None) => Kept::Each(refs(Some(each), depth_ref)),
            }
        } else if let Some(t) = k
            .and_then(|k| k.get("user_prompts"))
            .and_then(Value::as_u64)
        {
            Kept::UserPrompts(t)
        } else {
            Kept::Nothing
        };
        return Marker::Harness {
            harness: h.to_string(),
            kept,
            sends_text: c.get("sends_text").and_then(Value::as_bool).unwrap_or(true),
        };
    }
    let source = meta.get("source").and_then(Value::as_str).unwrap_or("");
    match source {
        "pi" => Marker::Harness {
            harness: "pi".into(),
            kept: meta
                .get("entry")
                .and_then(|e| e.get("firstKeptEntryId"))
                .and_then(Value::as_str)
                .map_or(Kept::Nothing, |id| Kept::From(Ref::Source(id.to_string()))),
            sends_text: true,
        },
        "codex" => Marker::Harness {
            harness: "codex".into(),
            kept: Kept::UserPrompts(CODEX_USER_PROMPT_TOKENS),
            sends_text: true,
        },
        other => Marker::Harness {
            harness: if other.is_empty() {
                "unknown".into()
            } else {
                other.to_string()
            },
            kept: Kept::Nothing,
            sends_text: false,
        },
    }
}

/// How many tokens of the user's earlier prompts Codex keeps after a local compaction.
pub const CODEX_USER_PROMPT_TOKENS: u64 = 20_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    fn message(meta: Value) -> Message {
        Message {
            id: "m".into(),
            parent: None,
            conversation: "c".into(),
            role: Role::System,
            content: vec![],
            created_at: 0,
            meta,
            usage: None,
            depth: 0,
        }
    }

    #[test]
    fn every_written_form_reads_back() {
        let ids = |d: usize| Some(format!("id{d}"));
        for m in [
            Marker::Elide {
                at: vec![Ref::Depth(3), Ref::Depth(5)],
                legacy_tool_ids: vec![],
            },
            Marker::Images {
                at: vec![Ref::Depth(2)],
            },
            Marker::Snapshot {
                from: Ref::Depth(2),
                to: Ref::Depth(9),
                shape: Shape {
                    profile: "claude".into(),
                    cell: Some((6, 12)),
                    name: None,
                },
            },
            Marker::Summary {
                from: Ref::Depth(2),
                to: Ref::Depth(9),
                summary: "done".into(),
            },
            Marker::Harness {
                harness: "pi".into(),
                kept: Kept::From(Ref::Depth(7)),
                sends_text: true,
            },
            Marker::Harness {
                harness: "claude-code".into(),
                kept: Kept::Each(vec![Ref::Depth(1), Ref::Depth(2)]),
                sends_text: false,
            },
            Marker::Harness {
                harness: "codex".into(),
                kept: Kept::UserPrompts(20_000),
                sends_text: true,
            },
            Marker::Harness {
                harness: "openhands".into(),
                kept: Kept::Around {
                    head: 2,
                    each: vec![Ref::Depth(0), Ref::Depth(1), Ref::Depth(10)],
                },
                sends_text: true,
            },
        ] {
            let meta = json!({"cairn": m.to_meta(&ids)});
            assert_eq!(Marker::of(&message(meta)), Some(m));
        }
    }

    #[test]
    fn markers_written_before_depths_still_read() {
        let old = json!({"cairn": {"kind": "compaction", "strategy": "snapshot", "from": "a", "to": "b",
                                    "profile": "claude-hires"}});
        assert_eq!(
            Marker::of(&message(old)),
            Some(Marker::Snapshot {
                from: Ref::Id("a".into()),
                to: Ref::Id("b".into()),
                shape: Shape {
                    profile: "claude-hires".into(),
                    cell: None,
                    name: None
                }
            })
        );
        let old =
            json!({"cairn": {"kind": "compaction", "strategy": "elide", "elided": ["t1", "t2"]}});
        assert!(matches!(Marker::of(&message(old)),
            Some(Marker::Elide { legacy_tool_ids, .. }) if legacy_tool_ids == ["t1", "t2"]));
        let pi = json!({"source": "pi", "entry": {"firstKeptEntryId": "ab12cd34"},
                        "cairn": {"kind": "compaction"}});
        assert_eq!(
            Marker::of(&message(pi)),
            Some(Marker::Harness {
                harness: "pi".into(),
                kept: Kept::From(Ref::Source("ab12cd34".into())),
                sends_text: true
            })
        );
        let cc = json!({"source": "claude-code", "cairn": {"kind": "compaction"}});
        assert!(matches!(
            Marker::of(&message(cc)),
            Some(Marker::Harness {
                sends_text: false,
                ..
            })
        ));
        assert_eq!(
            Marker::of(&message(json!({"cairn": {"kind": "digest"}}))),
            None
        );
    }
}
