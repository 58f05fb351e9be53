//! A path as the reclaim module reads it: the stored heads (ids, roles, flags) and measures of every message, and
//! the compaction markers on it with the messages they name resolved to places on the path. Nothing else of a body
//! is decoded until a request is built ([`crate::reclaim::assemble::materialize`]).

use serde_json::Value;

use super::marker::{Kept, Marker, Ref, Shape};
use crate::model::{Message, model_of};
use crate::store::{Facts, Head, Store, StoreError};

/// A marker on a path, the messages it names as indices of the path.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// The marker's own index on the path ([`VIRTUAL`] for one planned but not written).
    pub at: usize,
    pub marker: Resolved,
}

/// The `at` of a marker that is only planned (a comparison, a preview): it applies to the whole path.
pub const VIRTUAL: usize = usize::MAX;

/// A marker with its references resolved to path indices.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    Elide(Vec<usize>),
    Images(Vec<usize>),
    Snapshot {
        from: usize,
        to: usize,
        shape: Shape,
    },
    Summary {
        from: usize,
        to: usize,
        summary: String,
    },
    Harness {
        harness: String,
        kept: KeptAt,
        sends_text: bool,
    },
    /// The message at `target` is left out of the context (no replacement) or sent with this content instead.
    Edit {
        target: usize,
        replacement: Option<Vec<crate::model::Block>>,
    },
}

impl Resolved {
    /// Whether the context after it is laid out anew: a harness's compaction, a summary (cairn's rung, a
    /// provider's compaction) or a snapshot sends something new in place of the middle, so a prompt measured
    /// before it says little of the next (on the samples' harness compactions the next is closer from scratch).
    /// Elision, pruned images and an edit take out only what they touch: the rest of what the last measured prompt
    /// held is still sent, and the next is that prompt less what they took.
    pub fn lays_out_anew(&self) -> bool {
        matches!(
            self,
            Resolved::Harness { .. } | Resolved::Summary { .. } | Resolved::Snapshot { .. }
        )
    }
}

/// What a harness kept, as path indices.
#[derive(Debug, Clone, PartialEq)]
pub enum KeptAt {
    Nothing,
    From(usize),
    Each(Vec<usize>),
    /// The harness's summary message (after the marker) first, then these.
    AfterSummary {
        summary: usize,
        each: Vec<usize>,
    },
    UserPrompts(u64),
    /// These, the marker's summary sent after the first `head` of them.
    Around {
        head: usize,
        each: Vec<usize>,
    },
}

/// A path: heads and measures of every message root to end, and its markers.
#[derive(Debug, Clone)]
pub struct PathView {
    pub conversation: String,
    /// The harness that wrote it (`claude-code`, `pi`, `codex`, ...; `cairn` for conversations made here): its
    /// hidden context (system prompt, tools, reminders) is alike across its sessions.
    pub harness: String,
    /// The harness's version, where it recorded one, and whether the session is a subagent's: sessions alike in
    /// both have alike system prompts and tools.
    pub harness_version: Option<String>,
    pub subagent: bool,
    /// The context window the harness ran each model with, where it said so (Codex's `model_context_window`, by
    /// model name): the conversation's prompts were held to it.
    pub ran_with: std::collections::BTreeMap<String, u64>,
    /// Shared with the copies a recount makes ([`PathView::retokenized`]): a recount changes the measures only.
    pub heads: std::sync::Arc<Vec<Head>>,
    /// `branches[i]`: message `i` has another child off this path (an edit or a rewind branched there).
    pub branches: Vec<bool>,
    pub facts: Vec<Facts>,
    pub markers: Vec<Placed>,
    /// Bodies held in memory (a view built from messages); otherwise they are read from the store on demand.
    memory: Option<Vec<Message>>,
}

impl PathView {
    /// The active path of a conversation (or the path to `at`), from the store: one index scan for the heads, one
    /// range scan for the measures, and the bodies of the markers only.
    pub fn load(
        store: &Store,
        conversation: &str,
        at: Option<&str>,
    ) -> Result<PathView, StoreError> {
        let conversation = store.resolve_conversation(conversation)?;
        let crate::store::PathHeads { heads, branches } =
            store.branching_path(&conversation, at)?;
        let facts = store.facts(&conversation, &heads)?;
        let meta = store.conversation_meta(&conversation)?;
        let text = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_string);
        let mut view = PathView {
            conversation,
            harness: text("source").unwrap_or_else(|| "cairn".into()),
            harness_version: text("harness_version"),
            subagent: meta.get("subagent").and_then(Value::as_bool) == Some(true)
                || crate::model::CairnMeta::linked_to(&meta).is_some(),
            ran_with: meta
                .get("windows")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(m, w)| Some((m.clone(), w.as_u64()?)))
                .collect(),
            heads: std::sync::Arc::new(heads),
            branches,
            facts,
            markers: Vec::new(),
            memory: None,
        };
        view.place_markers(Some(store))?;
        Ok(view)
    }

    /// A path held in memory (tests, a path not stored): heads and measures computed from the messages.
    pub fn from_messages(conversation: &str, messages: Vec<Message>) -> PathView {
        let facts: Vec<Facts> = messages
            .iter()
            .map(|m| Facts {
                measure: crate::models::measure(
                    &m.content,
                    model_of(&m.meta),
                    m.usage.as_ref(),
                    crate::tokens::Tokenizer::Estimate,
                ),
                model: crate::models::priced_model(&m.meta)
                    .map(|m| std::sync::Arc::from(m.as_ref())),
                usage: m.usage,
                created_at: m.created_at,
                beside: m.cairn_kind() == Some(crate::model::KIND_COMPACTION),
            })
            .collect();
        // each message measured once: its head's estimate is its measure's total
        let heads: Vec<Head> = messages
            .iter()
            .zip(&facts)
            .enumerate()
            .map(|(i, (m, f))| Head::of_message(m, i as i64, f.measure.tokens()))
            .collect();
        let mut view = PathView {
            conversation: conversation.to_string(),
            harness: "cairn".into(),
            harness_version: None,
            subagent: false,
            ran_with: Default::default(),
            branches: vec![false; heads.len()],
            heads: std::sync::Arc::new(heads),
            facts,
            markers: Vec::new(),
            memory: Some(messages),
        };
        // held in memory: resolving needs no store and cannot fail
        if view.place_markers(None).is_err() {
            view.markers.clear();
        }
        view
    }

    /// This view counted by `tk`: the same path with its messages measured by `tk` (what was counted before read
    /// back, the rest decoded a chunk at a time and kept), in place. What a model with a public tokenizer is
    /// counted with.
    pub fn counted_by(
        mut self,
        store: Option<&Store>,
        tk: crate::tokens::Tokenizer,
    ) -> Result<PathView, StoreError> {
        if tk == crate::tokens::Tokenizer::Estimate {
            return Ok(self);
        }
        // what the store measured that text does not say (stored images' bytes) stays
        let set = |f: &mut Facts, mut me: crate::tokens::Measure| {
            me.image_bytes = f.measure.image_bytes;
            me.large_result_image_bytes = f.measure.large_result_image_bytes;
            f.measure = me;
        };
        // a stored path's messages are counted once per tokenizer: what was counted before is read back
        let kept = store.filter(|_| self.memory.is_none());
        for lo in (0..self.len()).step_by(1024) {
            let idx = lo..(lo + 1024).min(self.len());
            let seqs: Vec<i64> = idx.clone().map(|i| self.heads[i].seq).collect();
            let held = match kept {
                Some(s) => s.recounts(&seqs, tk)?,
                None => vec![None; seqs.len()],
            };
            let mut missing = Vec::new();
            for (i, me) in idx.zip(held) {
                match me {
                    Some(me) => set(&mut self.facts[i], me),
                    None => missing.push(i),
                }
            }
            if missing.is_empty() {
                continue;
            }
            let bodies = self.bodies(store, &missing)?;
            let made = measured_by(&self.facts, &missing, &bodies, tk);
            let mut counted = Vec::with_capacity(missing.len());
            for (&i, me) in missing.iter().zip(made) {
                counted.push((self.heads[i].seq, me));
                set(&mut self.facts[i], me);
            }
            if let Some(s) = kept {
                s.keep_recounts(&counted, tk)?;
            }
        }
        Ok(self)
    }

    /// [`PathView::counted_by`] on a copy, this view kept as it is.
    pub fn retokenized(
        &self,
        store: Option<&Store>,
        tk: crate::tokens::Tokenizer,
    ) -> Result<PathView, StoreError> {
        self.clone().counted_by(store, tk)
    }

    /// Whether the path's bodies are in the store (a view loaded from it), not held in memory.
    pub fn is_stored(&self) -> bool {
        self.memory.is_none()
    }

    pub fn len(&self) -> usize {
        self.heads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Whether the compaction at path index `i` lays the context out anew ([`Resolved::lays_out_anew`]; a marker
    /// that cannot be resolved is taken to).
    pub fn lays_out_anew(&self, i: usize) -> bool {
        self.heads[i].is_compaction()
            && self
                .markers
                .iter()
                .find(|p| p.at == i)
                .is_none_or(|p| p.marker.lays_out_anew())
    }

    /// Whether the marker at path index `i` is a harness's own compaction (Claude Code's, pi's, Codex's), not
    /// one of cairn's rungs.
    pub fn is_harness_compaction(&self, i: usize) -> bool {
        self.markers
            .iter()
            .any(|p| p.at == i && matches!(p.marker, Resolved::Harness { .. }))
    }

    /// The window the harness said it ran `model` with in this conversation (by name, or by the model's key).
    pub fn ran_with(&self, model: &str) -> Option<u64> {
        let key = crate::models::key_or_raw(model);
        self.ran_with.get(model).copied().or_else(|| {
            self.ran_with
                .iter()
                .find(|(m, _)| crate::models::key_or_raw(m) == key)
                .map(|(_, &w)| w)
        })
    }

    /// The model of the newest reply that names one (a name that is no model, such as Claude Code's
    /// `<synthetic>`, is skipped).
    pub fn model(&self) -> Option<&str> {
        self.facts
            .iter()
            .rev()
            .filter_map(|f| f.model.as_deref())
            .find(|m| crate::models::key(m).is_some())
    }

    /// The messages at these path indices, in the given order.
    pub fn bodies(&self, store: Option<&Store>, idx: &[usize]) -> Result<Vec<Message>, StoreError> {
        if let Some(mem) = &self.memory {
            return Ok(idx.iter().filter_map(|&i| mem.get(i).cloned()).collect());
        }
        let Some(store) = store else {
            return Err(StoreError::Corrupt {
                id: self.conversation.clone(),
                reason: "a stored path's bodies were asked for without its store".into(),
            });
        };
        let heads: Vec<Head> = idx
            .iter()
            .filter_map(|&i| self.heads.get(i).cloned())
            .collect();
        store.load(&self.conversation, &heads)
    }

    /// Index on the path of a message id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.heads.iter().position(|h| h.id == id)
    }

    fn place_markers(&mut self, store: Option<&Store>) -> Result<(), StoreError> {
        let at: Vec<usize> = (0..self.heads.len())
            .filter(|&i| self.heads[i].is_compaction())
            .collect();
        let bodies = self.bodies(store, &at)?;
        let mut placed = Vec::with_capacity(at.len());
        for (i, m) in at.into_iter().zip(&bodies) {
            if let Some(mk) = Marker::of(m)
                && let Some(r) = self.resolve(store, i, &mk)?
            {
                placed.push(Placed { at: i, marker: r });
            }
        }
        self.markers = placed;
        Ok(())
    }

    /// A marker's references as indices of this path (before `at`); None when the messages it names are not on
    /// this path (a marker copied by a fork keeps its depths, so this happens only to old id-named markers).
    pub fn resolve(
        &self,
        store: Option<&Store>,
        at: usize,
        m: &Marker,
    ) -> Result<Option<Resolved>, StoreError> {
        let end = at.min(self.heads.len());
        let one = |r: &Ref| -> Result<Option<usize>, StoreError> {
            Ok(match r {
                Ref::Depth(d) => (*d < end).then_some(*d),
                Ref::Id(id) => self.heads[..end].iter().rposition(|h| &h.id == id),
                Ref::Source(s) => self.find_source(store, end, s)?,
            })
        };
        let many = |rs: &[Ref]| -> Result<Vec<usize>, StoreError> {
            let mut out = Vec::with_capacity(rs.len());
            for r in rs {
                out.extend(one(r)?);
            }
            Ok(out)
        };
        Ok(match m {
            Marker::Elide {
                at: refs,
                legacy_tool_ids,
            } => {
                let mut idx = many(refs)?;
                if !legacy_tool_ids.is_empty() {
                    idx.extend(self.holding_results(store, end, legacy_tool_ids)?);
                }
                Some(Resolved::Elide(idx))
            }
            Marker::Images { at: refs } => Some(Resolved::Images(many(refs)?)),
            Marker::Snapshot { from, to, shape } => match (one(from)?, one(to)?) {
                (Some(from), Some(to)) => Some(Resolved::Snapshot {
                    from,
                    to,
                    shape: shape.clone(),
                }),
                _ => None,
            },
            Marker::Summary { from, to, summary } => match (one(from)?, one(to)?) {
                (Some(from), Some(to)) => Some(Resolved::Summary {
                    from,
                    to,
                    summary: summary.clone(),
                }),
                _ => None,
            },
            Marker::Harness {
                harness,
                kept,
                sends_text,
            } => Some(Resolved::Harness {
                harness: harness.clone(),
                kept: match kept {
                    Kept::Nothing => KeptAt::Nothing,
                    Kept::From(r) => one(r)?.map_or(KeptAt::Nothing, KeptAt::From),
                    Kept::Each(rs) => KeptAt::Each(many(rs)?),
                    // the summary follows the marker: named by its depth, on this path
                    Kept::AfterSummary { summary, each } => match summary {
                        Ref::Depth(d) if *d > at && *d < self.heads.len() => KeptAt::AfterSummary {
                            summary: *d,
                            each: many(each)?,
                        },
                        _ => KeptAt::Each(many(each)?),
                    },
                    Kept::UserPrompts(t) => KeptAt::UserPrompts(*t),
                    Kept::Around { head, each } => KeptAt::Around {
                        head: *head,
                        each: many(each)?,
                    },
                },
                sends_text: *sends_text,
            }),
            Marker::Edit { at, replacement } => one(at)?.map(|target| Resolved::Edit {
                target,
                replacement: replacement.clone(),
            }),
        })
    }

    /// The newest message before `end` whose harness entry id is `source` (decoding backwards, a chunk at a time).
    fn find_source(
        &self,
        store: Option<&Store>,
        end: usize,
        source: &str,
    ) -> Result<Option<usize>, StoreError> {
        let mut hi = end;
        while hi > 0 {
            let lo = hi.saturating_sub(256);
            let idx: Vec<usize> = (lo..hi).collect();
            let bodies = self.bodies(store, &idx)?;
            for (i, m) in idx.iter().zip(&bodies).rev() {
                if source_ids(&m.meta).any(|s| s == source) {
                    return Ok(Some(*i));
                }
            }
            hi = lo;
        }
        Ok(None)
    }

    /// The messages before `end` holding a result for one of these tool calls (old elision markers).
    fn holding_results(
        &self,
        store: Option<&Store>,
        end: usize,
        tool_ids: &[String],
    ) -> Result<Vec<usize>, StoreError> {
        let want: std::collections::HashSet<&str> = tool_ids.iter().map(String::as_str).collect();
        let idx: Vec<usize> = (0..end)
            .filter(|&i| self.heads[i].has_tool_result())
            .collect();
        let bodies = self.bodies(store, &idx)?;
        Ok(idx
            .into_iter()
            .zip(&bodies)
            .filter(|(_, m)| m.tool_result_ids().any(|t| want.contains(t)))
            .map(|(i, _)| i)
            .collect())
    }
}

/// The harness's own ids of the entries a message was read from (pi's entry id, Claude Code's line uuids).
fn source_ids(meta: &Value) -> impl Iterator<Item = &str> {
    let entry = meta
        .get("entry")
        .and_then(|e| e.get("id"))
        .and_then(Value::as_str);
    let lines = meta
        .get("lines")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|l| l.get("uuid").and_then(Value::as_str));
    entry.into_iter().chain(lines)
}

/// What `tk` makes of each of `bodies` (the messages at path indices `idx`, whose facts are `facts`), on as many
/// threads as there are cores: a tokenizer over long text is what counting a path again costs.
fn measured_by(
    facts: &[Facts],
    idx: &[usize],
    bodies: &[Message],
    tk: crate::tokens::Tokenizer,
) -> Vec<crate::tokens::Measure> {
    let one = |(&i, m): (&usize, &Message)| {
        let f = &facts[i];
        crate::models::measure(&m.content, f.model.as_deref(), f.usage.as_ref(), tk)
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads <= 1 || bodies.len() < 64 {
        return idx.iter().zip(bodies).map(one).collect();
    }
    let per = bodies.len().div_ceil(threads);
    let parts: Vec<Option<Vec<crate::tokens::Measure>>> = std::thread::scope(|s| {
        let handles: Vec<_> = idx
            .chunks(per)
            .zip(bodies.chunks(per))
            .map(|(i, b)| s.spawn(move || i.iter().zip(b).map(one).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    });
    // a part whose thread failed is counted again here, so every message is counted
    parts
        .into_iter()
        .zip(idx.chunks(per).zip(bodies.chunks(per)))
        .flat_map(|(made, (i, b))| made.unwrap_or_else(|| i.iter().zip(b).map(one).collect()))
        .collect()
}
