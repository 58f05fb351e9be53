//! Sessions a harness copied into another: a fork (pi's, Claude Code's `/branch` and `--fork-session`, Codex's,
//! OpenHands'), a resume into a new file, an export read beside its session.
//!
//! Why apart from the import: the store counts a copied message once ([`crate::store::Copies`]); this says which
//! of two sessions is the fork, from what the harness wrote in it (the session it was forked from) or, where it
//! wrote nothing, from what each holds (one holds all of the other's path and goes on), so the fork is recorded as
//! the origin's as a cairn fork is and what they share counts in the origin, whichever was read first.

use crate::formats::ImportReport;
use crate::store::{Store, StoreError};

/// What a write did to one conversation of a file.
pub(super) struct Written {
    pub id: String,
    /// It gained messages (new to the store, or grown).
    pub grew: bool,
    /// It gained copies ([`crate::store::Copies`]).
    pub copied: bool,
}

/// After a file's conversations were written: what they copied is said, and each is paired with its fork or
/// origin ([`note_copies`], [`pair_restamped_forks`], [`pair_continuations`]); a conversation the write left as it
/// was costs nothing.
pub(super) fn after_write(store: &mut Store, written: &[Written], report: &mut ImportReport) {
    let ids = |pick: fn(&Written) -> bool| -> Vec<String> {
        written
            .iter()
            .filter(|w| pick(w))
            .map(|w| w.id.clone())
            .collect()
    };
    note_copies(store, &ids(|w| w.copied), report);
    pair_restamped_forks(store, &ids(|w| w.grew), report);
    for id in ids(|w| w.grew || w.copied) {
        pair_continuations(store, &id, report);
    }
}

/// Says in the report which conversations just written repeat another's requests ([`Store::copies_in`]). Where one
/// of the two names the session it was forked from ([`records_origin`]), it is recorded as a fork of the other, as a
/// cairn fork is, whichever was read first: an origin read after its fork takes the counts of what they share
/// ([`Store::hand_copies_to`]), so each figure, and each conversation's own, is the same in either order.
fn note_copies(store: &mut Store, ids: &[String], report: &mut ImportReport) {
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
            (Ok(false), Ok(true)) => {
                hand_copies(store, id, &copies.conversation, Hand::ReadBefore, report);
            }
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

/// Pairs the conversations that just gained messages with their forks or origins named by id
/// ([`RESTAMPED_FORKS`]), whichever was read first: what they share counts once, in the origin
/// ([`Store::hand_copies_to`]), and the fork is recorded as the origin's.
fn pair_restamped_forks(store: &mut Store, ids: &[String], report: &mut ImportReport) {
    for id in ids {
        match restamped_pairs(store, id) {
            Ok(pairs) => {
                for (origin, fork) in pairs {
                    hand_copies(store, &origin, &fork, Hand::Restamped, report);
                }
            }
            Err(e) => report.notes.push(format!("forks not paired: {e}")),
        }
    }
}

/// The (origin, fork) pairs conversation `id` makes by the ids its harness wrote ([`RESTAMPED_FORKS`]): with its
/// origin where it is a fork, with its forks where it is an origin.
fn restamped_pairs(store: &Store, id: &str) -> Result<Vec<(String, String)>, StoreError> {
    let mut pairs = Vec::new();
    for (own, from) in RESTAMPED_FORKS {
        if let Some(origin_id) = store.meta_string(id, from)? {
            for o in store.conversations_by_meta(own, &origin_id)? {
                pairs.push((o, id.to_string()));
            }
        }
        if let Some(own_id) = store.meta_string(id, own)? {
            for f in store.conversations_by_meta(from, &own_id)? {
                pairs.push((id.to_string(), f));
            }
        }
    }
    pairs.retain(|(o, f)| o != f);
    Ok(pairs)
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

/// Why `origin` takes the counts of what it shares with a fork ([`hand_copies`]).
#[derive(Clone, Copy)]
enum Hand {
    /// The fork names its origin and was read before it.
    ReadBefore,
    /// Its harness copied the history with the time it copied it ([`RESTAMPED_FORKS`]).
    Restamped,
    /// Neither names the other, and the fork holds all of the origin's path and goes on ([`pair_continuations`]).
    Continues,
}

/// `origin` takes the counts of what it shares with `fork`, and the fork is recorded as the origin's. Returns whether
/// anything changed.
fn hand_copies(
    store: &mut Store,
    origin: &str,
    fork: &str,
    how: Hand,
    report: &mut ImportReport,
) -> bool {
    match store.hand_copies_to(origin, fork, matches!(how, Hand::Restamped)) {
        Ok(Some(copies)) => {
            let why = match how {
                Hand::ReadBefore => "read before it",
                Hand::Restamped => "its harness stamped what it copied with the time it copied it",
                Hand::Continues => "it holds all of it and goes on, read before it",
            };
            report.notes.push(format!(
                "{fork} is a fork of {origin} ({why}): the {} messages they share count once, in {origin}",
                copies.messages
            ));
            record_fork(store, fork, origin, &copies.message, report);
            true
        }
        Ok(None) => false,
        Err(e) => {
            report.notes.push(format!("copies not counted: {e}"));
            false
        }
    }
}

/// Sessions that repeat each other where neither names the other (a harness that resumes a session into a new
/// file, the whole history copied under a new session id: Claude Code's `--resume` before it kept the session's
/// file; a session file copied by hand and gone on with). Where one holds all of another's path and goes on, it
/// continues it, and is recorded as its fork, as a named fork is, whichever was read first; what they share counts
/// in the one it continues. Conversation `id` (just written) is paired both ways: with the sessions that continue
/// it, and with the session it continues (the deepest whose tip it holds). Two that hold the same (an export
/// beside its session), or that went separate ways from a point both copied (neither's whole path is in the
/// other: which came first is written nowhere), are not told apart, and their copies count in whichever was read
/// first. An export of the same session (the id its harness gave it alike) is no fork.
fn pair_continuations(store: &mut Store, id: &str, report: &mut ImportReport) {
    if let Err(e) = continuations(store, id, report) {
        report.notes.push(format!("continuations not paired: {e}"));
    }
}

fn continuations(store: &mut Store, id: &str, report: &mut ImportReport) -> Result<(), StoreError> {
    let own_session = harness_session(store, id)?;
    // another session, of another id its harness gave it, and neither recorded as a fork of the other (a named
    // fork whose origin went on past where it copied it is held whole by it, and is not continued by it)
    let apart = |store: &Store, other: &str| -> Result<bool, StoreError> {
        let from = |c: &str| {
            store
                .conversation(c)
                .map(|c| c.forked_from.map(|f| f.conversation))
        };
        Ok(from(other)?.as_deref() != Some(id)
            && from(id)?.as_deref() != Some(other)
            && (own_session.is_none() || harness_session(store, other)? != own_session))
    };
    // the sessions that continue it
    for h in store.holders_of_tip(id)? {
        if h.goes_on
            && !h.forked_deeper
            && !stored_fork(store, &h.other)?
            && apart(store, &h.other)?
        {
            continue_from(store, &h.other, id, &h.tip, report);
        }
    }
    // the session it continues
    if stored_fork(store, id)? {
        return Ok(());
    }
    for h in store.tips_held_by(id)? {
        if h.forked_deeper {
            break;
        }
        // a session it holds the same as (an export, a copy) is none it continues: what that one continues, it does
        if h.goes_on && apart(store, &h.other)? {
            continue_from(store, id, &h.other, &h.tip, report);
            break;
        }
    }
    Ok(())
}

/// Records `fork` as continuing `origin` from its tip `tip`: what the fork counted of their shared path counts in
/// the origin.
fn continue_from(
    store: &mut Store,
    fork: &str,
    origin: &str,
    tip: &str,
    report: &mut ImportReport,
) {
    if !hand_copies(store, origin, fork, Hand::Continues, report) {
        record_fork(store, fork, origin, tip, report);
    }
}

/// The id the harness gave a stored session, where it wrote one ([`super::harness_session`]).
fn harness_session(store: &Store, id: &str) -> Result<Option<String>, StoreError> {
    let meta = store.conversation_meta(id)?;
    let first = store.opening_metas(id, 1)?;
    Ok(super::harness_session(
        &meta,
        first.first().unwrap_or(&serde_json::Value::Null),
    ))
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
