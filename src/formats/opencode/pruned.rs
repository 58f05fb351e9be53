//! What opencode took out of the context without writing a message: the old tool outputs its prune cleared, and
//! the messages a compaction kept after its summary.
//!
//! After a user's turn ends (`SessionCompaction.prune`, on where `compaction.prune` is set), opencode walks back
//! past the newest 40,000 tokens of tool output and, when more than 20,000 tokens are older than that, stamps each
//! older completed tool part with `state.time.compacted`; from then on it sends `[Old tool result content cleared]`
//! in place of the output (`MessageV2.toModelMessages`). The output stays in the session. A compaction part may
//! name `tail_start_id`: the recent turns it kept verbatim, which opencode sends after the summary
//! (`filterCompacted`: the compaction's request, the summary, the kept turns, what came after).
//!
//! Both are markers on the path here: a prune is an elision marker where it happened (by its time, after the last
//! message written before it), naming the messages holding the results it cleared; a compaction's marker keeps
//! the messages from `tail_start_id` to the summary. Placing the prune markers shifts the messages after them, so
//! both are written once every message is built.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::super::{ImportReport, note};
use crate::model::{NewMessage, Role};
use crate::reclaim::marker::{Kept, Marker, Ref, harness_meta};

/// The compaction markers and the prunes of one session, by the index of the messages as built (before placing).
#[derive(Debug, Default)]
pub struct Placed {
    /// (the marker's index, the messages it keeps).
    compactions: Vec<(usize, Vec<usize>)>,
    /// (when the prune cleared it, the message holding the results).
    pruned: Vec<(i64, usize)>,
}

/// When opencode's prune cleared the outputs of a step's tool parts (the earliest, where it cleared any).
pub fn cleared_at(parts: &[Value]) -> Option<i64> {
    parts
        .iter()
        .filter(|p| p["type"] == "tool" && p.pointer("/state/status") == Some(&json!("completed")))
        .filter_map(|p| p.pointer("/state/time/compacted").and_then(Value::as_i64))
        .min()
}

/// The message a compaction request kept from (`tail_start_id` of its `compaction` part).
pub fn tail_start(asked: &Value) -> Option<String> {
    asked["parts"]
        .as_array()?
        .iter()
        .find(|p| p["type"] == "compaction")?
        .get("tail_start_id")?
        .as_str()
        .map(str::to_string)
}

impl Placed {
    /// The results message `at` was cleared at `time`.
    pub fn prune(&mut self, time: i64, at: usize) {
        self.pruned.push((time, at));
    }

    /// The compaction marker `at` keeps these messages after its summary.
    pub fn compaction(&mut self, at: usize, kept: Vec<usize>) {
        self.compactions.push((at, kept));
    }

    /// The messages with each prune's marker placed after the last message written before it, and every marker's
    /// references to the messages where they now are.
    pub fn place(self, built: Vec<NewMessage>, report: &mut ImportReport) -> Vec<NewMessage> {
        // each prune goes before the first message after what it cleared written after it (at the end: it clears
        // what the next request sends)
        let mut before: BTreeMap<usize, (i64, Vec<usize>)> = BTreeMap::new();
        for &(time, at) in &self.pruned {
            let pos = (at + 1..built.len())
                .find(|&j| built[j].created_at.is_some_and(|c| c > time))
                .unwrap_or(built.len());
            let e = before.entry(pos).or_insert((time, Vec::new()));
            e.0 = e.0.min(time);
            e.1.push(at);
        }
        let n = built.len();
        let mut moved: Vec<usize> = Vec::with_capacity(n);
        let mut out = Vec::with_capacity(n + before.len());
        let mut cleared = 0;
        // the prune marker before message `pos`: what it clears is before it, so already where it now is
        let mut marker = |pos: usize, moved: &[usize], out: &mut Vec<NewMessage>| {
            let Some((time, at)) = before.remove(&pos) else {
                return;
            };
            cleared += at.len();
            let elide = Marker::Elide {
                at: at.iter().map(|i| Ref::Depth(moved[*i])).collect(),
                legacy_tool_ids: Vec::new(),
            };
            let mut m = note(
                Role::System,
                format!(
                    "opencode cleared the old tool outputs of {} step(s) from the context (prune)",
                    at.len()
                ),
                json!({"source": "opencode", "pruned_at": time, "cairn": elide.to_meta(&|_| None)}),
            );
            m.created_at = Some(time);
            out.push(m);
        };
        for (i, m) in built.into_iter().enumerate() {
            marker(i, &moved, &mut out);
            moved.push(out.len());
            out.push(m);
        }
        marker(n, &moved, &mut out);
        if cleared > 0 {
            report.notes.push(format!(
                "opencode's prune cleared the old tool outputs of {cleared} step(s) from the context"
            ));
        }
        for (at, kept) in self.compactions {
            let kept = if kept.is_empty() {
                Kept::Nothing
            } else {
                Kept::Each(kept.iter().map(|i| Ref::Depth(moved[*i])).collect())
            };
            out[moved[at]].meta["cairn"] = harness_meta("opencode", kept, true);
        }
        out
    }
}
