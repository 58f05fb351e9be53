//! The file actions routed to their commands, each in its own file: importing transcripts, exporting a path,
//! continuing a conversation in a harness.

use super::{Action, Command, CommandError, Env, Outcome, misrouted};
use super::{continue_in, export, import};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    route!(env, action, {
        Import { paths, format } => import::ImportFiles => Outcome::Imported,
        Export { conversation, at, format, options, out } => export::ExportPath => |e: export::ExportedTo| {
            Outcome::Exported { out: e.out, exported: e.exported }
        },
        Continue { conversation, at, harness, home, cwd, redact } => continue_in::ContinueIn => Outcome::Continued,
    }, _other => Err(misrouted()))
}
