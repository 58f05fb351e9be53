//! The command line: one file per command under `cli/`, each an `Args` struct (clap) and a `run` that builds an
//! [`crate::commands::Action`], runs it, and prints the outcome as text or JSON. This file is the dispatch table
//! and what the commands share: the store and settings ([`Ctx`]), the enumerated flags, the output helpers. Every
//! error is one line on stderr and exit code 2; output piped into a reader that stops early (`| head`) ends
//! quietly.

mod append;
mod branch;
mod cache;
mod calibrate;
mod check;
mod checkpoint;
mod checkpoints;
mod compact;
mod compare;
mod context;
mod continue_in;
mod diff;
mod discover;
mod export;
mod fork;
mod import;
mod legibility;
mod list;
mod log;
mod models;
mod new;
mod render;
mod replay;
mod resume;
mod retry;
mod rewind;
mod screenshot;
mod search;
mod send;
mod shake;
mod show;
mod slash;
mod stats;
mod stress_writer;
mod tree;
mod undo;
mod window;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{Context as _, Result, anyhow};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::commands::{Action, Outcome, Progress};
use crate::reclaim::Settings;
use crate::store::Store;

pub use stress_writer::generated_turn;

#[derive(Parser)]
#[command(
    name = "cairn",
    version,
    about = "Explorer and library for the history of LLM agent sessions"
)]
pub struct Cli {
    /// The store file (default: cairn.db in the user's data folder).
    #[arg(long, global = true, env = "CAIRN_DB", value_name = "PATH")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Create a conversation; prints its id.
    New(new::Args),
    /// Import transcripts (files or folders): Claude Code, pi, Codex, Gemini CLI, Copilot CLI, opencode, Cline, Aider,
    /// Cursor, Factory Droid, SWE-agent and OpenHands trajectories, Anthropic or OpenAI messages JSON, cairn exports.
    Import(import::Args),
    /// Export a conversation: html, markdown, jsonl (the whole tree, lossless), anthropic or openai (a request
    /// body for the active path), claude-code, pi, codex, gemini-cli or opencode (a session the harness resumes).
    Export(export::Args),
    /// Continue a conversation in Claude Code, pi, Codex, Gemini CLI or opencode: writes it where the harness finds
    /// it and prints the command that resumes it.
    #[command(name = "continue")]
    Continue(continue_in::Args),
    /// List the sessions other harnesses left in their standard folders, newest first.
    Discover(discover::Args),
    /// Render messages (or a text file) into snapshot pages: page-001.png..., manifest.json, factsheet.txt.
    Render(render::Args),
    /// What the model would see on the active path, in tokens, and what each reclaim rung would take back.
    Context(context::Args),
    /// Fit the token estimate to what providers measured on the imported transcripts, per model (kept in the
    /// store for `context`).
    Calibrate(calibrate::Args),
    /// The estimate of every measured reply against what its provider measured.
    Replay(replay::Args),
    /// The prompt cache reply by reply: hits, misses and their causes (ttl, compaction, branch, model,
    /// overhead), what each miss cost
    Cache(cache::Args),
    /// Full-text search over every conversation and branch: words, "phrases", prefix*, AND/OR/NOT
    Search(search::Args),
    /// Snapshot legibility: render in page shapes, read back with OCR, score prose, code and numbers
    Legibility(legibility::Args),
    /// Where two attempts went apart: two tips, a fork and its origin, or two runs of a task
    Diff(diff::Args),
    /// Usage across sessions: tokens, cache hits, cost at list prices, tool calls and errors, compactions
    Stats(stats::Args),
    /// Every model the store has seen: catalog entry, window, tokenizer, scale, prices, and where each came from
    Models(models::Args),
    /// Continue a conversation with a provider: the reply is streamed and persisted with the prompt as one turn.
    Send(send::Args),
    /// Apply a reclaim rung (writes a compaction marker; stored messages never change). Without --strategy, the
    /// ladder runs the free rungs and the snapshot, cheapest first, until the context fits --target.
    Compact(compact::Args),
    /// The free rungs only (elision even below its threshold, image pruning).
    Shake(shake::Args),
    /// Each rung alone and the ladder, side by side on the active path; writes nothing.
    Compare(compare::Args),
    /// Run a slash command (/compact, /shake, /context, /tree, /fork, /checkpoint, /rewind, /branch, /export,
    /// /undo) on a conversation.
    Slash(slash::Args),
    /// Append one complete turn from a JSON array of messages in Anthropic Messages shape (`-` reads stdin);
    /// prints the new tip's id.
    Append(append::Args),
    /// List conversations.
    List(list::Args),
    /// Show the active path, root to tip.
    Show(show::Args),
    /// Print the message tree, tip and checkpoints marked.
    Tree(tree::Args),
    /// Move the tip to a message of the same conversation (writes no message).
    Branch(branch::Args),
    /// Copy the root→tip path (or root→MSG) into a new conversation; prints its id.
    Fork(fork::Args),
    /// Label the current tip (a clean turn boundary).
    Checkpoint(checkpoint::Args),
    /// Move the tip back to a checkpoint and leave a digest of what was found; prints the digest's id.
    Rewind(rewind::Args),
    /// List checkpoints.
    Checkpoints(checkpoints::Args),
    /// The newest messages that fit a budget, as one JSON object.
    Resume(resume::Args),
    /// Tell apart nothing loaded / nothing to retry / a retryable last turn (and rewind the tip for it).
    Retry(retry::Args),
    /// Undo the last pointer move (tip, checkpoint, fork, resume window).
    Undo(undo::Args),
    /// The operation log of a conversation.
    Log(log::Args),
    /// Check the store file (`PRAGMA integrity_check`).
    Check,
    /// Open the window (the default with no command).
    Window,
    /// Open the window on a view, save a PNG of it once it has settled, and close.
    Screenshot(screenshot::Args),
    /// Append generated turns forever, printing each turn's number once its append returned (crash tests).
    #[command(name = "stress-writer", hide = true)]
    StressWriter(stress_writer::Args),
}

/// Runs the CLI and returns the process exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    // a store from before an index is indexed as it opens; say how far that is
    crate::store::index::on_migration_progress(Box::new(|what, done, total| {
        eprintln!("cairn: {}: {done} of {total}", terminal_safe(what));
    }));
    // the model catalog `cairn models --update` fetched, over the bundled one (read when first needed)
    crate::config::load_catalog();
    let mut ctx = Ctx {
        db: cli.db,
        store: None,
        settings: None,
    };
    let result = match cli.command {
        None => window::run(&mut ctx),
        Some(command) => dispatch(&mut ctx, command),
    };
    match result {
        Ok(()) => 0,
        // the reader of our output went away (`cairn list | head`): not an error
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("cairn: {}", terminal_safe(&msg));
            2
        }
    }
}

fn dispatch(ctx: &mut Ctx, command: Command) -> Result<()> {
    use Command as C;
    match command {
        C::New(a) => new::run(ctx, a),
        C::Import(a) => import::run(ctx, a),
        C::Export(a) => export::run(ctx, a),
        C::Continue(a) => continue_in::run(ctx, a),
        C::Discover(a) => discover::run(ctx, a),
        C::Render(a) => render::run(ctx, a),
        C::Context(a) => context::run(ctx, a),
        C::Calibrate(a) => calibrate::run(ctx, a),
        C::Replay(a) => replay::run(ctx, a),
        C::Cache(a) => cache::run(ctx, a),
        C::Search(a) => search::run(ctx, a),
        C::Stats(a) => stats::run(ctx, a),
        C::Models(a) => models::run(ctx, a),
        C::Diff(a) => diff::run(ctx, a),
        C::Legibility(a) => legibility::run(ctx, a),
        C::Send(a) => send::run(ctx, a),
        C::Compact(a) => compact::run(ctx, a),
        C::Shake(a) => shake::run(ctx, a),
        C::Compare(a) => compare::run(ctx, a),
        C::Slash(a) => slash::run(ctx, a),
        C::Append(a) => append::run(ctx, a),
        C::List(a) => list::run(ctx, a),
        C::Show(a) => show::run(ctx, a),
        C::Tree(a) => tree::run(ctx, a),
        C::Branch(a) => branch::run(ctx, a),
        C::Fork(a) => fork::run(ctx, a),
        C::Checkpoint(a) => checkpoint::run(ctx, a),
        C::Rewind(a) => rewind::run(ctx, a),
        C::Checkpoints(a) => checkpoints::run(ctx, a),
        C::Resume(a) => resume::run(ctx, a),
        C::Retry(a) => retry::run(ctx, a),
        C::Undo(a) => undo::run(ctx, a),
        C::Log(a) => log::run(ctx, a),
        C::Check => check::run(ctx),
        C::Window => window::run(ctx),
        C::Screenshot(a) => screenshot::run(ctx, a),
        C::StressWriter(a) => stress_writer::run(ctx, a),
    }
}

/// Help and version print as clap prints them; a usage error is one line naming the flag and value at fault
/// (`--format "pdf": html, markdown, jsonl, anthropic or openai`), exit code 2.
fn usage_error(e: clap::Error) -> i32 {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // printing help to a closed pipe is not worth reporting
        let _printed = e.print();
        return 0;
    }
    let text = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let line = match (
        e.kind(),
        text(ContextKind::InvalidArg),
        text(ContextKind::InvalidValue),
    ) {
        (ErrorKind::InvalidValue, Some(arg), Some(value)) => {
            let flag = arg.split_whitespace().next().unwrap_or(&arg).to_string();
            let valid = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(v)) if !v.is_empty() => {
                    let (last, rest) = v.split_last().unwrap_or((&v[0], &[]));
                    if rest.is_empty() {
                        last.clone()
                    } else {
                        format!("{} or {last}", rest.join(", "))
                    }
                }
                _ => String::new(),
            };
            if valid.is_empty() {
                format!("{flag} {value:?}: not a valid value")
            } else {
                format!("{flag} {value:?}: {valid}")
            }
        }
        _ => e
            .to_string()
            .lines()
            .map(str::trim)
            .filter(|l| {
                !l.is_empty() && !l.starts_with("For more information") && !l.starts_with("Usage:")
            })
            .map(|l| l.trim_start_matches("error: "))
            .collect::<Vec<_>>()
            .join("; "),
    };
    eprintln!("cairn: {line}");
    2
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// What the commands share: the store (opened on first use) and the settings (read on first use).
pub struct Ctx {
    db: Option<PathBuf>,
    store: Option<Store>,
    settings: Option<Settings>,
}

impl Ctx {
    /// The store's file: `--db`, `CAIRN_DB`, or cairn.db in the user's data folder.
    fn db_path(&self) -> Result<PathBuf> {
        match &self.db {
            Some(p) => Ok(p.clone()),
            None => {
                let dirs = directories::ProjectDirs::from("", "", "cairn").ok_or_else(|| {
                    anyhow!("no home folder to keep the store in; pass --db PATH")
                })?;
                let dir = dirs.data_dir();
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                Ok(dir.join("cairn.db"))
            }
        }
    }

    fn store(&mut self) -> Result<&mut Store> {
        if self.store.is_none() {
            self.store = Some(Store::open(self.db_path()?)?);
        }
        self.store
            .as_mut()
            .ok_or_else(|| anyhow!("the store could not be opened"))
    }

    /// `--shape NAME`: the snapshot's page shape for this command, over the settings file's.
    fn use_shape(&mut self, shape: Option<String>) -> Result<()> {
        if let Some(name) = shape {
            if crate::render::shape::by_name(&name).is_none() {
                return Err(anyhow!(
                    "--shape {name:?}: {}",
                    crate::render::shape::names()
                ));
            }
            self.settings()?;
            if let Some(s) = self.settings.as_mut() {
                s.shape = Some(name);
            }
        }
        Ok(())
    }

    fn settings(&mut self) -> Result<&Settings> {
        if self.settings.is_none() {
            self.settings = Some(crate::config::settings()?);
        }
        self.settings
            .as_ref()
            .ok_or_else(|| anyhow!("the settings could not be read"))
    }

    /// Runs an action quietly.
    fn run(&mut self, action: Action) -> Result<Outcome> {
        self.exec(action)
    }

    /// Runs a command; its answer comes back as its own type.
    fn exec<C: crate::commands::Command>(&mut self, command: C) -> Result<C::Output> {
        self.exec_with(command, &crate::commands::Quiet)
    }

    /// Runs a command, reporting its progress.
    fn exec_with<C: crate::commands::Command>(
        &mut self,
        command: C,
        progress: &dyn Progress,
    ) -> Result<C::Output> {
        let settings = self.settings()?.clone();
        let cancel = AtomicBool::new(false);
        Ok(crate::commands::exec(
            self.store()?,
            &settings,
            command,
            progress,
            &cancel,
        )?)
    }
}

/// A table's cell of `width` terminal columns: `s` cut to fit (by the columns its characters take, two for a CJK
/// one) and padded with spaces.
fn cell(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut taken = 0;
    let mut cut = String::with_capacity(s.len().min(width * 4));
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if taken + w > width {
            break;
        }
        taken += w;
        cut.push(c);
    }
    cut.extend(std::iter::repeat_n(' ', width - taken));
    cut
}

/// Prints a line on stdout.
fn out(s: &str) -> Result<()> {
    let s = gate(s);
    let mut o = std::io::stdout().lock();
    writeln!(o, "{}", terminal_safe(&s))?;
    Ok(())
}

/// Whether this command was asked to keep secrets (`--no-redact`); everything else it prints is redacted.
static KEEP_SECRETS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For a command run with `--no-redact`: what it prints keeps its secrets.
fn keep_secrets() {
    KEEP_SECRETS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The last gate before the terminal: every line a command prints (titles, tree labels, tool names, search
/// snippets, diffs, ...) has its secrets redacted ([`crate::redact::text`]) unless the command was run with
/// `--no-redact`. Exports written as data have their own redaction ([`crate::export`]).
fn gate(s: &str) -> std::borrow::Cow<'_, str> {
    if KEEP_SECRETS.load(std::sync::atomic::Ordering::Relaxed) {
        std::borrow::Cow::Borrowed(s)
    } else {
        crate::redact::text(s).0
    }
}

/// Text for a terminal: control characters a transcript carries (ESC and the other C0 controls but newline and
/// tab, DEL, the C1 controls) shown escaped (`\x1b`), so a session's bytes cannot clear the screen, set the
/// window's title or write the clipboard.
pub fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            o.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            o.push(c);
        }
    }
    std::borrow::Cow::Owned(o)
}

/// Prints text for a terminal (no newline added), its secrets redacted ([`gate`]) and its control characters
/// escaped ([`terminal_safe`]).
fn out_text(s: &str) -> Result<()> {
    out_raw(&terminal_safe(&gate(s)))
}

/// Prints text as is on stdout (data: an export, CSV).
fn out_raw(s: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(s.as_bytes())?;
    o.flush()?;
    Ok(())
}

fn print_json(v: &Value) -> Result<()> {
    let mut v = v.clone();
    if !KEEP_SECRETS.load(std::sync::atomic::Ordering::Relaxed) {
        crate::redact::strings(&mut v);
    }
    // JSON escapes the C0 controls itself; DEL and the C1 controls it leaves raw, so they are escaped here the
    // JSON way (the text stays valid JSON)
    let pretty = serde_json::to_string_pretty(&v)?;
    let mut text = String::with_capacity(pretty.len());
    for c in pretty.chars() {
        if c.is_control() && c != '\n' {
            text.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            text.push(c);
        }
    }
    let mut o = std::io::stdout().lock();
    writeln!(o, "{text}")?;
    Ok(())
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<()> {
    print_json(&serde_json::to_value(v)?)
}

/// An outcome the command did not expect (a bug, said in one line rather than a panic).
fn unexpected(o: &Outcome) -> anyhow::Error {
    anyhow!(
        "internal error: unexpected outcome {:?}",
        format!("{o:?}").chars().take(60).collect::<String>()
    )
}

/// A transcript format on the command line: `auto` (detected), or any format cairn reads, named as
/// [`crate::formats::Format::name`] names it (one list: a format added there is accepted here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ImportFormat(Option<crate::formats::Format>);

impl ImportFormat {
    const VARIANTS: [ImportFormat; crate::formats::Format::ALL.len() + 1] = {
        let all = crate::formats::Format::ALL;
        let mut v = [ImportFormat(None); crate::formats::Format::ALL.len() + 1];
        let mut i = 0;
        while i < all.len() {
            v[i + 1] = ImportFormat(Some(all[i]));
            i += 1;
        }
        v
    };

    fn format(self) -> Option<crate::formats::Format> {
        self.0
    }
}

impl ValueEnum for ImportFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(
            self.0.map_or("auto", crate::formats::Format::name),
        ))
    }
}

/// An export format on the command line, named as [`crate::export::ExportFormat::name`] names it (one list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExportFormat(crate::export::ExportFormat);

impl ExportFormat {
    const VARIANTS: [ExportFormat; crate::export::ExportFormat::ALL.len()] = {
        let all = crate::export::ExportFormat::ALL;
        let mut v = [ExportFormat(crate::export::ExportFormat::Html);
            crate::export::ExportFormat::ALL.len()];
        let mut i = 0;
        while i < all.len() {
            v[i] = ExportFormat(all[i]);
            i += 1;
        }
        v
    };

    fn format(self) -> crate::export::ExportFormat {
        self.0
    }
}

impl ValueEnum for ExportFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use crate::export::agent::Harness;
        let v = clap::builder::PossibleValue::new(self.0.name());
        Some(match self.0 {
            crate::export::ExportFormat::Markdown => v.alias("md"),
            crate::export::ExportFormat::Agent(Harness::ClaudeCode) => {
                v.help("A Claude Code session (JSONL), which `claude --resume` continues")
            }
            crate::export::ExportFormat::Agent(Harness::Pi) => {
                v.help("A pi session (v3 JSONL), which `pi --session` continues")
            }
            crate::export::ExportFormat::Agent(Harness::Codex) => {
                v.help("A Codex rollout (JSONL), which `codex resume` continues")
            }
            crate::export::ExportFormat::Agent(Harness::GeminiCli) => {
                v.help("A Gemini CLI session log (JSONL), which `gemini --resume` continues")
            }
            crate::export::ExportFormat::Agent(Harness::Opencode) => v.help(
                "An opencode export (JSON), which `opencode import` files and `opencode --session` continues",
            ),
            _ => v,
        })
    }
}

/// cairn's rungs on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Strategy {
    Elide,
    Images,
    Snapshot,
    Summary,
    /// Anthropic's server-side compaction (`compact_20260112`), kept as a summary marker; needs a key.
    AnthropicServer,
    /// OpenAI's `POST /v1/responses/compact`, kept as a marker; needs a key.
    OpenaiCompact,
}

impl Strategy {
    /// cairn's own rung, or None for a provider's server-side compaction.
    fn strategy(self) -> Option<crate::reclaim::Strategy> {
        use crate::reclaim::Strategy as S;
        Some(match self {
            Strategy::Elide => S::Elide,
            Strategy::Images => S::Images,
            Strategy::Snapshot => S::Snapshot,
            Strategy::Summary => S::Summary,
            Strategy::AnthropicServer | Strategy::OpenaiCompact => return None,
        })
    }
}

/// Page profiles on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Profile {
    ClaudeHires,
    Claude,
    ClaudeMany,
    Openai,
    Gemini,
}

impl Profile {
    pub(crate) fn profile(self) -> &'static crate::render::Profile {
        let name = match self {
            Profile::ClaudeHires => "claude-hires",
            Profile::Claude => "claude",
            Profile::ClaudeMany => "claude-many",
            Profile::Openai => "openai",
            Profile::Gemini => "gemini",
        };
        crate::render::profile::by_name(name).unwrap_or(&crate::render::PROFILES[0])
    }
}

/// Providers on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProviderKind {
    Anthropic,
    Openai,
}

impl ProviderKind {
    fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
        }
    }
}
