//! The tree's actions routed to their commands, each in its own file: conversations, turns, tips, forks,
//! checkpoints, the path, finding in one conversation and searching them all.

use super::{Action, Command, CommandError, Env, Outcome, misrouted};
use super::{
    append, branch, check, checkpoint, find, fork, list, resume, rewind, search, show, tree_text,
    undo,
};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    route!(env, action, {
        Append { conversation, messages } => append::AppendTurn => Outcome::Appended,
        Branch { conversation, message, expect } => branch::SwitchTip => |m: branch::TipMoved| {
            Outcome::Moved { conversation: m.conversation, tip: m.tip }
        },
        Fork { conversation, at } => fork::ForkPath => Outcome::Forked,
        Checkpoint { conversation, label } => checkpoint::SetCheckpoint => Outcome::Checkpointed,
        Rewind { conversation, label, digest } => rewind::RewindTo => |digest| Outcome::Rewound { digest },
        Undo { conversation } => undo::UndoLast => Outcome::Undone,
        Resume { conversation, budget, redact } => resume::ResumeTrimmed => |r: resume::Resumption| {
            Outcome::Resumed { resumed: r.resumed, wire: r.wire, repairs: r.repairs, redacted: r.redacted }
        },
        Show { conversation, redact } => show::ShowPath => |s: show::ShownPath| {
            Outcome::Shown { path: s.path, wire: s.wire, redacted: s.redacted }
        },
        Tree { conversation } => tree_text::TreeText => Outcome::Text,
        Find { conversation, query } => find::FindInConversation => |f: find::Found| {
            Outcome::Found { conversation: f.conversation, query: f.query, hits: f.hits }
        },
    }, other => match other {
        Action::List => list::ListConversations.run(env).map(Outcome::Conversations),
        Action::Check => check::CheckStore.run(env).map(|c| Outcome::Checked {
            store: c.store,
            problems: c.problems,
        }),
        Action::Search(q) => search::SearchStore(q).run(env).map(Outcome::Searched),
        _ => Err(misrouted()),
    })
}
