//! Actions on the tree: conversations, turns, tips, forks, checkpoints, the operation log, the path.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{CommandError, Outcome, Progress};
use crate::model::NewMessage;
use crate::store::{Budget, Store};

pub(super) fn new(store: &mut Store, title: Option<String>) -> Result<Outcome, CommandError> {
    Ok(Outcome::Created(
        store.create_conversation(title.as_deref())?,
    ))
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
) -> Result<Outcome, CommandError> {
    let resumed = store.resume(conversation, budget)?;
    let wire = resumed
        .messages
        .iter()
        .map(|m| store.to_wire(m))
        .collect::<Result<_, _>>()?;
    Ok(Outcome::Resumed { resumed, wire })
}

pub(super) fn retry(store: &mut Store, conversation: &str) -> Result<Outcome, CommandError> {
    Ok(Outcome::Retried(store.retry(conversation)?))
}

pub(super) fn show(store: &mut Store, conversation: &str) -> Result<Outcome, CommandError> {
    let path = store.active_path(conversation)?;
    let mut wire = Vec::with_capacity(path.len());
    for m in &path {
        let mut w = store.to_wire(m)?;
        w["id"] = serde_json::json!(m.id);
        w["parent"] = serde_json::json!(m.parent);
        wire.push(w);
    }
    Ok(Outcome::Shown { path, wire })
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

/// Messages (every branch) whose id starts with, or whose plain text contains, the query (case-insensitive).
pub(super) fn find(
    store: &mut Store,
    conversation: &str,
    query: &str,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Outcome, CommandError> {
    let conversation = store.resolve_conversation(conversation)?;
    let q = query.to_lowercase();
    let all = store.messages(&conversation)?;
    let mut hits = Vec::new();
    for (k, m) in all.iter().enumerate() {
        if k % 1024 == 0 {
            if cancel.load(Ordering::Relaxed) {
                return Err(CommandError::Cancelled);
            }
            progress.step(k, all.len(), "messages");
        }
        if m.id.starts_with(&q)
            || crate::model::plain_text(&m.content)
                .to_lowercase()
                .contains(&q)
        {
            hits.push(m.id.clone());
        }
    }
    Ok(Outcome::Found {
        conversation,
        query: query.to_string(),
        hits,
    })
}
