//! Long work off the UI thread. The window sends a [`Job`] over a channel; one worker thread runs it against
//! its own store connection (SQLite in WAL mode lets the window keep reading meanwhile) through the same core
//! functions the CLI calls, and sends back progress and one result. Cancelling sets a flag the job checks
//! between its steps (files of an import, chunks of a summary stream); a job that cannot stop midway has its
//! result dropped.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use eframe::egui;

use crate::compact::{self, Strategy};
use crate::export::{self, ExportFormat};
use crate::render::{self, Manifest, Profile};
use crate::store::Store;

pub enum Job {
    /// Copies the root→`at` (or tip) path into a new conversation.
    Fork {
        conversation: String,
        at: Option<String>,
    },
    Import {
        paths: Vec<PathBuf>,
    },
    Export {
        conversation: String,
        at: Option<String>,
        format: ExportFormat,
        out: PathBuf,
    },
    /// One rung, or the ladder when `strategy` is None. `force` is /shake (elision below its threshold).
    Compact {
        conversation: String,
        strategy: Option<Strategy>,
        force: bool,
        instructions: Option<String>,
    },
    /// The pages a snapshot compaction would send now, for the preview.
    Render {
        conversation: String,
        profile: &'static Profile,
        cell: (u32, u32),
    },
    /// Every strategy on the active path, against half the model's window.
    Compare {
        conversation: String,
    },
    /// The /context report (reads every body of the active path).
    Context {
        conversation: String,
    },
    /// Messages (all branches) whose id starts with, or whose text contains, the query (case-insensitive).
    Search {
        conversation: String,
        query: String,
    },
}

impl Job {
    /// Which kind of work, so a failure can be reported to the view that asked for it.
    pub fn kind(&self) -> &'static str {
        match self {
            Job::Fork { .. } => "fork",
            Job::Import { .. } => "import",
            Job::Export { .. } => "export",
            Job::Compact { .. } => "compact",
            Job::Render { .. } => "render",
            Job::Compare { .. } => "compare",
            Job::Context { .. } => "context",
            Job::Search { .. } => "search",
        }
    }

    pub fn label(&self) -> String {
        match self {
            Job::Fork { .. } => "forking".into(),
            Job::Import { paths } => format!("importing {} file(s)", paths.len()),
            Job::Export { out, .. } => format!("exporting to {}", out.display()),
            Job::Compact { strategy, .. } => {
                format!("compacting ({})", strategy.map_or("ladder", |s| s.name()))
            }
            Job::Render { profile, .. } => format!("rendering snapshot pages ({})", profile.name),
            Job::Compare { .. } => "comparing strategies".into(),
            Job::Context { .. } => "estimating the context".into(),
            Job::Search { query, .. } => format!("searching for {query:?}"),
        }
    }
}

/// A rendered page, decoded for display.
pub struct PageImage {
    pub image: egui::ColorImage,
    pub tokens: u64,
    pub bytes: usize,
}

pub struct Snapshot {
    pub conversation: String,
    pub pages: Vec<PageImage>,
    pub manifest: Manifest,
    /// Source text of each message on the pages, by id.
    pub texts: Vec<(String, String)>,
    pub stats: render::Stats,
    pub cell: (u32, u32),
    pub profile: &'static str,
    /// Exact strings sent as text beside the pages.
    pub factsheet: String,
}

pub struct Compared {
    pub conversation: String,
    pub rows: Vec<compact::Row>,
    /// For each strategy row: the context it would leave, one line per message sent.
    pub previews: Vec<Vec<String>>,
}

pub enum Output {
    /// The new conversation.
    Forked(String),
    /// Conversations added, and one line per file.
    Imported(Vec<String>, Vec<String>),
    Exported(PathBuf, usize),
    Compacted(String),
    Rendered(Box<Snapshot>),
    Compared(Box<Compared>),
    Context(String, Box<crate::context::Report>),
    /// Conversation, query, matching message ids in write order.
    Found(String, String, Vec<String>),
}

pub struct Running {
    pub id: u64,
    pub kind: &'static str,
    pub label: String,
    pub progress: Option<f32>,
    pub cancel: Arc<AtomicBool>,
}

enum Event {
    Progress(u64, f32),
    Done(u64, Result<Output, String>),
}

pub struct Worker {
    tx: Option<Sender<(u64, Job, Arc<AtomicBool>)>>,
    rx: Receiver<Event>,
    next: u64,
    pub running: Vec<Running>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    pub fn new(store_path: PathBuf, repaint: Arc<Mutex<Option<egui::Context>>>) -> Worker {
        let (tx, jobs) = channel::<(u64, Job, Arc<AtomicBool>)>();
        let (events, rx) = channel();
        let handle = std::thread::Builder::new()
            .name("cairn-worker".into())
            .spawn(move || {
                for (id, job, cancel) in jobs {
                    let poke = || {
                        if let Ok(c) = repaint.lock()
                            && let Some(c) = c.as_ref()
                        {
                            c.request_repaint();
                        }
                    };
                    let progress = |f: f32| {
                        let _ = events.send(Event::Progress(id, f));
                        poke();
                    };
                    let out = run(&store_path, job, &progress, &cancel);
                    let _ = events.send(Event::Done(id, out));
                    poke();
                }
            })
            .ok();
        Worker {
            tx: Some(tx),
            rx,
            next: 0,
            running: Vec::new(),
            handle,
        }
    }

    pub fn submit(&mut self, job: Job) {
        self.next += 1;
        let cancel = Arc::new(AtomicBool::new(false));
        self.running.push(Running {
            id: self.next,
            kind: job.kind(),
            label: job.label(),
            progress: None,
            cancel: cancel.clone(),
        });
        if let Some(tx) = &self.tx {
            let _ = tx.send((self.next, job, cancel));
        }
    }

    pub fn cancel(&mut self, id: u64) {
        if let Some(r) = self.running.iter().find(|r| r.id == id) {
            r.cancel.store(true, Ordering::Relaxed);
        }
    }

    fn take(&mut self, e: Event) -> Option<Finished> {
        match e {
            Event::Progress(id, f) => {
                if let Some(r) = self.running.iter_mut().find(|r| r.id == id) {
                    r.progress = Some(f);
                }
                None
            }
            Event::Done(id, out) => {
                let job = self.running.iter().find(|r| r.id == id);
                let cancelled = job.is_some_and(|r| r.cancel.load(Ordering::Relaxed));
                let kind = job.map_or("", |r| r.kind);
                self.running.retain(|r| r.id != id);
                Some(Finished {
                    kind,
                    result: if cancelled {
                        Err("cancelled".into())
                    } else {
                        out
                    },
                })
            }
        }
    }

    /// Results that arrived since the last call (never blocks).
    pub fn poll(&mut self) -> Vec<Finished> {
        let mut out = Vec::new();
        while let Ok(e) = self.rx.try_recv() {
            out.extend(self.take(e));
        }
        out
    }

    /// Blocks until every submitted job has finished (tests and screenshots).
    pub fn wait(&mut self) -> Vec<Finished> {
        let mut out = Vec::new();
        while !self.running.is_empty() {
            match self.rx.recv() {
                Ok(e) => out.extend(self.take(e)),
                Err(_) => break,
            }
        }
        out
    }
}

/// A job's result, with its kind ([`Job::kind`]).
pub struct Finished {
    pub kind: &'static str,
    pub result: Result<Output, String>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn run(
    store_path: &std::path::Path,
    job: Job,
    progress: &dyn Fn(f32),
    cancel: &AtomicBool,
) -> Result<Output, String> {
    let mut store = Store::open(store_path).map_err(|e| e.to_string())?;
    match job {
        Job::Fork { conversation, at } => store
            .fork(&conversation, at.as_deref())
            .map(Output::Forked)
            .map_err(|e| e.to_string()),
        Job::Import { paths } => {
            let files = crate::import::collect(&paths).map_err(|e| e.to_string())?;
            let mut added = Vec::new();
            let mut lines = Vec::new();
            for (k, f) in files.iter().enumerate() {
                if cancel.load(Ordering::Relaxed) {
                    lines.push(format!("cancelled after {k} of {} files", files.len()));
                    break;
                }
                progress(k as f32 / files.len().max(1) as f32);
                let o = crate::import::import_file(&mut store, f, None);
                match &o.error {
                    Some(e) => lines.push(e.clone()),
                    None => lines.push(format!(
                        "{}: {} conversation(s)",
                        f.display(),
                        o.conversations.len()
                    )),
                }
                added.extend(o.conversations);
            }
            Ok(Output::Imported(added, lines))
        }
        Job::Export {
            conversation,
            at,
            format,
            out,
        } => {
            let text = export::export(
                &store,
                &conversation,
                at.as_deref(),
                format,
                export::Options::default(),
            )
            .map_err(|e| e.to_string())?;
            std::fs::write(&out, &text).map_err(|e| format!("{}: {e}", out.display()))?;
            Ok(Output::Exported(out, text.len()))
        }
        Job::Compact {
            conversation,
            strategy,
            force,
            instructions,
        } => compact_job(
            &mut store,
            &conversation,
            strategy,
            force,
            instructions,
            progress,
            cancel,
        ),
        Job::Render {
            conversation,
            profile,
            cell,
        } => {
            let path = store
                .active_path(&conversation)
                .map_err(|e| e.to_string())?;
            // what a snapshot compaction from this window would cover (the same protect as compact_job)
            let protect = compact::protect_for(window_of_path(&path) / 2);
            let covered = compact::covered_middle(&path, protect);
            let sources = render::sources(&covered);
            let mut opts = render::Options::new(profile);
            opts.cell = cell;
            progress(0.1);
            let r = render::render(&sources, &opts).map_err(|e| e.to_string())?;
            let mut pages = Vec::new();
            for (k, p) in r.pages.iter().enumerate() {
                if cancel.load(Ordering::Relaxed) {
                    return Err("cancelled".into());
                }
                progress(0.2 + 0.8 * k as f32 / r.pages.len().max(1) as f32);
                let img = image::load_from_memory(&p.png)
                    .map_err(|e| format!("page {}: {e}", k + 1))?
                    .to_rgba8();
                pages.push(PageImage {
                    image: egui::ColorImage::from_rgba_unmultiplied(
                        [img.width() as usize, img.height() as usize],
                        img.as_raw(),
                    ),
                    tokens: p.tokens,
                    bytes: p.png.len(),
                });
            }
            Ok(Output::Rendered(Box::new(Snapshot {
                conversation,
                pages,
                manifest: r.manifest,
                texts: sources.into_iter().map(|s| (s.id, s.text)).collect(),
                stats: r.stats,
                cell,
                profile: profile.name,
                factsheet: r.factsheet,
            })))
        }
        Job::Search {
            conversation,
            query,
        } => {
            let q = query.to_lowercase();
            let all = store.messages(&conversation).map_err(|e| e.to_string())?;
            let n = all.len().max(1);
            let mut hits = Vec::new();
            for (k, m) in all.iter().enumerate() {
                if k % 1024 == 0 {
                    if cancel.load(Ordering::Relaxed) {
                        return Err("cancelled".into());
                    }
                    progress(k as f32 / n as f32);
                }
                if m.id.starts_with(&q) || render::source_text(m).to_lowercase().contains(&q) {
                    hits.push(m.id.clone());
                }
            }
            Ok(Output::Found(conversation, query, hits))
        }
        Job::Context { conversation } => {
            let path = store
                .active_path(&conversation)
                .map_err(|e| e.to_string())?;
            let model = path
                .iter()
                .rev()
                .find(|m| m.role == crate::model::Role::Assistant)
                .map(crate::tokens::model_of);
            let calibration = crate::context::calibrate_paths(std::slice::from_ref(&path))
                .into_iter()
                .find(|c| Some(&c.model) == model.as_ref());
            let r = crate::context::report(&path, None, calibration);
            Ok(Output::Context(conversation, Box::new(r)))
        }
        Job::Compare { conversation } => {
            let path = store
                .active_path(&conversation)
                .map_err(|e| e.to_string())?;
            let budget = window_of_path(&path) / 2;
            let blob = |h: &str| store.blob(h).ok().map(|b| b.len());
            let rows = compact::compare(&path, budget, &blob);
            let previews = rows
                .iter()
                .map(|r| {
                    compact::preview(&path, &r.strategy, budget, &blob)
                        .messages
                        .iter()
                        .map(preview_line)
                        .collect()
                })
                .collect();
            Ok(Output::Compared(Box::new(Compared {
                conversation,
                rows,
                previews,
            })))
        }
    }
}

/// The context window of the model that wrote the path's newest reply.
fn window_of_path(path: &[crate::model::Message]) -> u64 {
    path.iter()
        .rev()
        .find(|m| m.role == crate::model::Role::Assistant)
        .map(|m| crate::context::window_of(&crate::tokens::model_of(m)))
        .unwrap_or(200_000)
}

fn preview_line(s: &compact::Sent) -> String {
    let images = s
        .content
        .iter()
        .filter(|b| matches!(b, crate::model::Block::Image { .. }))
        .count();
    let text: String = s
        .content
        .iter()
        .find_map(|b| match b {
            crate::model::Block::Text { text } => Some(text.as_str()),
            crate::model::Block::ToolResult {
                content: crate::model::ToolResultContent::Text(t),
                ..
            } => Some(t.as_str()),
            crate::model::Block::ToolUse { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .unwrap_or("")
        .chars()
        .take(120)
        .collect::<String>()
        .replace('\n', " ");
    format!(
        "{:<9} {}{}",
        s.role.as_str(),
        if images > 0 {
            format!("[{images} image(s)] ")
        } else {
            String::new()
        },
        text
    )
}

fn compact_job(
    store: &mut Store,
    conv: &str,
    strategy: Option<Strategy>,
    force: bool,
    instructions: Option<String>,
    progress: &dyn Fn(f32),
    cancel: &AtomicBool,
) -> Result<Output, String> {
    let path = store.active_path(conv).map_err(|e| e.to_string())?;
    let window = window_of_path(&path);
    let protect = compact::protect_for(window / 2);
    match strategy {
        None => {
            let o = compact::ladder(store, conv, window / 2).map_err(|e| e.to_string())?;
            let mut s = format!(
                "ladder: {} → {} tokens ({} step(s))",
                o.tokens_before,
                o.tokens_after,
                o.steps.len()
            );
            if let Some(n) = o.note {
                s.push_str("; ");
                s.push_str(&n);
            }
            Ok(Output::Compacted(s))
        }
        Some(Strategy::Summary) => {
            let provider = crate::config::provider(None, None).map_err(|e| {
                format!("the summary rung needs a model: {e:#} (the snapshot rung needs none)")
            })?;
            let opts = crate::send::SummaryOptions {
                instructions,
                window,
                protect,
            };
            let mut on = |done: usize, total: usize| progress(done as f32 / total.max(1) as f32);
            let a = crate::send::summarize(store, conv, &provider, &opts, &mut on, cancel)
                .map_err(|e| e.to_string())?;
            Ok(Output::Compacted(match a {
                Some(a) => format!(
                    "summary: {} → {} tokens, marker {}",
                    a.tokens_before, a.tokens_after, a.marker
                ),
                None => "summary: nothing to summarise".into(),
            }))
        }
        Some(s) => {
            let a =
                compact::apply(store, conv, s, force, None, protect).map_err(|e| e.to_string())?;
            Ok(Output::Compacted(match a {
                Some(a) => format!(
                    "{}: {} → {} tokens ({} items), marker {}",
                    s.name(),
                    a.tokens_before,
                    a.tokens_after,
                    a.items,
                    &a.marker[..a.marker.len().min(8)]
                ),
                None => format!("{}: nothing to do", s.name()),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo_store() -> (tempfile::TempDir, PathBuf, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let mut s = Store::open(&path).unwrap();
        let d = crate::demo::install(&mut s).unwrap();
        (dir, path, d.conversation)
    }

    #[test]
    fn a_job_reports_one_result_and_leaves_the_running_list() {
        let (_d, path, conv) = demo_store();
        let mut w = Worker::new(path, Arc::new(Mutex::new(None)));
        w.submit(Job::Search {
            conversation: conv,
            query: "segqueue".into(),
        });
        assert_eq!(w.running.len(), 1);
        let out = w.wait();
        assert_eq!(out.len(), 1);
        assert!(w.running.is_empty());
        assert_eq!(out[0].kind, "search");
        match &out[0].result {
            Ok(Output::Found(_, _, hits)) => assert!(hits.len() >= 2),
            _ => panic!("expected search results"),
        }
    }

    #[test]
    fn a_cancelled_job_reports_cancelled_not_its_result() {
        let (_d, path, conv) = demo_store();
        let mut w = Worker::new(path, Arc::new(Mutex::new(None)));
        w.submit(Job::Render {
            conversation: conv,
            profile: &crate::render::PROFILES[0],
            cell: (5, 8),
        });
        let id = w.running[0].id;
        w.cancel(id);
        let out = w.wait();
        assert!(
            matches!(&out[..], [Finished { kind: "render", result: Err(e) }] if e == "cancelled")
        );
    }
}
