//! The command line: a thin edge over the core. Parses arguments (clap), calls [`crate::store::Store`], prints
//! text or JSON. Every error is one line on stderr and exit code 2.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use serde_json::{Value, json};

use crate::model::{Block, NewMessage, Role, ToolResultContent};
use crate::store::{Budget, Retry, Store};
use crate::wire;

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
    New {
        #[arg(long)]
        title: Option<String>,
    },
    /// Import transcripts (files or folders): Claude Code, pi, Codex, Anthropic or OpenAI messages JSON.
    Import {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// auto, cairn, claude-code, pi, codex, anthropic or openai
        #[arg(long, default_value = "auto")]
        format: String,
        #[arg(long)]
        json: bool,
    },
    /// Export a conversation: html, markdown, jsonl (the whole tree, lossless), anthropic or openai (a request
    /// body for the active path).
    Export {
        conv: String,
        /// End the exported path at this message (default: the tip).
        #[arg(long, value_name = "MSG")]
        at: Option<String>,
        #[arg(long)]
        format: String,
        /// Write here instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Markdown/HTML: leave tool results out.
        #[arg(long)]
        no_tool_results: bool,
        /// Markdown/HTML: leave thinking out.
        #[arg(long)]
        no_thinking: bool,
    },
    /// List the Claude Code, pi and Codex sessions in their standard folders, newest first.
    Discover {
        /// The home folder to look under (default: $HOME).
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Render messages (or a text file) into snapshot pages: page-001.png..., manifest.json, factsheet.txt.
    Render {
        /// The conversation (its active path); omit with --text.
        conv: Option<String>,
        /// First message of the range (default: the root).
        #[arg(long, value_name = "MSG")]
        from: Option<String>,
        /// Last message of the range (default: the tip).
        #[arg(long, value_name = "MSG")]
        to: Option<String>,
        /// Render a text file instead of a conversation.
        #[arg(long, value_name = "FILE", conflicts_with = "conv")]
        text: Option<PathBuf>,
        /// claude-hires (default), claude, claude-many, openai, gemini
        #[arg(long, default_value = "claude-hires")]
        profile: String,
        /// Cell size WxH (bitmap: 5x8 or 6x12; outline: any; default: the profile's).
        #[arg(long, value_name = "WxH")]
        cell: Option<String>,
        /// bitmap (crisp 1-bit, decodable) or outline (DejaVu Sans Mono, anti-aliased)
        #[arg(long, default_value = "bitmap")]
        font: String,
        /// PNG compression: fast, default or best.
        #[arg(long, default_value = "default")]
        compression: String,
        /// Leave the factsheet of exact strings out.
        #[arg(long)]
        no_factsheet: bool,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// What the model would see on the active path, in tokens, and what each reclaim rung would take back.
    Context {
        conv: String,
        /// The model whose window and calibration to use (default: the newest reply's).
        #[arg(long)]
        model: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Fit the token estimate to what providers measured on the imported transcripts, per model.
    Calibrate {
        #[arg(long)]
        json: bool,
    },
    /// Continue a conversation with a provider: the reply is streamed and persisted with the prompt as one turn.
    /// On a "too long" answer, the rungs that need no model run and the request is tried again (3 at most).
    Send {
        conv: String,
        text: String,
        /// anthropic or openai (default: the config file, else the one whose key is set, Anthropic first)
        #[arg(long)]
        provider: Option<String>,
        #[arg(long)]
        model: Option<String>,
        /// The model's context window in tokens (default: known per model family, else 200k).
        #[arg(long)]
        window: Option<u64>,
        #[arg(long)]
        json: bool,
    },
    /// Apply a reclaim rung (writes a compaction marker; stored messages never change). Without --strategy,
    /// the ladder runs the free rungs and the snapshot, cheapest first, until the context fits --target.
    Compact {
        conv: String,
        /// elide, images, snapshot or summary
        #[arg(long)]
        strategy: Option<String>,
        /// Summary: what the summary must keep.
        #[arg(long)]
        instructions: Option<String>,
        /// Summary: anthropic or openai.
        #[arg(long)]
        provider: Option<String>,
        /// Summary: the summarising model.
        #[arg(long)]
        model: Option<String>,
        /// Target tokens for the ladder (default: half the model's window).
        #[arg(long)]
        target: Option<u64>,
        /// The protect window: the newest tokens no rung touches (default 40000).
        #[arg(long, default_value_t = crate::context::PROTECT_TOKENS)]
        protect: u64,
        #[arg(long)]
        json: bool,
    },
    /// The free rungs only (elision even below its threshold, image pruning).
    Shake {
        conv: String,
        /// elide, images or all
        #[arg(default_value = "all")]
        what: String,
    },
    /// Each rung alone and the ladder, side by side on the active path; writes nothing.
    Compare {
        conv: String,
        #[arg(long)]
        budget: u64,
        #[arg(long, default_value = "claude-hires")]
        profile: String,
        #[arg(long)]
        json: bool,
    },
    /// Run a slash command (/compact, /shake, /context, /tree, /fork, /checkpoint, /rewind, /branch, /export,
    /// /undo) on a conversation.
    Slash { conv: String, command: String },
    /// Append one complete turn from a JSON array of messages in Anthropic Messages shape (`-` reads stdin);
    /// prints the new tip's id.
    Append { conv: String, file: String },
    /// List conversations.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show the active path, root to tip.
    Show {
        conv: String,
        #[arg(long)]
        json: bool,
    },
    /// Print the message tree, tip and checkpoints marked.
    Tree { conv: String },
    /// Move the tip to a message of the same conversation (writes no message).
    Branch {
        conv: String,
        msg: String,
        /// Only move if the tip is still this message (compare-and-swap).
        #[arg(long, value_name = "OLD_TIP")]
        expect: Option<String>,
    },
    /// Copy the root→tip path (or root→MSG) into a new conversation; prints its id.
    Fork {
        conv: String,
        #[arg(long, value_name = "MSG")]
        at: Option<String>,
    },
    /// Label the current tip (a clean turn boundary).
    Checkpoint { conv: String, label: String },
    /// Move the tip back to a checkpoint and leave a digest of what was found; prints the digest's id.
    Rewind {
        conv: String,
        label: String,
        #[arg(long)]
        digest: String,
    },
    /// List checkpoints.
    Checkpoints {
        conv: String,
        #[arg(long)]
        json: bool,
    },
    /// The newest messages that fit a budget, as one JSON object.
    Resume {
        conv: String,
        #[arg(
            long,
            value_name = "N",
            conflicts_with = "max_tokens",
            required_unless_present = "max_tokens"
        )]
        max_messages: Option<usize>,
        #[arg(long, value_name = "N")]
        max_tokens: Option<u64>,
    },
    /// Tell apart nothing loaded / nothing to retry / a retryable last turn (and rewind the tip for it).
    Retry {
        conv: String,
        #[arg(long)]
        json: bool,
    },
    /// Undo the last pointer move (tip, checkpoint, fork, resume window).
    Undo { conv: String },
    /// The operation log of a conversation.
    Log {
        conv: String,
        #[arg(long)]
        json: bool,
    },
    /// Check the store file (`PRAGMA integrity_check`).
    Check,
    /// Open the window (the default with no command).
    Window,
    /// Open the window on a view, save a PNG of it once it has settled, and close.
    Screenshot {
        #[arg(long)]
        out: PathBuf,
        /// tree, transcript, snapshots, compare, context or operations.
        #[arg(long, default_value = "tree")]
        view: String,
        /// The conversation to show (default: the newest that is not a fork).
        #[arg(long)]
        conversation: Option<String>,
        /// light or dark (default: the system's).
        #[arg(long)]
        theme: Option<String>,
        /// The tree view zoomed out to show the whole tree, however small.
        #[arg(long)]
        fit: bool,
    },
    /// Append generated turns forever, printing each turn's number once its append returned (crash tests).
    #[command(name = "stress-writer", hide = true)]
    StressWriter {
        conv: String,
        #[arg(long, default_value_t = u64::MAX)]
        turns: u64,
    },
}

/// The store option, for commands run from a slash command as well as from the command line.
struct Db {
    db: Option<PathBuf>,
}

/// Runs the CLI and returns the process exit code.
pub fn run() -> i32 {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => 0,
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("cairn: {msg}");
            2
        }
    }
}

fn default_db() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "cairn")
        .ok_or_else(|| anyhow!("no home folder to keep the store in; pass --db PATH"))?;
    let dir = dirs.data_dir();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir.join("cairn.db"))
}

fn open(db: &Option<PathBuf>) -> Result<Store> {
    let path = match db {
        Some(p) => p.clone(),
        None => default_db()?,
    };
    Ok(Store::open(path)?)
}

fn out(s: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{s}")?;
    Ok(())
}

fn print_json(v: &Value) -> Result<()> {
    out(&serde_json::to_string_pretty(v)?)
}

fn dispatch(cli: Cli) -> Result<()> {
    let Some(command) = cli.command else {
        let (store, fresh) = open_for_window(&cli.db)?;
        return open_window(store.path().to_path_buf(), fresh, None);
    };
    execute(&cli.db, command)
}

fn execute(db: &Option<PathBuf>, command: Command) -> Result<()> {
    let cli = Db { db: db.clone() };
    match command {
        Command::New { title } => {
            let mut s = open(&cli.db)?;
            out(&s.create_conversation(title.as_deref())?)
        }
        Command::Import {
            paths,
            format,
            json,
        } => import(&cli.db, &paths, &format, json),
        Command::Export {
            conv,
            at,
            format,
            out: file,
            no_tool_results,
            no_thinking,
        } => {
            let fmt = crate::export::ExportFormat::from_name(&format).ok_or_else(|| {
                anyhow!(
                    "unknown export format {format:?}: html, markdown, jsonl, anthropic or openai"
                )
            })?;
            let s = open(&cli.db)?;
            let opts = crate::export::Options {
                tool_results: !no_tool_results,
                thinking: !no_thinking,
            };
            let text = crate::export::export(&s, &conv, at.as_deref(), fmt, opts)?;
            match file {
                Some(f) => std::fs::write(&f, text)
                    .with_context(|| format!("cannot write {}", f.display())),
                None => {
                    let mut o = std::io::stdout().lock();
                    o.write_all(text.as_bytes())?;
                    Ok(())
                }
            }
        }
        Command::Discover { home, json } => {
            let home = match home.or_else(crate::discover::home) {
                Some(h) => h,
                None => bail!("no home folder; pass --home DIR"),
            };
            let found = crate::discover::discover(&home);
            if json {
                return print_json(&serde_json::to_value(&found)?);
            }
            for f in found {
                out(&format!(
                    "{:<12} {:>10} bytes {:>6} messages  {}",
                    f.format.name(),
                    f.size,
                    f.messages,
                    f.path.display()
                ))?;
            }
            Ok(())
        }
        Command::Render {
            conv,
            from,
            to,
            text,
            profile,
            cell,
            font,
            compression,
            no_factsheet,
            out: dir,
            json,
        } => {
            let profile = crate::render::profile::by_name(&profile).ok_or_else(|| {
                anyhow!("unknown profile {profile:?}: claude-hires, claude, claude-many, openai or gemini")
            })?;
            let mut opts = crate::render::Options::new(profile);
            opts.font = match font.as_str() {
                "bitmap" => crate::render::FontKind::Bitmap,
                "outline" => crate::render::FontKind::Outline,
                f => bail!("--font {f:?}: bitmap or outline"),
            };
            if let Some(c) = cell {
                let (w, h) = c
                    .split_once('x')
                    .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
                    .ok_or_else(|| anyhow!("--cell {c:?}: expected WxH such as 5x8"))?;
                opts.cell = (w, h);
            }
            opts.compression = match compression.as_str() {
                "fast" => crate::render::Compression::Fast,
                "default" => crate::render::Compression::Default,
                "best" => crate::render::Compression::Best,
                c => bail!("--compression {c:?}: fast, default or best"),
            };
            opts.factsheet = !no_factsheet;
            let sources = match (&text, &conv) {
                (Some(f), _) => {
                    let t = std::fs::read_to_string(f)
                        .with_context(|| format!("cannot read {}", f.display()))?;
                    vec![crate::render::text_source(&f.display().to_string(), t)]
                }
                (None, Some(c)) => {
                    let s = open(&cli.db)?;
                    let path = match &to {
                        Some(m) => s.path_to(c, m)?,
                        None => s.active_path(c)?,
                    };
                    let start = match &from {
                        Some(m) => {
                            let id = s.resolve_message(c, m)?;
                            path.iter().position(|x| x.id == id).ok_or_else(|| {
                                anyhow!(
                                    "message {id} is not on the path to {}",
                                    to.as_deref().unwrap_or("the tip")
                                )
                            })?
                        }
                        None => 0,
                    };
                    crate::render::sources(&path[start..])
                }
                (None, None) => bail!("give a conversation or --text FILE"),
            };
            let r = crate::render::render(&sources, &opts)?;
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            for (p, m) in r.pages.iter().zip(&r.manifest.pages) {
                let f = dir.join(&m.file);
                std::fs::write(&f, &p.png)
                    .with_context(|| format!("cannot write {}", f.display()))?;
            }
            std::fs::write(
                dir.join("manifest.json"),
                serde_json::to_string(&r.manifest)?,
            )?;
            if opts.factsheet {
                std::fs::write(dir.join("factsheet.txt"), &r.factsheet)?;
            }
            if json {
                print_json(&serde_json::to_value(&r.stats)?)
            } else {
                let st = &r.stats;
                out(&format!(
                    "{} pages, {} characters, {} image tokens ({}), ~{} text tokens as text; {:.2} characters per image token, {:.2}x cheaper than text{}",
                    st.pages,
                    st.characters,
                    st.image_tokens,
                    profile.name,
                    st.text_tokens,
                    st.chars_per_image_token,
                    st.ratio,
                    if st.unrendered > 0 {
                        format!(
                            "; {} characters drawn as boxes (text kept in the factsheet)",
                            st.unrendered
                        )
                    } else {
                        String::new()
                    }
                ))
            }
        }
        Command::Context { conv, model, json } => {
            let s = open(&cli.db)?;
            let path = s.active_path(&conv)?;
            let cals = crate::context::calibrate_store(&s)?;
            let model_name = model.clone().or_else(|| {
                path.iter()
                    .rev()
                    .find(|m| m.role == crate::model::Role::Assistant)
                    .map(crate::tokens::model_of)
            });
            let cal = model_name
                .as_deref()
                .and_then(|m| cals.iter().find(|c| c.model == m).cloned())
                .filter(|c| c.samples >= 3)
                .map(|mut c| {
                    // this session's own overhead (its system prompt and tools), when its replies were measured
                    let own: Vec<f64> = crate::tokens::samples_of_path(&path, 0)
                        .into_iter()
                        .map(|(_, x)| x.measured as f64 - c.correction.scale * x.estimate as f64)
                        .collect();
                    if !own.is_empty() {
                        c.correction.overhead = own.iter().sum::<f64>() / own.len() as f64;
                    }
                    c
                });
            let r = crate::context::report(&path, model_name.as_deref(), cal);
            if json {
                return print_json(&serde_json::to_value(&r)?);
            }
            out(&format!(
                "model {}  window {}  (reply reserve {})",
                r.model, r.window, r.reply_reserve
            ))?;
            out(&format!("  system               {:>8}", r.system))?;
            out(&format!(
                "  tools and overhead   {:>8}{}",
                r.tools_and_overhead,
                if r.calibration.is_some() {
                    " (calibrated)"
                } else {
                    " (not calibrated)"
                }
            ))?;
            let m = &r.messages;
            for (k, v) in [
                ("text", m.text),
                ("tool calls", m.tool_use),
                ("tool results", m.tool_results),
                ("images", m.images),
                ("thinking", m.thinking),
                ("other", m.other),
            ] {
                out(&format!("  {k:<20} {v:>8}"))?;
            }
            out(&format!(
                "  estimated total      {:>8}   last measured {}",
                r.estimated_total,
                r.last_measured.map_or("-".to_string(), |v| v.to_string())
            ))?;
            out(&format!(
                "  cached prefix        {:>8}   through {}",
                r.cached_tokens,
                r.cached_through.as_deref().unwrap_or("-")
            ))?;
            out(&format!("  free                 {:>8}", r.free))?;
            out("  rungs (what each would take back now):")?;
            for g in &r.rungs {
                out(&format!(
                    "    {:<9} {:>8} tokens, {:>4} items, {} model calls{}  {}",
                    g.name,
                    g.saves,
                    g.items,
                    g.model_calls,
                    if g.would_run {
                        ""
                    } else {
                        " (would not run yet)"
                    },
                    g.note
                ))?;
            }
            Ok(())
        }
        Command::Calibrate { json } => {
            let s = open(&cli.db)?;
            let cals = crate::context::calibrate_store(&s)?;
            if json {
                return print_json(&serde_json::to_value(&cals)?);
            }
            for c in cals {
                out(&format!(
                    "{:<32} {:>4} replies  median abs error {:>6.1}% -> {:>5.1}%  (overhead {:.0}, scale {:.3})",
                    c.model,
                    c.samples,
                    c.error_before,
                    c.error_after,
                    c.correction.overhead,
                    c.correction.scale
                ))?;
            }
            Ok(())
        }
        Command::Send {
            conv,
            text,
            provider,
            model,
            window,
            json,
        } => {
            let p = crate::config::provider(provider.as_deref(), model)?;
            let policy = crate::config::policy(window)?;
            let mut s = open(&cli.db)?;
            let cancel = std::sync::atomic::AtomicBool::new(false);
            let mut stdout = std::io::stdout();
            let sent = crate::send::send(
                &mut s,
                &conv,
                &text,
                &p,
                &policy,
                &mut |t| {
                    if !json {
                        let _ = stdout.write_all(t.as_bytes());
                        let _ = stdout.flush();
                    }
                },
                &cancel,
            )?;
            if json {
                print_json(&serde_json::to_value(&sent)?)
            } else {
                out("")?;
                if !sent.compacted.is_empty() {
                    eprintln!(
                        "cairn: the provider said too long; ran {} and tried again ({} attempts)",
                        sent.compacted.join(", "),
                        sent.attempts
                    );
                }
                Ok(())
            }
        }
        Command::Compact {
            conv,
            strategy,
            instructions,
            provider,
            model,
            target,
            protect,
            json,
        } => {
            let mut s = open(&cli.db)?;
            match strategy.as_deref() {
                Some(name) => {
                    let st = crate::compact::Strategy::from_name(name).ok_or_else(|| {
                        anyhow!("--strategy {name:?}: elide, images, snapshot or summary")
                    })?;
                    if st == crate::compact::Strategy::Summary {
                        let p = crate::config::provider(provider.as_deref(), model)?;
                        let window = crate::context::window_of(&p.model);
                        let cancel = std::sync::atomic::AtomicBool::new(false);
                        let t = std::time::Instant::now();
                        return match crate::send::summarize(
                            &mut s,
                            &conv,
                            &p,
                            &crate::send::SummaryOptions {
                                instructions: instructions.clone(),
                                window,
                                protect,
                            },
                            &mut |done, total| {
                                if !json && done < total {
                                    eprintln!("summary: model call {}/{total}", done + 1);
                                }
                            },
                            &cancel,
                        )? {
                            Some(a) if json => print_json(&serde_json::to_value(&a)?),
                            Some(a) => out(&format!(
                                "summary ({} via {}): {} messages, {} -> {} tokens in {:.1} s (marker {})",
                                p.model,
                                p.base_url,
                                a.items,
                                a.tokens_before,
                                a.tokens_after,
                                t.elapsed().as_secs_f64(),
                                a.marker
                            )),
                            None => out("summary: nothing to summarise on this path"),
                        };
                    }
                    match crate::compact::apply(&mut s, &conv, st, true, None, protect)? {
                        Some(a) if json => print_json(&serde_json::to_value(&a)?),
                        Some(a) => out(&format!(
                            "{}: {} items, {} -> {} tokens (marker {})",
                            st.name(),
                            a.items,
                            a.tokens_before,
                            a.tokens_after,
                            a.marker
                        )),
                        None => out(&format!("{}: nothing to do on this path", st.name())),
                    }
                }
                None => {
                    let target = match target {
                        Some(t) => t,
                        None => {
                            let path = s.active_path(&conv)?;
                            let model = path
                                .iter()
                                .rev()
                                .find(|m| m.role == crate::model::Role::Assistant)
                                .map(crate::tokens::model_of)
                                .unwrap_or_default();
                            crate::context::window_of(&model) / 2
                        }
                    };
                    let o = crate::compact::ladder(&mut s, &conv, target)?;
                    if json {
                        return print_json(&serde_json::to_value(&o)?);
                    }
                    for a in &o.steps {
                        out(&format!(
                            "{:<9} {} items, {} -> {} tokens",
                            a.strategy.name(),
                            a.items,
                            a.tokens_before,
                            a.tokens_after
                        ))?;
                    }
                    match &o.note {
                        None => out(&format!(
                            "reached {} tokens (target {})",
                            o.tokens_after, o.target
                        )),
                        Some(n) => out(n),
                    }
                }
            }
        }
        Command::Shake { conv, what } => {
            let mut s = open(&cli.db)?;
            let rungs: &[crate::compact::Strategy] = match what.as_str() {
                "elide" => &[crate::compact::Strategy::Elide],
                "images" => &[crate::compact::Strategy::Images],
                "all" => &[
                    crate::compact::Strategy::Elide,
                    crate::compact::Strategy::Images,
                ],
                w => bail!("shake {w:?}: elide, images or all"),
            };
            for st in rungs {
                match crate::compact::apply(
                    &mut s,
                    &conv,
                    *st,
                    true,
                    None,
                    crate::context::PROTECT_TOKENS,
                )? {
                    Some(a) => out(&format!(
                        "{}: {} items, {} -> {} tokens",
                        st.name(),
                        a.items,
                        a.tokens_before,
                        a.tokens_after
                    ))?,
                    None => out(&format!("{}: nothing to do", st.name()))?,
                }
            }
            Ok(())
        }
        Command::Compare {
            conv,
            budget,
            profile,
            json,
        } => {
            if crate::render::profile::by_name(&profile).is_none() {
                bail!("unknown profile {profile:?}");
            }
            let s = open(&cli.db)?;
            let path = s.active_path(&conv)?;
            let rows = crate::compact::compare(&path, budget, &|h| s.blob(h).ok().map(|b| b.len()));
            if json {
                return print_json(&serde_json::to_value(&rows)?);
            }
            out(&format!(
                "{:<9} {:>9} {:>9} {:>6} {:>9} {:>7} {:>7} {:>9} {:>9}  cache kept through",
                "strategy",
                "text",
                "image",
                "calls",
                "img kB",
                "elided",
                "imaged",
                "$ list",
                "$ warm"
            ))?;
            for r in rows {
                out(&format!(
                    "{:<9} {:>9} {:>9} {:>6} {:>9.0} {:>7} {:>7} {:>9.4} {:>9.4}  {}{}{}",
                    r.strategy,
                    r.text_tokens_after,
                    r.image_tokens_after,
                    r.model_calls,
                    r.image_bytes as f64 / 1e3,
                    r.lost.tool_results_elided,
                    r.lost.characters_imaged,
                    r.cost_list,
                    r.cost_warm_cache,
                    r.cache_kept_through.as_deref().unwrap_or("-"),
                    if r.reaches_budget {
                        ""
                    } else {
                        "  (over budget)"
                    },
                    if r.ran || r.strategy == "none" {
                        ""
                    } else {
                        "  (nothing to do)"
                    }
                ))?;
            }
            Ok(())
        }
        Command::Slash { conv, command } => {
            use crate::slash::Slash;
            let cmd = crate::slash::parse(&command)?;
            let next = match cmd {
                Slash::Compact {
                    strategy,
                    instructions,
                } => Command::Compact {
                    conv,
                    strategy: strategy.map(|s| s.name().to_string()),
                    instructions,
                    provider: None,
                    model: None,
                    target: None,
                    protect: crate::context::PROTECT_TOKENS,
                    json: false,
                },
                Slash::Shake { elide, images } => Command::Shake {
                    conv,
                    what: match (elide, images) {
                        (true, false) => "elide",
                        (false, true) => "images",
                        _ => "all",
                    }
                    .to_string(),
                },
                Slash::Context => Command::Context {
                    conv,
                    model: None,
                    json: false,
                },
                Slash::Tree => Command::Tree { conv },
                Slash::Fork { at } => Command::Fork { conv, at },
                Slash::Checkpoint { label } => Command::Checkpoint { conv, label },
                Slash::Rewind { label, digest } => Command::Rewind {
                    conv,
                    label,
                    digest,
                },
                Slash::Branch { message } => Command::Branch {
                    conv,
                    msg: message,
                    expect: None,
                },
                Slash::Export { format, file } => Command::Export {
                    conv,
                    at: None,
                    format,
                    out: file.map(PathBuf::from),
                    no_tool_results: false,
                    no_thinking: false,
                },
                Slash::Undo => Command::Undo { conv },
            };
            execute(&cli.db, next)
        }
        Command::Append { conv, file } => {
            let messages = read_turn(&file)?;
            let mut s = open(&cli.db)?;
            let ids = s.append_turn(&conv, &messages)?;
            out(ids.last().map(String::as_str).unwrap_or_default())
        }
        Command::List { json } => {
            let s = open(&cli.db)?;
            let convs = s.conversations()?;
            if json {
                print_json(&serde_json::to_value(&convs)?)
            } else {
                out(&format!(
                    "{:<16}  {:>8}  {:<16}  TITLE",
                    "ID", "MESSAGES", "TIP"
                ))?;
                for c in convs {
                    out(&format!(
                        "{:<16}  {:>8}  {:<16}  {}",
                        c.id,
                        c.messages,
                        c.tip.as_deref().unwrap_or("-"),
                        c.title.as_deref().unwrap_or("")
                    ))?;
                }
                Ok(())
            }
        }
        Command::Show { conv, json } => {
            let s = open(&cli.db)?;
            let path = s.active_path(&conv)?;
            if json {
                let mut arr = Vec::with_capacity(path.len());
                for m in &path {
                    let mut w = s.to_wire(m)?;
                    w["id"] = json!(m.id);
                    w["parent"] = json!(m.parent);
                    arr.push(w);
                }
                print_json(&Value::Array(arr))
            } else {
                for m in &path {
                    out(&format!("── {} {}", m.role, m.id))?;
                    out(&render_text(&m.content))?;
                }
                Ok(())
            }
        }
        Command::Tree { conv } => {
            let s = open(&cli.db)?;
            let t = s.tree_text(&conv)?;
            print!("{t}");
            Ok(())
        }
        Command::Branch { conv, msg, expect } => {
            let mut s = open(&cli.db)?;
            out(&s.branch(&conv, &msg, expect.as_deref())?)
        }
        Command::Fork { conv, at } => {
            let mut s = open(&cli.db)?;
            out(&s.fork(&conv, at.as_deref())?)
        }
        Command::Checkpoint { conv, label } => {
            let mut s = open(&cli.db)?;
            out(&s.checkpoint(&conv, &label)?.message)
        }
        Command::Rewind {
            conv,
            label,
            digest,
        } => {
            let mut s = open(&cli.db)?;
            out(&s.rewind(&conv, &label, &digest)?)
        }
        Command::Checkpoints { conv, json } => {
            let s = open(&cli.db)?;
            let cps = s.checkpoints(&conv)?;
            if json {
                print_json(&serde_json::to_value(&cps)?)
            } else {
                for c in cps {
                    out(&format!("{:<24} {}", c.label, c.message))?;
                }
                Ok(())
            }
        }
        Command::Resume {
            conv,
            max_messages,
            max_tokens,
        } => {
            let budget = match (max_messages, max_tokens) {
                (Some(n), _) => Budget::Messages(n),
                (None, Some(t)) => Budget::Tokens(t),
                (None, None) => bail!("give --max-messages N or --max-tokens N"),
            };
            let mut s = open(&cli.db)?;
            let r = s.resume(&conv, budget)?;
            let mut messages = Vec::with_capacity(r.messages.len());
            for m in &r.messages {
                messages.push(s.to_wire(m)?);
            }
            print_json(&json!({
                "messages": messages,
                "dropped_checkpoints": r.dropped_checkpoints,
                "ids": r.messages.iter().map(|m| m.id.clone()).collect::<Vec<_>>(),
                "trimmed": r.trimmed,
                "incomplete_tail": r.incomplete_tail,
            }))
        }
        Command::Retry { conv, json } => {
            let mut s = open(&cli.db)?;
            let r = s.retry(&conv)?;
            if json {
                return print_json(&serde_json::to_value(&r)?);
            }
            match r {
                Retry::NothingLoaded { reason } => out(&format!("nothing loaded: {reason}")),
                Retry::NothingToRetry { tip } => out(&format!(
                    "nothing to retry: the last turn is complete (tip {tip})"
                )),
                Retry::Retryable {
                    failed_tip,
                    why,
                    restart_at,
                    ..
                } => out(&format!(
                    "retryable: {why} at {failed_tip}; tip moved back to {}",
                    restart_at
                        .as_deref()
                        .unwrap_or("(before the first message)")
                )),
            }
        }
        Command::Undo { conv } => {
            let mut s = open(&cli.db)?;
            let op = s.undo(&conv)?;
            out(&format!(
                "undid {} (tip {} -> {})",
                op.kind,
                op.tip_after.as_deref().unwrap_or("-"),
                op.tip_before.as_deref().unwrap_or("-")
            ))
        }
        Command::Log { conv, json } => {
            let s = open(&cli.db)?;
            let ops = s.operations(&conv)?;
            if json {
                return print_json(&serde_json::to_value(&ops)?);
            }
            for o in ops {
                out(&format!(
                    "{:>5} {:<10} {:<16} -> {:<16} {}{}",
                    o.seq,
                    o.kind,
                    o.tip_before.as_deref().unwrap_or("-"),
                    o.tip_after.as_deref().unwrap_or("-"),
                    if o.detail.is_null() {
                        String::new()
                    } else {
                        o.detail.to_string()
                    },
                    if o.undone { " (undone)" } else { "" }
                ))?;
            }
            Ok(())
        }
        Command::Check => {
            let s = open(&cli.db)?;
            match s.integrity_check()? {
                Ok(()) => out("ok"),
                Err(problems) => {
                    bail!("{}: integrity check failed: {problems}", s.path().display())
                }
            }
        }
        Command::Window => {
            let (s, fresh) = open_for_window(&cli.db)?;
            open_window(s.path().to_path_buf(), fresh, None)
        }
        Command::Screenshot {
            out: file,
            view,
            conversation,
            theme,
            fit,
        } => {
            let (s, _) = open_for_window(&cli.db)?;
            let conv = conversation
                .map(|c| s.resolve_conversation(&c))
                .transpose()?;
            let dark = match theme.as_deref() {
                None => None,
                Some("dark") => Some(true),
                Some("light") => Some(false),
                Some(t) => bail!("--theme {t:?}: light or dark"),
            };
            open_window(
                s.path().to_path_buf(),
                false,
                Some(Shot {
                    out: file,
                    view,
                    conversation: conv,
                    dark,
                    fit,
                }),
            )
        }
        Command::StressWriter { conv, turns } => stress_writer(&cli.db, &conv, turns),
    }
}

/// A screenshot request from the command line.
#[cfg_attr(not(feature = "gui"), allow(dead_code))]
struct Shot {
    out: PathBuf,
    view: String,
    conversation: Option<String>,
    dark: Option<bool>,
    fit: bool,
}

/// Opens the store for the window. A store that does not exist yet is created with the bundled demo session
/// in it, so a first run shows a real tree at once.
/// Opens the store for the window. A store that does not exist yet is created with the bundled demo session
/// in it, so a first run shows a real tree at once; the flag says it was.
fn open_for_window(db: &Option<PathBuf>) -> Result<(Store, bool)> {
    let path = match db {
        Some(p) => p.clone(),
        None => default_db()?,
    };
    let fresh = !path.exists();
    let mut store = Store::open(&path)?;
    if fresh {
        crate::demo::install(&mut store)
            .with_context(|| format!("{}: installing the demo session", path.display()))?;
    }
    Ok((store, fresh))
}

#[cfg(feature = "gui")]
fn open_window(store: PathBuf, first_run: bool, screenshot: Option<Shot>) -> Result<()> {
    use crate::window::{Options, View};
    let options = match screenshot {
        None => Options {
            first_run,
            ..Options::default()
        },
        Some(s) => {
            // "transcript" is the tree view with a message opened in the transcript beside it
            let view = match s.view.as_str() {
                "transcript" => View::Tree,
                v => View::from_name(v).ok_or_else(|| {
                    anyhow!(
                        "--view {v:?}: tree, transcript, snapshots, compare, context or operations"
                    )
                })?,
            };
            Options {
                conversation: s.conversation,
                screenshot: Some((s.out, view, s.view == "transcript")),
                dark: s.dark,
                first_run: false,
                fit: s.fit,
            }
        }
    };
    crate::window::run(store, options)
}

#[cfg(not(feature = "gui"))]
fn open_window(_store: PathBuf, _first_run: bool, _screenshot: Option<Shot>) -> Result<()> {
    bail!("this cairn was built without the window (feature \"gui\"); use a command, see --help")
}

fn import(db: &Option<PathBuf>, paths: &[PathBuf], format: &str, json: bool) -> Result<()> {
    let format = match format {
        "auto" => None,
        f => Some(crate::formats::Format::from_name(f).ok_or_else(|| {
            anyhow!("unknown format {f:?}: auto, claude-code, pi, codex, anthropic or openai")
        })?),
    };
    for p in paths {
        if !p.exists() {
            bail!("{}: no such file or folder", p.display());
        }
    }
    let files = crate::import::collect(paths).context("listing files")?;
    let mut s = open(db)?;
    let mut outcomes = Vec::with_capacity(files.len());
    let total = files.len();
    for (i, f) in files.iter().enumerate() {
        if !json && total > 1 {
            eprintln!("[{}/{}] {}", i + 1, total, f.display());
        }
        outcomes.push(crate::import::import_file(&mut s, f, format));
    }
    let refused: Vec<&crate::import::FileOutcome> = outcomes
        .iter()
        .filter(|o| o.error.is_some() && o.duplicate_of.is_none())
        .collect();
    if json {
        print_json(&serde_json::to_value(&outcomes)?)?;
    } else {
        for o in &outcomes {
            match (&o.error, &o.duplicate_of) {
                (Some(e), Some(_)) => out(&format!("skipped {e}"))?,
                (Some(_), None) => {}
                (None, _) => {
                    let r = &o.report;
                    out(&format!(
                        "{}  {} ({}): {} messages, {} branches, {} tool pairs, {} images",
                        o.conversations.first().map(String::as_str).unwrap_or("-"),
                        o.file.display(),
                        o.format.map(|f| f.name()).unwrap_or("?"),
                        r.messages,
                        r.branches,
                        r.tool_pairs,
                        r.images
                    ))?;
                    for (what, n) in &r.skipped {
                        out(&format!("    not a message: {n} {what}"))?;
                    }
                    for n in &r.notes {
                        out(&format!("    note: {n}"))?;
                    }
                    for (id, lr) in o.conversations.iter().skip(1).zip(&o.linked) {
                        out(&format!(
                            "    {id}  linked (subagent): {} messages, {} branches, {} tool pairs",
                            lr.messages, lr.branches, lr.tool_pairs
                        ))?;
                    }
                }
            }
        }
    }
    match refused.as_slice() {
        [] => Ok(()),
        [one] => bail!("{}", one.error.clone().unwrap_or_default()),
        many => bail!(
            "{} files refused, first: {}",
            many.len(),
            many[0].error.clone().unwrap_or_default()
        ),
    }
}

/// Reads a turn: a JSON array of messages (or a request body with a `messages` array).
fn read_turn(file: &str) -> Result<Vec<NewMessage>> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading stdin")?;
        s
    } else {
        std::fs::read_to_string(Path::new(file)).with_context(|| format!("cannot read {file}"))?
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| anyhow!("{file}:{}:{}: {}", e.line(), e.column(), strip_position(&e)))?;
    let arr = match &v {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("messages") {
            Some(Value::Array(a)) => a,
            _ => bail!("{file}: expected a JSON array of messages"),
        },
        _ => bail!("{file}: expected a JSON array of messages"),
    };
    arr.iter()
        .enumerate()
        .map(|(i, m)| {
            wire::message_from_wire(m, &format!("[{i}]")).map_err(|e| anyhow!("{file}: {e}"))
        })
        .collect()
}

fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Plain text of blocks, for `show`.
fn render_text(blocks: &[Block]) -> String {
    let mut parts = Vec::new();
    for b in blocks {
        parts.push(match b {
            Block::Text { text } => text.clone(),
            Block::Thinking { thinking, .. } => format!("[thinking] {thinking}"),
            Block::ToolUse { id, name, input } => format!("[tool_use {name} {id}] {input}"),
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => format!(
                "[tool_result {tool_use_id}{}] {}",
                if *is_error { " error" } else { "" },
                match content {
                    ToolResultContent::Text(t) => t.clone(),
                    c => c.text(),
                }
            ),
            Block::Image { media_type, .. } => format!("[image {media_type}]"),
            Block::Other(v) => v.to_string(),
        });
    }
    parts.join("\n")
}

/// One generated turn: a prompt, parallel tool calls, their results, the reply. `k` is written into every
/// message so a checker can tell which turn a row belongs to.
pub fn generated_turn(k: u64) -> Vec<NewMessage> {
    let call = |i: u64| Block::ToolUse {
        id: format!("call_{k}_{i}"),
        name: "read".into(),
        input: json!({"path": format!("file_{k}_{i}.txt")}),
    };
    let result = |i: u64| Block::ToolResult {
        tool_use_id: format!("call_{k}_{i}"),
        content: ToolResultContent::Text(format!("turn {k} result {i}: {}", "x".repeat(200))),
        is_error: false,
    };
    vec![
        NewMessage::text(Role::User, format!("turn {k}: read two files")),
        NewMessage::new(Role::Assistant, vec![call(0), call(1)]),
        NewMessage::new(Role::User, vec![result(0), result(1)]),
        NewMessage::text(Role::Assistant, format!("turn {k} done")),
    ]
}

fn stress_writer(db: &Option<PathBuf>, conv: &str, turns: u64) -> Result<()> {
    let mut s = open(db)?;
    let mut stdout = std::io::stdout().lock();
    let start = s.active_path(conv)?.len() as u64 / 4;
    for k in start..start.saturating_add(turns) {
        s.append_turn(conv, &generated_turn(k))?;
        writeln!(stdout, "{k}")?;
        stdout.flush()?;
    }
    Ok(())
}
