//! What cairn writes under `meta.cairn` of a message or a conversation, besides a compaction marker's own fields
//! (those are [`crate::reclaim::marker`]'s to write and read): a rewind's digest, a harness's digest of a branch it
//! left, a harness's compaction summary, a failed reply, a subagent's link to its parent, a reply `cairn send` got,
//! a change of what a harness sends beside the messages, a reply's usage its provider measured again.
//! Written and read here only, so a key is spelled once; the store's SQL reads the subagent link by
//! [`LINKED_TO_SQL`].

use serde_json::{Value, json};

use super::{KIND_COMPACT_SUMMARY, KIND_DIGEST};

/// The JSON path of a conversation's link to its parent, for the store's SQL.
pub const LINKED_TO_SQL: &str = "$.cairn.linked_to";

/// The key of a harness compaction marker's flag that the harness never recorded the text it sent (Aider's
/// summaries): the marker module writes and reads it; a merge tells readings apart by it ([`CairnMeta::reading`]).
pub const UNRECORDED: &str = "unrecorded";

/// One record cairn writes under `meta.cairn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CairnMeta<'a> {
    /// A rewind's digest: what the abandoned path found, written after the checkpoint rewound to.
    Rewound {
        checkpoint: &'a str,
        abandoned_tip: Option<&'a str>,
    },
    /// A harness's own digest of a branch it left (pi's `branch_summary`), under the harness's name.
    HarnessDigest { harness: &'a str, entry: &'a str },
    /// A harness's compaction summary, sent as the next user message (Claude Code's `isCompactSummary`).
    CompactSummary,
    /// A reply the harness recorded as failed (pi's `stopReason: error` or `aborted`); `sent_again`: whether the
    /// harness sent it again with the requests after it (pi did before 0.49.2; opencode never does).
    Failed { sent_again: bool },
    /// A subagent's conversation, linked to its parent's.
    LinkedTo(&'a str),
    /// A reply `cairn send` got.
    SentBy(&'a str),
    /// Before this message the harness changed what it sends beside the messages (Aider's files added to or
    /// dropped from the chat, a new run): the overhead measured before it no longer holds. `sends` names what the
    /// harness sends beside the messages from here on, where it can tell: a stretch that sends the same as an
    /// earlier one has its overhead.
    ContextChanged { sends: Option<&'a str> },
    /// The result of the tool call by which the harness's agent ended its turn (OpenHands' `finish`): the turn,
    /// and the run, end here, though the last message is a tool's result.
    Finished,
    /// A reply whose recorded usage the provider's own later measurement contradicts (opencode through Copilot: a
    /// step recorded with twice the uncached input the next step's cache read measured): the figure recorded. Its
    /// usage holds what was measured.
    Remeasured { recorded_input: u64 },
}

/// The key of [`CairnMeta::Remeasured`]'s recorded figure.
const RECORDED_INPUT: &str = "recorded_input";

impl CairnMeta<'_> {
    /// The record as the JSON that goes under `meta.cairn`.
    pub fn to_value(self) -> Value {
        match self {
            CairnMeta::Rewound {
                checkpoint,
                abandoned_tip,
            } => {
                json!({"kind": KIND_DIGEST, "checkpoint": checkpoint, "abandoned_tip": abandoned_tip})
            }
            CairnMeta::HarnessDigest { harness, entry } => {
                let mut v = json!({ "kind": KIND_DIGEST });
                v[harness] = json!(entry);
                v
            }
            CairnMeta::CompactSummary => json!({ "kind": KIND_COMPACT_SUMMARY }),
            CairnMeta::Failed { sent_again: true } => json!({ "failed": true }),
            CairnMeta::Failed { sent_again: false } => {
                json!({ "failed": true, "sent_again": false })
            }
            CairnMeta::LinkedTo(conversation) => json!({ "linked_to": conversation }),
            CairnMeta::SentBy(who) => json!({ "sent_by": who }),
            CairnMeta::Remeasured { recorded_input } => json!({ RECORDED_INPUT: recorded_input }),
            CairnMeta::Finished => json!({ "finished": true }),
            CairnMeta::ContextChanged { sends } => match sends {
                Some(s) => json!({ "context_changed": true, "sends": s }),
                None => json!({ "context_changed": true }),
            },
        }
    }

    /// Whether `meta` holds anything of cairn's (a marker or one of these records).
    pub fn any(meta: &Value) -> bool {
        meta.get("cairn").is_some()
    }

    /// The kind cairn recorded (`digest`, `compaction`, `compact_summary`), if any.
    pub fn kind(meta: &Value) -> Option<&str> {
        meta.get("cairn")?.get("kind")?.as_str()
    }

    /// Whether the reply was recorded as failed.
    pub fn failed(meta: &Value) -> bool {
        meta.get("cairn")
            .and_then(|c| c.get("failed"))
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// Whether the reply was recorded as failed and the harness left it out of every request after it (a failed
    /// reply recorded before cairn told these apart was sent again).
    pub fn not_sent_again(meta: &Value) -> bool {
        Self::failed(meta)
            && meta
                .get("cairn")
                .and_then(|c| c.get("sent_again"))
                .and_then(Value::as_bool)
                == Some(false)
    }

    /// Whether the harness's agent ended its turn with this tool result ([`CairnMeta::Finished`]).
    pub fn finished(meta: &Value) -> bool {
        meta.get("cairn")
            .and_then(|c| c.get("finished"))
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// Whether the harness changed what it sends beside the messages before this message
    /// ([`CairnMeta::ContextChanged`]).
    pub fn context_changed(meta: &Value) -> bool {
        meta.get("cairn")
            .and_then(|c| c.get("context_changed"))
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// What the harness sends beside the messages after a change of it, where it named it
    /// ([`CairnMeta::ContextChanged`]).
    pub fn sends(meta: &Value) -> Option<&str> {
        meta.get("cairn")?.get("sends")?.as_str()
    }

    /// What of cairn's record a harness's reader decided and the figures follow, as text: a change of what the
    /// harness sends beside the messages and what it sends after it ([`CairnMeta::ContextChanged`]), a compaction
    /// whose text was never recorded ([`UNRECORDED`]). Empty when there is none. A newer reader that tells more
    /// (Aider's files in the chat, named) reads another message, which a merge adds as the file's new reading
    /// (`crate::store`'s reading fingerprint); nothing here holds an id, so one reading reads alike every time.
    pub fn reading(meta: &Value) -> String {
        let Some(c) = meta.get("cairn") else {
            return String::new();
        };
        let mut out = String::new();
        if CairnMeta::context_changed(meta) {
            out.push_str("context_changed\0");
            out.push_str(CairnMeta::sends(meta).unwrap_or(""));
            out.push('\0');
        }
        if c.get(UNRECORDED).and_then(Value::as_bool) == Some(true) {
            out.push_str(UNRECORDED);
        }
        if let Some(r) = CairnMeta::recorded_input(meta) {
            out.push_str(&format!("{RECORDED_INPUT}={r}\0"));
        }
        out
    }

    /// The uncached input a reply's harness recorded where the provider's later measurement replaced it
    /// ([`CairnMeta::Remeasured`]).
    pub fn recorded_input(meta: &Value) -> Option<u64> {
        meta.get("cairn")?.get(RECORDED_INPUT)?.as_u64()
    }

    /// The parent conversation a subagent's conversation is linked to.
    pub fn linked_to(meta: &Value) -> Option<&Value> {
        meta.get("cairn")?.get("linked_to")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_record_reads_back_as_written() {
        let meta = |c: CairnMeta<'_>| json!({ "cairn": c.to_value() });
        let rewound = meta(CairnMeta::Rewound {
            checkpoint: "cp-1",
            abandoned_tip: Some("abc"),
        });
        assert_eq!(CairnMeta::kind(&rewound), Some(KIND_DIGEST));
        assert_eq!(rewound["cairn"]["abandoned_tip"], "abc");
        let pi = meta(CairnMeta::HarnessDigest {
            harness: "pi",
            entry: "branch_summary",
        });
        assert_eq!(
            pi["cairn"].to_string(),
            r#"{"kind":"digest","pi":"branch_summary"}"#
        );
        assert!(CairnMeta::failed(&meta(CairnMeta::Failed {
            sent_again: true
        })));
        assert!(!CairnMeta::not_sent_again(&meta(CairnMeta::Failed {
            sent_again: true
        })));
        assert!(CairnMeta::not_sent_again(&meta(CairnMeta::Failed {
            sent_again: false
        })));
        assert!(!CairnMeta::failed(&pi));
        assert_eq!(
            CairnMeta::linked_to(&meta(CairnMeta::LinkedTo("c1"))),
            Some(&json!("c1"))
        );
        assert_eq!(
            CairnMeta::kind(&meta(CairnMeta::CompactSummary)),
            Some(KIND_COMPACT_SUMMARY)
        );
        assert!(CairnMeta::any(&meta(CairnMeta::SentBy("cairn send"))));
        assert!(!CairnMeta::any(&json!({"model": "m"})));
        let changed = meta(CairnMeta::ContextChanged {
            sends: Some("m\na.rs"),
        });
        assert!(CairnMeta::context_changed(&changed));
        assert_eq!(CairnMeta::sends(&changed), Some("m\na.rs"));
        let unnamed = meta(CairnMeta::ContextChanged { sends: None });
        assert!(CairnMeta::context_changed(&unnamed));
        assert_eq!(CairnMeta::sends(&unnamed), None);
        assert!(!CairnMeta::context_changed(&pi));
        // what a reading decided: the change and what is sent after it, an unrecorded text; nothing else
        assert_eq!(CairnMeta::reading(&changed), "context_changed\0m\na.rs\0");
        assert_ne!(CairnMeta::reading(&changed), CairnMeta::reading(&unnamed));
        assert_eq!(CairnMeta::reading(&pi), "");
        assert_eq!(CairnMeta::reading(&json!({"model": "m"})), "");
        assert_eq!(
            CairnMeta::reading(&json!({"cairn": {"kind": "compaction", UNRECORDED: true}})),
            UNRECORDED
        );
    }
}
