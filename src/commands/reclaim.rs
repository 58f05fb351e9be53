//! The actions that take context back or continue a conversation routed to their commands, each in its own file:
//! a rung or the ladder, the provider's compaction, `/shake`, `send`.

use super::{Action, Command, CommandError, Env, Outcome, misrouted};
use super::{compact, send, server_compact, shake};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    match action {
        A::Compact {
            conversation,
            strategy,
            force,
            target,
            protect,
            instructions,
            provider,
            from,
            to,
        } => compact::Compact {
            conversation,
            strategy,
            force,
            target,
            protect,
            instructions,
            provider,
            from,
            to,
        }
        .run(env)
        .map(Outcome::Compacted),
        A::Shake {
            conversation,
            elide,
            images,
        } => shake::Shake {
            conversation,
            elide,
            images,
        }
        .run(env)
        .map(Outcome::Shaken),
        A::Send {
            conversation,
            text,
            provider,
            window,
        } => send::SendPrompt {
            conversation,
            text,
            provider,
            window,
        }
        .run(env)
        .map(Outcome::Sent),
        A::ServerCompact {
            conversation,
            how,
            provider,
        } => server_compact::ServerCompact {
            conversation,
            how,
            provider,
        }
        .run(env)
        .map(Outcome::Compacted),
        _ => Err(misrouted()),
    }
}
