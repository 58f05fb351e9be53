//! Every user action, defined once. A shell (the CLI, the window's command bar, toolbar, menus and worker) builds a
//! command, has the core run it, and formats what it answers; it computes nothing itself. That is how the CLI and
//! the window show the same figures: there is one place each is made.
//!
//! Each command is its own type in its own file under `commands/` ([`Command`]: its fields are its arguments, its
//! `Output` what it answers, its `run` how), after jj's `cli/src/commands/`. The CLI runs one with [`exec`] and
//! gets that type back: nothing to match, no other command's answer to rule out.
//!
//! [`Action`] and [`Outcome`] are the envelope for the shells that hand a command across a thread or read it from
//! text: the window's worker, the slash commands, the scripted tests. [`run`] routes an action to its command
//! (through `tree`, `files`, `context` and `reclaim`, which only route) and wraps the answer. A new command needs
//! no variant of either: any command travels as an [`Action::Job`] and comes back as an [`Outcome::Answer`], taken
//! back as the command's own `Output` ([`Answer::take`]).
//!
//! Adding a command: its file here (the type, its `Output`, its `run`) and its `mod` line; its file in the CLI and
//! the CLI's dispatch line; if the window shows it, one panel that sends it as a job.

/// Routes the envelope's struct variants to their commands, one line each: `Variant { fields } => command type =>
/// how its output becomes an [`Outcome`]`, the fields named once (moved from the action into the command); every
/// other action goes to the last arm.
macro_rules! route {
    ($env:ident, $action:expr, {
        $( $variant:ident { $($f:ident),* $(,)? } => $m:ident::$cmd:ident => $wrap:expr ),* $(,)?
    }, $rest:ident => $other:expr) => {
        match $action {
            $( Action::$variant { $($f),* } => $m::$cmd { $($f),* }.run($env).map($wrap), )*
            $rest => $other,
        }
    };
}

pub mod append;
pub mod branch;
pub mod cache;
pub mod calibrate;
pub mod check;
pub mod checkpoint;
pub mod checkpoints;
pub mod compact;
pub mod compare;
mod context;
pub mod context_report;
pub mod continue_in;
pub mod densities;
pub mod diff;
pub mod export;
mod files;
pub mod find;
pub mod fork;
pub mod import;
pub mod learned_prices;
pub mod legibility;
pub mod list;
pub mod log;
pub mod models;
pub mod new;
pub mod preview;
mod reclaim;
pub mod render;
pub mod replay;
pub mod resume;
pub mod retry;
pub mod rewind;
pub mod search;
pub mod send;
pub mod server_compact;
pub mod shake;
pub mod show;
pub mod snapshot_preview;
mod sources;
pub mod stats;
pub mod timeline;
mod tree;
pub mod tree_text;
pub mod undo;
mod write;

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
use crate::render::Profile;
use crate::send::SendError;
use crate::store::{Budget, Operation, Resumed, Store, StoreError};

pub use snapshot_preview::SnapshotPreview;

/// A user action, with everything it needs.
#[derive(Debug, Clone)]
pub enum Action {
    /// Any command ([`Command`]), its answer an [`Outcome::Answer`].
    Job(Box<dyn Job>),
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
    List,
    Show {
        conversation: String,
        redact: bool,
    },
    Tree {
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
        strategy: crate::reclaim::compare::Candidate,
        budget: Option<u64>,
    },
    /// The pages a snapshot compaction would send now (what it covers, on this profile in this shape, each
    /// else the conversation's model's), with every shape's density on the same text.
    SnapshotPreview {
        conversation: String,
        profile: Option<&'static crate::render::Profile>,
        shape: Option<&'static crate::render::shape::PageShape>,
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
    /// A command as a job.
    pub fn job<C>(command: C) -> Action
    where
        C: Command + Clone + std::fmt::Debug + Send + 'static,
        C::Output: Send + Sync + 'static,
    {
        Action::Job(Box::new(command))
    }

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
            | Action::Show { conversation, .. }
            | Action::Tree { conversation, .. }
            | Action::Export { conversation, .. }
            | Action::Continue { conversation, .. }
            | Action::Compact { conversation, .. }
            | Action::ServerCompact { conversation, .. }
            | Action::Shake { conversation, .. }
            | Action::Context { conversation, .. }
            | Action::Compare { conversation, .. }
            | Action::Preview { conversation, .. }
            | Action::SnapshotPreview { conversation, .. }
            | Action::Send { conversation, .. }
            | Action::Cache { conversation, .. }
            | Action::Find { conversation, .. }
            | Action::Timeline { conversation, .. } => Some(conversation),
            Action::Replay { conversation, .. } => conversation.as_deref(),
            Action::Job(j) => j.conversation(),
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
    /// What an [`Action::Job`] answered.
    Answer(Answer),
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
    Conversations(Vec<Conversation>),
    Shown {
        path: Vec<Message>,
        wire: Vec<serde_json::Value>,
        redacted: usize,
    },
    Text(String),
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
        strategy: crate::reclaim::compare::Candidate,
        sent: Vec<SentMessage>,
    },
    SnapshotPreview(Box<SnapshotPreview>),
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
    Models(models::ModelsReport),
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

/// Runs an action against the store under the user's settings. `cancel` is checked between steps. The envelope is
/// itself a command ([`exec`]): it routes each action to its command's file.
pub fn run(
    store: &mut Store,
    settings: &Settings,
    action: Action,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Outcome, CommandError> {
    exec(store, settings, action, progress, cancel)
}

impl Command for Action {
    type Output = Outcome;

    fn run(self, env: Env<'_>) -> Result<Outcome, CommandError> {
        use Action as A;
        match self {
            A::Job(j) => j.run_job(env).map(Outcome::Answer),
            a @ (A::Append { .. }
            | A::Branch { .. }
            | A::Fork { .. }
            | A::Checkpoint { .. }
            | A::Rewind { .. }
            | A::Undo { .. }
            | A::Resume { .. }
            | A::List
            | A::Show { .. }
            | A::Tree { .. }
            | A::Check
            | A::Find { .. }
            | A::Search(_)) => tree::run(env, a),
            a @ (A::Import { .. } | A::Export { .. } | A::Continue { .. }) => files::run(env, a),
            a
            @ (A::Compact { .. } | A::Shake { .. } | A::Send { .. } | A::ServerCompact { .. }) => {
                reclaim::run(env, a)
            }
            a @ (A::Context { .. }
            | A::Compare { .. }
            | A::Preview { .. }
            | A::Timeline { .. }
            | A::Cache { .. }
            | A::SnapshotPreview { .. }
            | A::Legibility { .. }) => context::run(env, a),
            A::Replay { conversation } => replay::ReplayMeasured { conversation }
                .run(env)
                .map(Outcome::Replayed),
            A::Calibrate => calibrate::Calibrate.run(env).map(|c| Outcome::Calibrated {
                models: c.models,
                skipped: c.skipped,
            }),
            A::Diff { a, b } => diff::DiffPaths { a, b }.run(env).map(Outcome::Diffed),
            A::Stats { by, since } => stats::UsageStats {
                by,
                since,
                cache: false,
            }
            .run(env)
            .map(Outcome::Stats),
            A::CacheStats { by, since } => stats::UsageStats {
                by,
                since,
                cache: true,
            }
            .run(env)
            .map(Outcome::Stats),
            A::Models => models::ListModels.run(env).map(Outcome::Models),
        }
    }

    fn conversation(&self) -> Option<&str> {
        Action::conversation(self)
    }
}

/// One command: its arguments are its fields, [`Command::Output`] what it answers, [`Command::run`] how (with
/// the store and settings of [`Env`]). A shell runs it with [`exec`]: the answer comes back as its own type, so a
/// shell has no other command's outcome to rule out.
pub trait Command {
    type Output;
    fn run(self, env: Env<'_>) -> Result<Self::Output, CommandError>;
    /// The conversation it is about, where it is about one (a late answer about a conversation no longer open is
    /// dropped, not shown under another).
    fn conversation(&self) -> Option<&str> {
        None
    }
    /// What it is doing, for a status line while it runs.
    fn doing(&self) -> String {
        "working".into()
    }
}

/// A command with its output type erased, for a shell that sends commands across a thread (the window's worker):
/// every command that is `Clone + Debug + Send` is one.
pub trait Job: Send + std::fmt::Debug {
    fn conversation(&self) -> Option<&str>;
    fn doing(&self) -> String;
    fn run_job(self: Box<Self>, env: Env<'_>) -> Result<Answer, CommandError>;
    fn clone_job(&self) -> Box<dyn Job>;
}

impl<C> Job for C
where
    C: Command + Clone + std::fmt::Debug + Send + 'static,
    C::Output: Send + Sync + 'static,
{
    fn conversation(&self) -> Option<&str> {
        Command::conversation(self)
    }

    fn doing(&self) -> String {
        Command::doing(self)
    }

    fn run_job(self: Box<Self>, env: Env<'_>) -> Result<Answer, CommandError> {
        Ok(Answer(std::sync::Arc::new((*self).run(env)?)))
    }

    fn clone_job(&self) -> Box<dyn Job> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Job> {
    fn clone(&self) -> Self {
        self.clone_job()
    }
}

/// A job's answer, its type erased; the shell that sent the job takes it back as the command's `Output`.
#[derive(Clone)]
pub struct Answer(std::sync::Arc<dyn std::any::Any + Send + Sync>);

impl Answer {
    /// The answer as `T`, or itself when it is another command's.
    pub fn take<T: Send + Sync + 'static>(self) -> Result<std::sync::Arc<T>, Answer> {
        self.0.downcast::<T>().map_err(Answer)
    }

    /// The answer as an owned `T` (moved out when this is its only holder, else copied), or itself.
    pub fn take_owned<T: Clone + Send + Sync + 'static>(self) -> Result<T, Answer> {
        self.take::<T>().map(std::sync::Arc::unwrap_or_clone)
    }
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Answer(..)")
    }
}

/// Runs a command against the store under the user's settings (`cancel` checked between steps).
pub fn exec<C: Command>(
    store: &mut Store,
    settings: &Settings,
    command: C,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<C::Output, CommandError> {
    command.run(Env {
        store,
        settings,
        progress,
        cancel,
    })
}

/// What every action runs with.
pub struct Env<'a> {
    pub store: &'a mut Store,
    pub settings: &'a Settings,
    pub progress: &'a dyn Progress,
    pub cancel: &'a AtomicBool,
}

impl Env<'_> {
    /// The same environment lent to a command run inside another (which then goes on with it).
    pub fn again(&mut self) -> Env<'_> {
        Env {
            store: &mut *self.store,
            settings: self.settings,
            progress: self.progress,
            cancel: self.cancel,
        }
    }
}

/// An action handed to a file that does not run it: a slip in [`run`]'s routing, reported rather than a panic.
fn misrouted() -> CommandError {
    CommandError::Invalid(
        "internal: an action was routed to a file of the commands layer that does not run it"
            .into(),
    )
}

/// The policy for a path: its newest reply's model (or `model`), under the settings, its window the one the
/// conversation's harness said it ran the model with, else the model's, no smaller than the largest prompt the
/// store measured for that model.
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
    let ran_with = model.and_then(|m| view.ran_with(m));
    Ok(Policy::new(settings, model, window, measured).ran_with(ran_with))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_runs_its_command_and_is_taken_back_as_its_output() {
        let mut store = Store::open_in_memory().unwrap();
        let conv = crate::demo::install(&mut store).unwrap().conversation;
        let cancel = AtomicBool::new(false);
        let settings = Settings::default();
        let job = Action::job(log::OperationLog {
            conversation: conv.clone(),
        });
        assert_eq!(job.conversation(), Some(conv.as_str()));
        let Outcome::Answer(a) = run(&mut store, &settings, job, &Quiet, &cancel).unwrap() else {
            panic!("a job answers with an Answer")
        };
        // another command's type is refused and the answer kept
        let a = a.take::<Vec<crate::model::Checkpoint>>().unwrap_err();
        let ops = a.take::<Vec<Operation>>().unwrap();
        let direct = exec(
            &mut store,
            &settings,
            log::OperationLog { conversation: conv },
            &Quiet,
            &cancel,
        )
        .unwrap();
        assert!(!ops.is_empty());
        assert_eq!(ops.len(), direct.len());
    }
}
