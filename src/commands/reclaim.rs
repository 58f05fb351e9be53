//! The actions that take context back or continue a conversation routed to their commands, each in its own file:
//! a rung or the ladder, the provider's compaction, `/shake`, `send`.

use super::{Action, Command, CommandError, Env, Outcome, misrouted};
use super::{compact, send, server_compact, shake};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    route!(env, action, {
        Compact { conversation, strategy, force, target, protect, instructions, provider, from, to } => compact::Compact
            => Outcome::Compacted,
        Shake { conversation, elide, images } => shake::Shake => Outcome::Shaken,
        Send { conversation, text, provider, window } => send::SendPrompt => Outcome::Sent,
        ServerCompact { conversation, how, provider } => server_compact::ServerCompact => Outcome::Compacted,
    }, _other => Err(misrouted()))
}
