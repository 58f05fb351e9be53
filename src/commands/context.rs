//! The actions that read what the model sees routed to their commands, each in its own file: the context report,
//! the comparison and its preview, the timeline, the prompt cache, the snapshot preview, the read-back.

use super::{Action, Command, CommandError, Env, Outcome, misrouted};
use super::{cache, compare, context_report, legibility, preview, snapshot_preview, timeline};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    match action {
        A::Context {
            conversation,
            model,
        } => context_report::ContextOf {
            conversation,
            model,
        }
        .run(env)
        .map(Outcome::Context),
        A::Compare {
            conversation,
            budget,
            profile,
        } => compare::CompareStrategies {
            conversation,
            budget,
            profile,
        }
        .run(env)
        .map(|c| Outcome::Compared {
            conversation: c.conversation,
            budget: c.budget,
            policy: c.policy,
            rows: c.rows,
        }),
        A::Preview {
            conversation,
            strategy,
            budget,
        } => preview::PreviewStrategy {
            conversation,
            strategy,
            budget,
        }
        .run(env)
        .map(|p| Outcome::Preview {
            conversation: p.conversation,
            strategy: p.strategy,
            sent: p.sent,
        }),
        A::Timeline {
            conversation,
            model,
        } => timeline::TimelineOf {
            conversation,
            model,
        }
        .run(env)
        .map(Outcome::Timeline),
        A::Cache { conversation, at } => cache::CacheOf { conversation, at }
            .run(env)
            .map(Outcome::Cache),
        A::SnapshotPreview {
            conversation,
            profile,
            shape,
        } => snapshot_preview::PreviewSnapshot {
            conversation,
            profile,
            shape,
        }
        .run(env)
        .map(Outcome::SnapshotPreview),
        A::Legibility {
            input,
            profile,
            shapes,
            readers,
            script,
            provider,
            confirmed,
        } => legibility::ReadBack {
            input,
            profile,
            shapes,
            readers,
            script,
            provider,
            confirmed,
        }
        .run(env)
        .map(Outcome::Legibility),
        _ => Err(misrouted()),
    }
}
