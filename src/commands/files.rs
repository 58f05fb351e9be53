//! The file actions routed to their commands, each in its own file: importing transcripts, exporting a path,
//! continuing a conversation in a harness.

use super::{Action, Command, CommandError, Env, Outcome, misrouted};
use super::{continue_in, export, import};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    match action {
        A::Import { paths, format } => import::ImportFiles { paths, format }
            .run(env)
            .map(Outcome::Imported),
        A::Export {
            conversation,
            at,
            format,
            options,
            out,
        } => export::ExportPath {
            conversation,
            at,
            format,
            options,
            out,
        }
        .run(env)
        .map(|e| Outcome::Exported {
            out: e.out,
            exported: e.exported,
        }),
        A::Continue {
            conversation,
            at,
            harness,
            home,
            cwd,
            redact,
        } => continue_in::ContinueIn {
            conversation,
            at,
            harness,
            home,
            cwd,
            redact,
        }
        .run(env)
        .map(Outcome::Continued),
        _ => Err(misrouted()),
    }
}
