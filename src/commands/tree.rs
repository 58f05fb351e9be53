//! The tree's actions routed to their commands, each in its own file: conversations, turns, tips, forks,
//! checkpoints, the path, finding in one conversation and searching them all.

use super::{Action, Command, CommandError, Env, Outcome, misrouted};
use super::{
    append, branch, check, checkpoint, find, fork, list, resume, rewind, search, show, tree_text,
    undo,
};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    match action {
        A::Append {
            conversation,
            messages,
        } => append::AppendTurn {
            conversation,
            messages,
        }
        .run(env)
        .map(Outcome::Appended),
        A::Branch {
            conversation,
            message,
            expect,
        } => branch::SwitchTip {
            conversation,
            message,
            expect,
        }
        .run(env)
        .map(|m| Outcome::Moved {
            conversation: m.conversation,
            tip: m.tip,
        }),
        A::Fork { conversation, at } => fork::ForkPath { conversation, at }
            .run(env)
            .map(Outcome::Forked),
        A::Checkpoint {
            conversation,
            label,
        } => checkpoint::SetCheckpoint {
            conversation,
            label,
        }
        .run(env)
        .map(Outcome::Checkpointed),
        A::Rewind {
            conversation,
            label,
            digest,
        } => rewind::RewindTo {
            conversation,
            label,
            digest,
        }
        .run(env)
        .map(|digest| Outcome::Rewound { digest }),
        A::Undo { conversation } => undo::UndoLast { conversation }
            .run(env)
            .map(Outcome::Undone),
        A::Resume {
            conversation,
            budget,
            redact,
        } => resume::ResumeTrimmed {
            conversation,
            budget,
            redact,
        }
        .run(env)
        .map(|r| Outcome::Resumed {
            resumed: r.resumed,
            wire: r.wire,
            repairs: r.repairs,
            redacted: r.redacted,
        }),
        a => read(env, a),
    }
}

/// The actions that only read.
fn read(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    match action {
        A::List => list::ListConversations.run(env).map(Outcome::Conversations),
        A::Show {
            conversation,
            redact,
        } => show::ShowPath {
            conversation,
            redact,
        }
        .run(env)
        .map(|s| Outcome::Shown {
            path: s.path,
            wire: s.wire,
            redacted: s.redacted,
        }),
        A::Tree { conversation } => tree_text::TreeText { conversation }
            .run(env)
            .map(Outcome::Text),
        A::Check => check::CheckStore.run(env).map(|c| Outcome::Checked {
            store: c.store,
            problems: c.problems,
        }),
        A::Find {
            conversation,
            query,
        } => find::FindInConversation {
            conversation,
            query,
        }
        .run(env)
        .map(|f| Outcome::Found {
            conversation: f.conversation,
            query: f.query,
            hits: f.hits,
        }),
        A::Search(q) => search::SearchStore(q).run(env).map(Outcome::Searched),
        _ => Err(misrouted()),
    }
}
