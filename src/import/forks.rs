//! Sessions a harness copied into another: a fork (pi's, Claude Code's `/branch` and `--fork-session`, Codex's,
//! OpenHands'), a resume into a new file, an export read beside its session.
//!
//! Why apart from the import: the store counts a copied message once ([`crate::store::Copies`]); this says which
//! of two sessions is the fork, from what the harness wrote in it (the session it was forked from), so the fork is
//! recorded as the origin's as a cairn fork is and what they share counts in the origin, whichever was read first.

use crate::formats::ImportReport;
use crate::store::{Store, StoreError};

/// Says in the report which conversations just written repeat another's requests ([`Store::copies_in`]). Where one
/// of the two names the session it was forked from ([`records_origin`]), it is recorded as a fork of the other, as a
/// cairn fork is, whichever was read first: an origin read after its fork takes the counts of what they share
/// ([`Store::hand_copies_to`]), so each figure, and each conversation's own, is the same in either order.
pub(super) fn note_copies(store: &mut Store, ids: &[String], report: &mut ImportReport) {
    for id in ids {
        let copies = match store.copies_in(id) {
            Ok(Some(copies)) => copies,
            Ok(None) => continue,
            Err(e) => {
                report.notes.push(format!("copies not counted: {e}"));
                continue;
            }
        };
        match (
            stored_fork(store, id),
            stored_fork(store, &copies.conversation),
        ) {
            (Ok(true), _) => {
                note_repeats(id, &copies, report);
                record_fork(store, id, &copies.conversation, &copies.message, report);
            }
            (Ok(false), Ok(true)) => hand_copies(store, id, &copies.conversation, report),
            (Ok(false), Ok(false)) => note_repeats(id, &copies, report),
            (Err(e), _) | (_, Err(e)) => report.notes.push(format!("copies not counted: {e}")),
        }
    }
}

/// Harnesses that name, in a session, the session it was forked from by the id they gave it, and stamp the history
/// a fork copies with the time they copied it, so its copies repeat their replies but not their times: Codex
/// (`session_meta.forked_from_id`; its recorder stamps each rollout line as it writes it). (JSON paths of the
/// session's own id and of its origin's, in a conversation's meta.)
const RESTAMPED_FORKS: [(&str, &str); 1] = [("$.session_meta.id", "$.session_meta.forked_from_id")];

/// Pairs the conversations just written with their forks or origins named by id ([`RESTAMPED_FORKS`]), whichever
/// was read first: what they share counts once, in the origin ([`Store::hand_copies_to`]), and the fork is
/// recorded as the origin's.
pub(super) fn pair_restamped_forks(store: &mut Store, ids: &[String], report: &mut ImportReport) {
    for id in ids {
        let meta = match store.conversation_meta(id) {
            Ok(m) => m,
            Err(e) => {
                report.notes.push(format!("forks not paired: {e}"));
                continue;
            }
        };
        for (own, from) in RESTAMPED_FORKS {
            let at = |path: &str| {
                let pointer = path.trim_start_matches('$').replace('.', "/");
                meta.pointer(&pointer)
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_string)
            };
            let mut pairs: Vec<(String, String)> = Vec::new();
            // this one a fork: its origin; this one an origin: its forks read before it
            let found = at(from)
                .map(|x| store.conversations_by_meta(own, &x))
                .transpose()
                .and_then(|origins| {
                    pairs.extend(origins.into_iter().flatten().map(|o| (o, id.clone())));
                    at(own)
                        .map(|y| store.conversations_by_meta(from, &y))
                        .transpose()
                });
            match found {
                Ok(forks) => pairs.extend(forks.into_iter().flatten().map(|f| (id.clone(), f))),
                Err(e) => report.notes.push(format!("forks not paired: {e}")),
            }
            for (origin, fork) in pairs.into_iter().filter(|(o, f)| o != f) {
                match store.hand_copies_to(&origin, &fork, true) {
                    Ok(Some(copies)) => {
                        report.notes.push(format!(
                            "{fork} is a fork of {origin} (its harness stamped the {} messages it copied with the \
                             time it copied them): they count once, in {origin}",
                            copies.messages
                        ));
                        record_fork(store, &fork, &origin, &copies.message, report);
                    }
                    Ok(None) => {}
                    Err(e) => report.notes.push(format!("copies not counted: {e}")),
                }
            }
        }
    }
}

fn note_repeats(id: &str, copies: &crate::store::Copies, report: &mut ImportReport) {
    let from = &copies.conversation;
    report.notes.push(format!(
        "{} messages of {id} repeat conversation {from}'s (the same requests: a fork, a resume or an export of it): \
         their usage, turns and tool calls count once, in {from}",
        copies.messages
    ));
}

/// Whether a stored conversation names the session it was forked from ([`records_origin`]).
fn stored_fork(store: &Store, id: &str) -> Result<bool, StoreError> {
    let meta = store.conversation_meta(id)?;
    let firsts = store.opening_metas(id, 3)?;
    Ok(records_origin(&meta, firsts.iter()))
}

/// `origin`, just read, holds copies of `fork`, read before it and naming its origin: the origin takes the counts
/// of what they share, and the fork is recorded as the origin's.
fn hand_copies(store: &mut Store, origin: &str, fork: &str, report: &mut ImportReport) {
    match store.hand_copies_to(origin, fork, false) {
        Ok(Some(copies)) => {
            report.notes.push(format!(
                "{fork}, read before, is a fork of {origin}: the {} messages they share count once, in {origin}",
                copies.messages
            ));
            record_fork(store, fork, origin, &copies.message, report);
        }
        Ok(None) => {}
        Err(e) => report.notes.push(format!("copies not counted: {e}")),
    }
}

fn record_fork(store: &mut Store, id: &str, from: &str, message: &str, report: &mut ImportReport) {
    match store.record_harness_fork(id, from, message) {
        Ok(true) => report.notes.push(format!(
            "{id} is a fork of {from}, from its message {message}"
        )),
        Ok(false) => {}
        Err(e) => report.notes.push(format!("fork not recorded: {e}")),
    }
}

/// Whether a harness wrote, in the session (its meta, and its first messages'), that it forked it from another:
/// pi's header (`parentSession`, format 4's `parentSessionId`, v1's `branchedFrom`), Codex's `forked_from_id`,
/// Claude Code's `forkedFrom` on its lines, opencode's title for a fork (`… (fork #2)`, what its `Session.fork`
/// names the copy: `getForkedTitle`).
fn records_origin<'a>(
    meta: &serde_json::Value,
    mut firsts: impl Iterator<Item = &'a serde_json::Value>,
) -> bool {
    let set = |v: &serde_json::Value, p: &str| v.pointer(p).is_some_and(|x| !x.is_null());
    const ORIGINS: [&str; 5] = [
        "/header/parentSession",
        "/header/parentSessionId",
        "/header/branchedFrom",
        "/session_meta/payload/forked_from_id",
        "/session_meta/forked_from_id",
    ];
    let opencode_fork = meta.get("source").and_then(serde_json::Value::as_str) == Some("opencode")
        && meta
            .pointer("/info/title")
            .and_then(serde_json::Value::as_str)
            .is_some_and(titled_a_fork);
    ORIGINS.iter().any(|p| set(meta, p))
        || opencode_fork
        || firsts.any(|m| set(m, "/lines/0/forkedFrom"))
}

/// Whether a title ends as opencode names a fork: ` (fork #N)`.
fn titled_a_fork(title: &str) -> bool {
    title
        .strip_suffix(')')
        .and_then(|t| t.rsplit_once(" (fork #"))
        .is_some_and(|(base, n)| {
            !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::titled_a_fork;

    #[test]
    fn opencode_s_fork_title_is_told_from_a_title_that_mentions_a_fork() {
        assert!(titled_a_fork("errored step (fork #1)"));
        assert!(titled_a_fork("a (fork #1) (fork #12)"));
        assert!(!titled_a_fork("errored step"));
        assert!(!titled_a_fork("should we fork? (fork #)"));
        assert!(!titled_a_fork(" (fork #1)"));
        assert!(!titled_a_fork("fork the repo (fork #one)"));
    }
}
