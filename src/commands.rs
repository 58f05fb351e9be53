//! Every user action, defined once. A shell (the CLI, the window's command bar, toolbar, menus and worker) builds an
//! [`Action`], calls [`run`], and formats the [`Outcome`]; it computes nothing itself. That is how the CLI and the
//! window show the same figures: there is one place each is made.
//!
//! The actions live in files by what they touch: [`tree`] (conversations, tips, forks, checkpoints, the path),
//! [`files`] (import, export), [`context`] (the context, the comparison, replay and calibration, the
//! snapshot pages) and [`reclaim`] (the compactions and `send`).

mod context;
mod files;
mod reclaim;
mod tree;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::export::ExportFormat;
use crate::formats::Format;
use crate::model::{Checkpoint, Conversation, Message, NewMessage};
use crate::provider::Provider;
use crate::reclaim::compare::StrategyRow;
use crate::reclaim::replay::{Calibration, Replay};
use crate::reclaim::report::ContextReport;
use crate::reclaim::{
    Applied, LadderOutcome, Policy, ReclaimError, SentMessage, Settings, Strategy,
};
use crate::render::{Profile, Rendered};
use crate::send::SendError;
use crate::store::{Budget, Operation, Resumed, Retry, Store, StoreError};

pub use context::SnapshotPreview;

/// A user action, with everything it needs.
#[derive(Debug, Clone)]
pub enum Action {
    New {
        title: Option<String>,
    },
    /// One complete turn.
    Append {
        conversation: String,
        messages: Vec<NewMessage>,
    },
    /// Moves the tip (compare-and-swap with `expect`); writes no message.
    Branch {
        conversation: String,
        message: String,
        expect: Option<String>,
    },
    Fork {
        conversation: String,
        at: Option<String>,
    },
    /// Labels the tip; without a label, the next free `cp-N`.
    Checkpoint {
        conversation: String,
        label: Option<String>,
    },
    Rewind {
        conversation: String,
        label: String,
        digest: String,
    },
    Undo {
        conversation: String,
    },
    /// The newest messages that fit, repaired to be pair-valid, secrets redacted unless `redact` is false.
    Resume {
        conversation: String,
        budget: Budget,
        redact: bool,
    },
    Retry {
        conversation: String,
    },
    List,
    Show {
        conversation: String,
        redact: bool,
    },
    Tree {
        conversation: String,
    },
    Checkpoints {
        conversation: String,
    },
    Log {
        conversation: String,
    },
    Check,
    Import {
        paths: Vec<PathBuf>,
        format: Option<Format>,
    },
    /// Writes to `out`, or returns the text.
    Export {
        conversation: String,
        at: Option<String>,
        format: ExportFormat,
        options: crate::export::Options,
        out: Option<PathBuf>,
    },
    /// Writes the path as a new session where the harness looks for its sessions under `home`, never over a file.
    Continue {
        conversation: String,
        at: Option<String>,
        harness: crate::export::agent::Harness,
        home: crate::discover::Home,
        /// The working folder the session names (default: the one the source recorded).
        cwd: Option<String>,
        redact: bool,
    },
    /// One rung (`force`: even below its threshold), or the ladder down to `target` when `strategy` is None.
    /// The summary rung needs a provider.
    Compact {
        conversation: String,
        strategy: Option<Strategy>,
        force: bool,
        target: Option<u64>,
        protect: Option<u64>,
        instructions: Option<String>,
        provider: Option<Provider>,
        /// Only the messages from `from` (default: the first the rungs work on) to `to` (default: the tip): a
        /// partial compaction; the protect window does not apply.
        from: Option<String>,
        to: Option<String>,
    },
    /// The provider's own compaction (a key needed), kept as a summary marker.
    ServerCompact {
        conversation: String,
        how: crate::send::ServerCompaction,
        provider: Option<Provider>,
    },
    /// The free rungs, forced.
    Shake {
        conversation: String,
        elide: bool,
        images: bool,
    },
    /// The `/context` breakdown.
    Context {
        conversation: String,
        model: Option<String>,
    },
    /// Every strategy side by side against a budget (default: the policy's target).
    Compare {
        conversation: String,
        budget: Option<u64>,
        profile: Option<&'static Profile>,
    },
    /// The context one compared strategy would leave, as it would be sent.
    Preview {
        conversation: String,
        strategy: String,
        budget: Option<u64>,
    },
    /// Draws text or a path's messages as snapshot pages (secrets redacted unless `redact` is false).
    Render {
        input: RenderInput,
        options: crate::render::Options,
        redact: bool,
    },
    /// The pages a snapshot compaction would send now (what it covers, on this profile in this shape, each
    /// else the conversation's model's), with every shape's density on the same text.
    SnapshotPreview {
        conversation: String,
        profile: Option<&'static crate::render::Profile>,
        shape: Option<&'static crate::render::shape::PageShape>,
    },
    /// Every page shape's density on what a snapshot would cover now (on this profile, else the model's),
    /// measured without drawing.
    ShapeDensities {
        conversation: String,
        profile: Option<&'static crate::render::Profile>,
    },
    Send {
        conversation: String,
        text: String,
        provider: Provider,
        window: Option<u64>,
    },
    Replay {
        conversation: Option<String>,
    },
    /// Usage statistics with the prompt cache's misses beside each row (`stats --cache`).
    CacheStats {
        by: crate::store::By,
        since: Option<i64>,
    },
    /// The prompt cache reply by reply on a path: hits, misses with their causes, what misses cost.
    Cache {
        conversation: String,
        at: Option<String>,
    },
    Calibrate,
    /// Messages of one conversation (every branch) whose id starts with, or whose text contains, the query.
    Find {
        conversation: String,
        query: String,
    },
    /// Full-text search over every conversation and branch.
    Search(crate::store::SearchQuery),
    /// The context at each reply along the active path: measured, estimated, compactions.
    Timeline {
        conversation: String,
        model: Option<String>,
    },
    /// Renders in each shape and reads the pages back with each reader (through `script`).
    Legibility {
        input: RenderInput,
        profile: &'static crate::render::profile::Profile,
        shapes: Vec<&'static crate::render::shape::PageShape>,
        readers: Vec<crate::legibility::Reader>,
        script: PathBuf,
        /// For the provider reader: the model asked, and the user's consent to what it costs.
        provider: Option<Provider>,
        confirmed: bool,
    },
    /// Where two paths went apart (each a conversation, or a message naming a path's end).
    Diff {
        a: String,
        b: String,
    },
    /// Usage across sessions, grouped.
    Stats {
        by: crate::store::By,
        since: Option<i64>,
    },
    /// Every model the store has seen, with what cairn knows of it and where each figure came from.
    Models,
}

impl Action {
    /// The conversation an action is about, where it is about one: what a shell checks a late outcome against (an
    /// outcome answering a conversation no longer open is dropped, not shown under another).
    pub fn conversation(&self) -> Option<&str> {
        match self {
            Action::Append { conversation, .. }
            | Action::Branch { conversation, .. }
            | Action::Fork { conversation, .. }
            | Action::Checkpoint { conversation, .. }
            | Action::Rewind { conversation, .. }
            | Action::Undo { conversation, .. }
            | Action::Resume { conversation, .. }
            | Action::Retry { conversation, .. }
            | Action::Show { conversation, .. }
            | Action::Tree { conversation, .. }
            | Action::Checkpoints { conversation, .. }
            | Action::Log { conversation, .. }
            | Action::Export { conversation, .. }
            | Action::Continue { conversation, .. }
            | Action::Compact { conversation, .. }
            | Action::ServerCompact { conversation, .. }
            | Action::Shake { conversation, .. }
            | Action::Context { conversation, .. }
            | Action::Compare { conversation, .. }
            | Action::Preview { conversation, .. }
            | Action::SnapshotPreview { conversation, .. }
            | Action::ShapeDensities { conversation, .. }
            | Action::Send { conversation, .. }
            | Action::Cache { conversation, .. }
            | Action::Find { conversation, .. }
            | Action::Timeline { conversation, .. } => Some(conversation),
            Action::Replay { conversation, .. } => conversation.as_deref(),
            _ => None,
        }
    }
}

/// What to render.
#[derive(Debug, Clone)]
pub enum RenderInput {
    Text {
        name: String,
        text: String,
    },
    /// The path to `to` (default: the tip), from `from` (default: the root).
    Path {
        conversation: String,
        from: Option<String>,
        to: Option<String>,
    },
}

/// What a compaction did.
#[derive(Debug, Clone)]
pub enum Compacted {
    /// One rung; None when it had nothing to do.
    Rung(Strategy, Option<Applied>),
    Ladder(LadderOutcome),
}

/// A session written where its harness finds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Continued {
    pub harness: crate::export::agent::Harness,
    pub session_id: String,
    pub file: PathBuf,
    /// The one command that resumes it.
    pub command: String,
    /// Files written beside it (Claude Code's subagents).
    pub beside: Vec<PathBuf>,
    /// What fell back (see [`crate::export::agent::AgentFile::notes`]).
    pub notes: Vec<String>,
    pub redacted: usize,
}

/// What an action did, typed per action.
#[derive(Debug, Clone)]
pub enum Outcome {
    Created(String),
    Appended(Vec<String>),
    Moved {
        conversation: String,
        tip: String,
    },
    Forked(String),
    Checkpointed(Checkpoint),
    Rewound {
        digest: String,
    },
    Undone(Operation),
    Resumed {
        resumed: Resumed,
        /// The kept messages in Anthropic Messages shape, repaired to be pair-valid.
        wire: Vec<serde_json::Value>,
        repairs: crate::pairs::Repairs,
        redacted: usize,
    },
    Retried(Retry),
    Conversations(Vec<Conversation>),
    Shown {
        path: Vec<Message>,
        wire: Vec<serde_json::Value>,
        redacted: usize,
    },
    Text(String),
    Checkpoints(Vec<Checkpoint>),
    Operations(Vec<Operation>),
    Checked {
        store: PathBuf,
        problems: Option<String>,
    },
    Imported(Vec<crate::import::FileOutcome>),
    Exported {
        out: Option<PathBuf>,
        exported: crate::export::Exported,
    },
    Continued(Continued),
    Compacted(Compacted),
    Shaken(Vec<(Strategy, Option<Applied>)>),
    Context(Box<ContextReport>),
    Compared {
        conversation: String,
        budget: u64,
        policy: Policy,
        rows: Vec<StrategyRow>,
    },
    Preview {
        conversation: String,
        strategy: String,
        sent: Vec<SentMessage>,
    },
    Rendered(Box<Rendered>, Vec<crate::render::SourceText>),
    SnapshotPreview(Box<SnapshotPreview>),
    ShapeDensities {
        conversation: String,
        profile: &'static str,
        model: String,
        default_shape: &'static str,
        densities: Vec<crate::render::shape::Density>,
    },
    Sent(crate::send::SentTurn),
    Replayed(Replay),
    Cache(crate::cache::CacheReport),
    Calibrated {
        models: Vec<Calibration>,
        skipped: Vec<String>,
    },
    Found {
        conversation: String,
        query: String,
        hits: Vec<String>,
    },
    Searched(crate::search::Results),
    Stats(crate::stats::Stats),
    Models(Vec<crate::models::Listing>),
    Timeline(crate::reclaim::timeline::Timeline),
    Diffed(Box<crate::diff::Diff>),
    Legibility(Vec<crate::legibility::ShapeReading>),
}

/// Why an action failed; each names the id, file or value at fault in one line.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Reclaim(#[from] ReclaimError),
    #[error(transparent)]
    Send(#[from] SendError),
    #[error(transparent)]
    Render(#[from] crate::render::RenderError),
    #[error(transparent)]
    Export(#[from] crate::export::ExportError),
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {reason}")]
    Io { path: PathBuf, reason: String },
    #[error("cancelled")]
    Cancelled,
}

/// What a long action reports while it runs. Every method has a quiet default.
pub trait Progress {
    /// `done` of `total` steps (files of an import, model calls of a summary, ...), on `what`.
    fn step(&self, _done: usize, _total: usize, _what: &str) {}
    /// Streamed text (a reply as it arrives).
    fn text(&self, _chunk: &str) {}
}

/// No progress reported.
pub struct Quiet;

impl Progress for Quiet {}

/// Runs an action against the store under the user's settings. `cancel` is checked between steps.
pub fn run(
    store: &mut Store,
    settings: &Settings,
    action: Action,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Outcome, CommandError> {
    use Action as A;
    match action {
        A::New { title } => tree::new(store, title),
        A::Append {
            conversation,
            messages,
        } => tree::append(store, &conversation, &messages),
        A::Branch {
            conversation,
            message,
            expect,
        } => tree::branch(store, &conversation, &message, expect.as_deref()),
        A::Fork { conversation, at } => tree::fork(store, &conversation, at.as_deref()),
        A::Checkpoint {
            conversation,
            label,
        } => tree::checkpoint(store, &conversation, label),
        A::Rewind {
            conversation,
            label,
            digest,
        } => tree::rewind(store, &conversation, &label, &digest),
        A::Undo { conversation } => tree::undo(store, &conversation),
        A::Resume {
            conversation,
            budget,
            redact,
        } => tree::resume(store, &conversation, budget, redact),
        A::Retry { conversation } => tree::retry(store, &conversation),
        A::List => Ok(Outcome::Conversations(store.conversations()?)),
        A::Show {
            conversation,
            redact,
        } => tree::show(store, &conversation, redact),
        A::Tree { conversation } => Ok(Outcome::Text(store.tree_text(&conversation)?)),
        A::Checkpoints { conversation } => {
            Ok(Outcome::Checkpoints(store.checkpoints(&conversation)?))
        }
        A::Log { conversation } => Ok(Outcome::Operations(store.operations(&conversation)?)),
        A::Check => tree::check(store),
        A::Import { paths, format } => files::import(store, &paths, format, progress, cancel),
        A::Export {
            conversation,
            at,
            format,
            options,
            out,
        } => files::export(
            store,
            &conversation,
            at.as_deref(),
            format,
            options,
            out,
            &settings.prices,
        ),
        A::Continue {
            conversation,
            at,
            harness,
            home,
            cwd,
            redact,
        } => files::continue_in(
            store,
            &conversation,
            at.as_deref(),
            harness,
            &home,
            cwd.as_deref(),
            redact,
        ),
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
        } => reclaim::compact(
            store,
            settings,
            reclaim::CompactArgs {
                conversation,
                strategy,
                force,
                target,
                protect,
                instructions,
                provider,
                from,
                to,
            },
            progress,
            cancel,
        ),
        A::Shake {
            conversation,
            elide,
            images,
        } => reclaim::shake(store, settings, &conversation, elide, images),
        A::Context {
            conversation,
            model,
        } => context::context(store, settings, &conversation, model.as_deref()),
        A::Compare {
            conversation,
            budget,
            profile,
        } => context::compare(store, settings, &conversation, budget, profile),
        A::Preview {
            conversation,
            strategy,
            budget,
        } => context::preview(store, settings, &conversation, &strategy, budget),
        A::Render {
            input,
            options,
            redact,
        } => context::render(store, input, &options, redact),
        A::ShapeDensities {
            conversation,
            profile,
        } => context::shape_densities(store, settings, &conversation, profile),
        A::SnapshotPreview {
            conversation,
            profile,
            shape,
        } => context::snapshot_preview(store, settings, &conversation, profile, shape),
        A::Send {
            conversation,
            text,
            provider,
            window,
        } => reclaim::send(
            store,
            settings,
            &conversation,
            &text,
            &provider,
            window,
            progress,
            cancel,
        ),
        A::Replay { conversation } => Ok(Outcome::Replayed(crate::reclaim::replay::replay(
            store,
            conversation.as_deref(),
        )?)),
        A::Cache { conversation, at } => Ok(Outcome::Cache(crate::cache::cache(
            store,
            &conversation,
            at.as_deref(),
            &settings.prices,
        )?)),
        A::Calibrate => {
            let (models, skipped) = crate::reclaim::replay::calibrate(store)?;
            Ok(Outcome::Calibrated { models, skipped })
        }
        A::Find {
            conversation,
            query,
        } => tree::find(store, &conversation, &query, progress, cancel),
        A::Search(q) => Ok(Outcome::Searched(crate::search::search(store, &q)?)),
        A::Timeline {
            conversation,
            model,
        } => {
            let view = crate::reclaim::PathView::load(store, &conversation, None)?;
            let policy = policy_for(store, settings, &view, model.as_deref(), None)?;
            let fits = crate::reclaim::replay::stored_fits(store)?;
            let mut t = crate::reclaim::timeline::timeline(Some(store), &view, &policy, &fits)?;
            // each reply's cache miss, on the point it hit
            let cache =
                crate::cache::on_heads(store, &view.conversation, &view.heads, &settings.prices)?;
            let misses: std::collections::HashMap<&str, &crate::cache::ReplyCache> = cache
                .replies
                .iter()
                .filter(|r| r.cause.is_some())
                .map(|r| (r.message.as_str(), r))
                .collect();
            for p in &mut t.points {
                if let Some(r) = misses.get(p.message.as_str()) {
                    p.cache_miss = r.cause;
                    p.cache_lost = r.cost.zip(r.cost_if_hit).map(|(a, b)| a - b);
                }
            }
            Ok(Outcome::Timeline(t))
        }
        A::ServerCompact {
            conversation,
            how,
            provider,
        } => {
            let provider = provider.ok_or_else(|| {
                CommandError::Invalid(format!(
                    "{} needs the provider's key: set {}",
                    how.name(),
                    match how {
                        crate::send::ServerCompaction::Anthropic => "ANTHROPIC_API_KEY",
                        crate::send::ServerCompaction::Openai => "OPENAI_API_KEY",
                    }
                ))
            })?;
            let view = crate::reclaim::PathView::load(store, &conversation, None)?;
            let policy = policy_for(store, settings, &view, None, None)?;
            let opts = policy.rung_options(policy.target_tokens());
            let applied =
                crate::send::server_compact(store, &view.conversation, &provider, how, &opts)?;
            Ok(Outcome::Compacted(Compacted::Rung(
                Strategy::Summary,
                applied,
            )))
        }
        A::Legibility {
            input,
            profile,
            shapes,
            readers,
            script,
            provider,
            confirmed,
        } => context::legibility(
            store,
            settings,
            context::LegibilityArgs {
                input,
                profile,
                shapes,
                readers,
                script,
                provider,
                confirmed,
            },
            progress,
        ),
        A::Diff { a, b } => Ok(Outcome::Diffed(Box::new(crate::diff::diff(
            store,
            &a,
            &b,
            &settings.prices,
        )?))),
        A::Models => models(store, settings),
        A::CacheStats { by, since } => Ok(Outcome::Stats(crate::stats::with_cache(
            store,
            by,
            since,
            &settings.prices,
        )?)),
        A::Stats { by, since } => Ok(Outcome::Stats(crate::stats::stats(
            store,
            by,
            since,
            &settings.prices,
        )?)),
    }
}

/// The models the store has seen, each with its catalog entry, window, tokenizer, fitted scale and prices.
fn models(store: &Store, settings: &Settings) -> Result<Outcome, CommandError> {
    let seen: Vec<crate::models::Seen> = store
        .models_seen()?
        .into_iter()
        .map(|m| crate::models::Seen {
            model: m.model,
            replies: m.replies,
            measured: m.measured,
            max_prompt: m.max_prompt,
        })
        .collect();
    let fits = crate::reclaim::replay::stored_fits(store)?;
    let fitted = |model: &str| {
        fits.iter()
            .filter(|(k, _)| k.rsplit_once(':').is_some_and(|(_, m)| m == model))
            .max_by_key(|(_, f)| f.samples)
            .map(|(_, f)| f.scale)
    };
    Ok(Outcome::Models(crate::models::listing(
        &seen,
        &settings.windows,
        &settings.prices,
        &fitted,
    )))
}

/// The policy for a path: its newest reply's model (or `model`), under the settings, its window no smaller than
/// the largest prompt the store measured for that model.
pub fn policy_for(
    store: &Store,
    settings: &Settings,
    view: &crate::reclaim::PathView,
    model: Option<&str>,
    window: Option<u64>,
) -> Result<Policy, CommandError> {
    let model = model.or(view.model());
    let measured = match model {
        Some(m) => store.max_measured_prompt(m)?,
        None => None,
    };
    Ok(Policy::new(settings, model, window, measured))
}
