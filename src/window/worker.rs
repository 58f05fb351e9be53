//! Long work off the UI thread. The window sends an [`Action`] with who asked for it ([`For`]); one worker thread
//! runs it against its own store connection (SQLite in WAL mode lets the window keep reading meanwhile) through
//! [`crate::commands::run`], the same call the CLI makes, and sends back progress and one result. Cancelling sets
//! a flag the action checks between its steps (files of an import, chunks of a summary stream); an action that
//! cannot stop midway has its result dropped.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use eframe::egui;

use crate::commands::{Action, Outcome, Progress, SnapshotPreview};
use crate::reclaim::Settings;
use crate::store::Store;

/// Who asked for a background action: where its result (or its failure) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum For {
    Snapshots,
    Compare,
    Preview,
    Find,
    ReadBack,
    /// The open conversation's file imported again because it grew (live follow).
    Follow,
    /// Imports, exports, compactions, forks: the status line and a re-read of the store.
    Write,
    /// A panel's job ([`crate::commands::Action::Job`]): its answer goes to the panel of that view alone.
    Panel(super::View),
}

impl For {
    /// Whether a view asked: its newest request is the only one whose answer it shows (an older one arriving
    /// late is superseded). Writes are each reported.
    pub fn is_view(self) -> bool {
        !matches!(self, For::Write | For::Follow)
    }
}

/// A rendered page, decoded for display.
pub struct PageImage {
    pub image: egui::ColorImage,
    pub tokens: u64,
    pub bytes: usize,
}

/// The snapshot preview with its pages decoded.
pub struct Snapshot {
    pub preview: SnapshotPreview,
    pub pages: Vec<PageImage>,
}

/// What came back.
pub enum Done {
    Outcome(Box<Outcome>),
    Snapshot(Box<Snapshot>),
}

pub struct Running {
    pub id: u64,
    pub purpose: For,
    /// The conversation the action is about ([`Action::conversation`]).
    pub about: Option<String>,
    pub label: String,
    pub progress: Option<f32>,
    pub cancel: Arc<AtomicBool>,
}

enum Event {
    Progress(u64, f32),
    Done(u64, Result<Done, String>),
}

pub struct Worker {
    tx: Option<Sender<(u64, Action, Arc<AtomicBool>)>>,
    rx: Receiver<Event>,
    next: u64,
    /// Each view's newest request (see [`For::is_view`]).
    newest: std::collections::HashMap<For, u64>,
    pub running: Vec<Running>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// Sends progress back to the window and wakes it up.
struct Reporter<'a> {
    id: u64,
    events: &'a Sender<Event>,
    poke: &'a dyn Fn(),
}

impl Progress for Reporter<'_> {
    fn step(&self, done: usize, total: usize, _what: &str) {
        let f = done as f32 / total.max(1) as f32;
        // the window may be gone (closing): nothing to report to
        if self.events.send(Event::Progress(self.id, f)).is_ok() {
            (self.poke)();
        }
    }
}

impl Worker {
    pub fn new(
        store_path: PathBuf,
        settings: Settings,
        repaint: Arc<Mutex<Option<egui::Context>>>,
    ) -> Worker {
        let (tx, jobs) = channel::<(u64, Action, Arc<AtomicBool>)>();
        let (events, rx) = channel();
        let handle = std::thread::Builder::new()
            .name("cairn-worker".into())
            .spawn(move || {
                for (id, action, cancel) in jobs {
                    let poke = || {
                        if let Ok(c) = repaint.lock()
                            && let Some(c) = c.as_ref()
                        {
                            c.request_repaint();
                        }
                    };
                    let report = Reporter {
                        id,
                        events: &events,
                        poke: &poke,
                    };
                    let out = run(&store_path, &settings, action, &report, &cancel);
                    if events.send(Event::Done(id, out)).is_err() {
                        break;
                    }
                    poke();
                }
            })
            .ok();
        Worker {
            tx: Some(tx),
            rx,
            next: 0,
            newest: std::collections::HashMap::new(),
            running: Vec::new(),
            handle,
        }
    }

    pub fn submit(&mut self, purpose: For, action: Action) {
        self.next += 1;
        let cancel = Arc::new(AtomicBool::new(false));
        if purpose.is_view() {
            self.newest.insert(purpose, self.next);
        }
        self.running.push(Running {
            id: self.next,
            purpose,
            about: action.conversation().map(str::to_string),
            label: label(&action),
            progress: None,
            cancel: cancel.clone(),
        });
        let sent = self
            .tx
            .as_ref()
            .is_some_and(|tx| tx.send((self.next, action, cancel)).is_ok());
        if !sent {
            self.running.retain(|r| r.id != self.next);
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
                let purpose = job.map_or(For::Write, |r| r.purpose);
                let about = job.and_then(|r| r.about.clone());
                self.running.retain(|r| r.id != id);
                let superseded = purpose.is_view() && self.newest.get(&purpose) != Some(&id);
                Some(Finished {
                    superseded,
                    purpose,
                    about,
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

    /// Blocks until every submitted action has finished (tests and screenshots).
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

/// An action's result, with who asked, the conversation it is about, and whether a newer request of its view
/// replaced it (the one worker thread answers in the order asked).
pub struct Finished {
    /// A view asked again since: this answer is older than the one the view waits for, and is not shown.
    pub superseded: bool,
    pub purpose: For,
    pub about: Option<String>,
    pub result: Result<Done, String>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(h) = self.handle.take()
            && h.join().is_err()
        {
            eprintln!("cairn: the worker thread panicked");
        }
    }
}

/// What the progress bar says.
fn label(a: &Action) -> String {
    match a {
        Action::Fork { .. } => "forking".into(),
        Action::Import { paths, .. } => format!("importing {} path(s)", paths.len()),
        Action::Export { out, .. } => format!(
            "exporting{}",
            out.as_ref()
                .map_or(String::new(), |o| format!(" to {}", o.display()))
        ),
        Action::Compact { strategy, .. } => {
            format!("compacting ({})", strategy.map_or("ladder", |s| s.name()))
        }
        Action::Shake { .. } => "shaking (free rungs)".into(),
        Action::SnapshotPreview { profile, shape, .. } => format!(
            "rendering snapshot pages ({}, {})",
            profile.map_or("the model's profile", |p| p.name),
            shape.map_or("the model's shape", |s| s.name)
        ),
        Action::Compare { .. } => "comparing strategies".into(),
        Action::Preview { strategy, .. } => format!("previewing {strategy}"),
        Action::Job(j) => j.doing(),
        Action::Find { query, .. } => format!("searching for {query:?}"),
        Action::Send { .. } => "sending".into(),
        Action::Replay { .. } => "replaying".into(),
        Action::Calibrate => "calibrating".into(),
        _ => "working".into(),
    }
}

fn run(
    store_path: &std::path::Path,
    settings: &Settings,
    action: Action,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Done, String> {
    let mut store = Store::open(store_path).map_err(|e| e.to_string())?;
    let out = crate::commands::run(&mut store, settings, action, progress, cancel)
        .map_err(|e| e.to_string())?;
    match out {
        Outcome::SnapshotPreview(p) => {
            let mut pages = Vec::with_capacity(p.rendered.pages.len());
            for (k, page) in p.rendered.pages.iter().enumerate() {
                if cancel.load(Ordering::Relaxed) {
                    return Err("cancelled".into());
                }
                progress.step(k, p.rendered.pages.len(), "pages");
                let img = image::load_from_memory(&page.png)
                    .map_err(|e| format!("page {}: {e}", k + 1))?
                    .to_rgba8();
                pages.push(PageImage {
                    image: egui::ColorImage::from_rgba_unmultiplied(
                        [img.width() as usize, img.height() as usize],
                        img.as_raw(),
                    ),
                    tokens: page.tokens,
                    bytes: page.png.len(),
                });
            }
            Ok(Done::Snapshot(Box::new(Snapshot { preview: *p, pages })))
        }
        other => Ok(Done::Outcome(Box::new(other))),
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
    fn an_action_reports_one_result_and_leaves_the_running_list() {
        let (_d, path, conv) = demo_store();
        let mut w = Worker::new(path, Settings::default(), Arc::new(Mutex::new(None)));
        w.submit(
            For::Find,
            Action::Find {
                conversation: conv,
                query: "segqueue".into(),
            },
        );
        assert_eq!(w.running.len(), 1);
        let out = w.wait();
        assert_eq!(out.len(), 1);
        assert!(w.running.is_empty());
        assert_eq!(out[0].purpose, For::Find);
        match &out[0].result {
            Ok(Done::Outcome(o)) => match o.as_ref() {
                Outcome::Found { hits, .. } => assert!(hits.len() >= 2),
                _ => panic!("expected search results"),
            },
            _ => panic!("expected search results"),
        }
    }

    #[test]
    fn a_view_shows_only_its_newest_request_and_every_write_is_reported() {
        let (_d, path, conv) = demo_store();
        let mut w = Worker::new(path, Settings::default(), Arc::new(Mutex::new(None)));
        let find = |q: &str| Action::Find {
            conversation: conv.clone(),
            query: q.into(),
        };
        w.submit(For::Find, find("segqueue"));
        w.submit(For::Find, find("lock"));
        w.submit(For::Write, Action::List);
        w.submit(For::Write, Action::List);
        let out = w.wait();
        let flags: Vec<(For, bool)> = out.iter().map(|f| (f.purpose, f.superseded)).collect();
        assert_eq!(
            flags,
            vec![
                (For::Find, true),
                (For::Find, false),
                (For::Write, false),
                (For::Write, false)
            ]
        );
        match &out[1].result {
            Ok(Done::Outcome(o)) => {
                assert!(matches!(o.as_ref(), Outcome::Found { query, .. } if query == "lock"))
            }
            _ => panic!("expected the newest search's results"),
        }
    }

    #[test]
    fn a_cancelled_action_reports_cancelled_not_its_result() {
        let (_d, path, conv) = demo_store();
        let mut w = Worker::new(path, Settings::default(), Arc::new(Mutex::new(None)));
        w.submit(
            For::Snapshots,
            Action::SnapshotPreview {
                conversation: conv,
                profile: None,
                shape: None,
            },
        );
        let id = w.running[0].id;
        w.cancel(id);
        let out = w.wait();
        assert!(matches!(
            &out[..],
            [Finished { purpose: For::Snapshots, result: Err(e), .. }] if e == "cancelled"
        ));
    }
}
