//! Actions on the tree: conversations, turns, tips, forks, checkpoints, the operation log, the path.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{Action, Env, misrouted};
use super::{CommandError, Outcome, Progress};
use crate::model::NewMessage;
use crate::reclaim::SentMessage;
use crate::store::{Budget, Store};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    let Env {
        store,
        progress,
        cancel,
        ..
    } = env;
    match action {
        A::Append {
            conversation,
            messages,
        } => append(store, &conversation, &messages),
        A::Branch {
            conversation,
            message,
            expect,
        } => branch(store, &conversation, &message, expect.as_deref()),
        A::Fork { conversation, at } => fork(store, &conversation, at.as_deref()),
        A::Checkpoint {
            conversation,
            label,
        } => checkpoint(store, &conversation, label),
        A::Rewind {
            conversation,
            label,
            digest,
        } => rewind(store, &conversation, &label, &digest),
        A::Undo { conversation } => undo(store, &conversation),
        A::Resume {
            conversation,
            budget,
            redact,
        } => resume(store, &conversation, budget, redact),
        A::List => Ok(Outcome::Conversations(store.conversations()?)),
        A::Show {
            conversation,
            redact,
        } => show(store, &conversation, redact),
        A::Tree { conversation } => Ok(Outcome::Text(store.tree_text(&conversation)?)),
        A::Check => check(store),
        A::Find {
            conversation,
            query,
        } => find(store, &conversation, &query, progress, cancel),
        A::Search(q) => Ok(Outcome::Searched(crate::search::search(store, &q)?)),
        _ => Err(misrouted()),
    }
}

pub(super) fn append(
    store: &mut Store,
    conversation: &str,
    messages: &[NewMessage],
) -> Result<Outcome, CommandError> {
    Ok(Outcome::Appended(
        store.append_turn(conversation, messages)?,
    ))
}

pub(super) fn branch(
    store: &mut Store,
    conversation: &str,
    message: &str,
    expect: Option<&str>,
) -> Result<Outcome, CommandError> {
    let conversation = store.resolve_conversation(conversation)?;
    let tip = store.branch(&conversation, message, expect)?;
    Ok(Outcome::Moved { conversation, tip })
}

pub(super) fn fork(
    store: &mut Store,
    conversation: &str,
    at: Option<&str>,
) -> Result<Outcome, CommandError> {
    Ok(Outcome::Forked(store.fork(conversation, at)?))
}

pub(super) fn checkpoint(
    store: &mut Store,
    conversation: &str,
    label: Option<String>,
) -> Result<Outcome, CommandError> {
    let label = match label
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
    {
        Some(l) => l,
        None => {
            // the next free cp-N
            let taken = store.checkpoints(conversation)?;
            (1..)
                .map(|n| format!("cp-{n}"))
                .find(|l| !taken.iter().any(|c| &c.label == l))
                .unwrap_or_else(|| "cp".into())
        }
    };
    Ok(Outcome::Checkpointed(
        store.checkpoint(conversation, &label)?,
    ))
}

pub(super) fn rewind(
    store: &mut Store,
    conversation: &str,
    label: &str,
    digest: &str,
) -> Result<Outcome, CommandError> {
    Ok(Outcome::Rewound {
        digest: store.rewind(conversation, label, digest)?,
    })
}

pub(super) fn undo(store: &mut Store, conversation: &str) -> Result<Outcome, CommandError> {
    Ok(Outcome::Undone(store.undo(conversation)?))
}

pub(super) fn resume(
    store: &mut Store,
    conversation: &str,
    budget: Budget,
    redact: bool,
) -> Result<Outcome, CommandError> {
    let resumed = store.resume(conversation, budget)?;
    let mut sent: Vec<SentMessage> = resumed.messages.iter().map(SentMessage::of).collect();
    let redacted = if redact {
        sent.iter_mut()
            .map(|s| crate::redact::blocks(&mut s.content))
            .sum()
    } else {
        0
    };
    // what an agent reloads must be a request a provider takes: repaired, never truncated further
    let repairs = crate::pairs::repair(&mut sent);
    let wire = sent
        .iter()
        .map(|s| wire_of(store, s))
        .collect::<Result<_, _>>()?;
    Ok(Outcome::Resumed {
        resumed,
        wire,
        repairs,
        redacted,
    })
}

/// A message in Anthropic Messages shape, images inlined.
fn wire_of(store: &Store, s: &SentMessage) -> Result<serde_json::Value, CommandError> {
    let load = |h: &str| store.blob(h).map_err(|e| e.to_string());
    crate::wire::message_to_wire(s.role, &s.content, &crate::wire::Images::Base64(&load)).map_err(
        |reason| {
            CommandError::Store(crate::store::StoreError::Corrupt {
                id: s.sources.last().cloned().unwrap_or_default(),
                reason,
            })
        },
    )
}

pub(super) fn show(
    store: &mut Store,
    conversation: &str,
    redact: bool,
) -> Result<Outcome, CommandError> {
    let mut path = store.active_path(conversation)?;
    let redacted = if redact {
        path.iter_mut().map(crate::redact::message).sum()
    } else {
        0
    };
    let mut wire = Vec::with_capacity(path.len());
    for m in &path {
        let mut w = store.to_wire(m)?;
        w["id"] = serde_json::json!(m.id);
        w["parent"] = serde_json::json!(m.parent);
        wire.push(w);
    }
    Ok(Outcome::Shown {
        path,
        wire,
        redacted,
    })
}

/// The file's integrity, and every row decoded (a row the store cannot read back is named with its conversation).
pub(super) fn check(store: &mut Store) -> Result<Outcome, CommandError> {
    let mut problems: Vec<String> = store.integrity_check()?.err().into_iter().collect();
    let bad = store.unreadable_rows()?;
    if let Some((conv, id, why)) = bad.first() {
        problems.push(format!(
            "{} unreadable row(s), first: message {id} of conversation {conv}: {why}",
            bad.len()
        ));
    }
    Ok(Outcome::Checked {
        store: store.path().to_path_buf(),
        problems: (!problems.is_empty()).then(|| problems.join("; ")),
    })
}

/// Messages (every branch) whose id starts with the query, or whose text holds its words (the last one as a
/// prefix), through the full-text index.
pub(super) fn find(
    store: &mut Store,
    conversation: &str,
    query: &str,
    _progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Outcome, CommandError> {
    let conversation = store.resolve_conversation(conversation)?;
    let q = query.trim().to_lowercase();
    let mut hits: Vec<String> = Vec::new();
    if !q.is_empty() && q.chars().all(|c| c.is_ascii_hexdigit()) {
        hits.extend(store.ids_with_prefix(&conversation, &q)?);
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(CommandError::Cancelled);
    }
    // the words as one phrase, its last word a prefix: what a find box means, whatever characters it holds
    let words: Vec<String> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    if !words.is_empty() {
        let found = store.search(&crate::store::SearchQuery {
            text: format!("\"{}\"*", words.join(" ")),
            conversation: Some(conversation.clone()),
            limit: 100_000,
            ..Default::default()
        })?;
        let mut seen: std::collections::HashSet<String> = hits.iter().cloned().collect();
        // in tree order (the index ranks; a find steps through the tree)
        let mut by_order: Vec<(String, i64)> = found
            .hits
            .into_iter()
            .filter(|h| seen.insert(h.message.clone()))
            .map(|h| (h.message, h.seq))
            .collect();
        by_order.sort_by_key(|x| x.1);
        hits.extend(by_order.into_iter().map(|x| x.0));
    }
    Ok(Outcome::Found {
        conversation,
        query: query.to_string(),
        hits,
    })
}
