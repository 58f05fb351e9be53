//! The actions that read what the model sees routed to their commands, each in its own file: the context report,
//! the comparison and its preview, the timeline, the prompt cache, the snapshot preview, the read-back.

use super::{Action, Command, CommandError, Env, Outcome, misrouted};
use super::{cache, compare, context_report, legibility, preview, snapshot_preview, timeline};

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    route!(env, action, {
        Context { conversation, model } => context_report::ContextOf => Outcome::Context,
        Compare { conversation, budget, profile } => compare::CompareStrategies => |c: compare::Comparison| {
            Outcome::Compared { conversation: c.conversation, budget: c.budget, policy: c.policy, rows: c.rows }
        },
        Preview { conversation, strategy, budget } => preview::PreviewStrategy => |p: preview::StrategyPreview| {
            Outcome::Preview { conversation: p.conversation, strategy: p.strategy, sent: p.sent }
        },
        Timeline { conversation, model } => timeline::TimelineOf => Outcome::Timeline,
        Cache { conversation, at } => cache::CacheOf => Outcome::Cache,
        SnapshotPreview { conversation, profile, shape } => snapshot_preview::PreviewSnapshot
            => Outcome::SnapshotPreview,
        Legibility { input, profile, shapes, readers, script, provider, confirmed } => legibility::ReadBack
            => Outcome::Legibility,
    }, _other => Err(misrouted()))
}
