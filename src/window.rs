//! The explorer window (eframe/egui): an imperative shell over the core. Every change and every figure is a
//! [`crate::commands::Action`] run by [`crate::commands::run`], the call the CLI makes: quick pointer moves
//! (branch, checkpoint, rewind, undo: one short transaction each) on the UI thread, long work (import, export,
//! fork, compaction, rendering, comparison, the context report, search) on a worker thread. Each panel is a
//! struct that draws itself and returns the action it needs; its background result is a `Remote` it
//! owns; the [`Explorer`] routes actions and results. The window reads heads and bodies through the store to
//! draw the tree and the transcript; it never writes SQL.
//!
//! Layout: conversations on the left (search, counts, fork lineage), the centre view (session tree graph,
//! snapshot pages, strategy comparison, context chart, operations log), the active path's transcript on the
//! right, and the slash-command bar with job progress at the bottom. The whole UI is [`Explorer::draw`], which
//! the eframe app and the headless tests (egui_kittest) both call.

mod chart;
mod command_bar;
mod compare;
mod conversations;
mod dialogs;
mod diff;
mod follow;
pub mod fonts;
mod graph;
mod models;
mod operations;
mod panel;
mod remote;
mod screenshot;
mod search;
mod session;
mod snapshots;
mod stats;
mod timeline;
mod transcript;
mod tree_view;
mod worker;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use eframe::egui::{self, RichText};

use crate::commands::{Action, Outcome};
use crate::export::ExportFormat;
use crate::model::Conversation;
use crate::reclaim::{Settings, Strategy};
use crate::slash::{self, Slash};
use crate::store::Store;

use dialogs::{DialogAsk, Dialogs, RewindDialog};
pub use graph::{GraphView, node_label};
use screenshot::Screenshot;
pub use session::Session;
pub use snapshots::Link;
use worker::{Done, For, Worker};

pub use crate::views::View;

/// Seconds between checks for writes made outside the window.
const WATCH_EVERY: f64 = 2.0;

/// What the window shows and the state of its views.
/// The panels ([`panel::Panel`]), in one list: borrowed field by field, so the explorer's other state (the open
/// session they are drawn with) can be read beside them.
macro_rules! panels {
    ($e:expr) => {
        [
            &mut $e.compare as &mut dyn panel::Panel,
            &mut $e.context,
            &mut $e.timeline,
            &mut $e.diff,
            &mut $e.search_panel,
            &mut $e.stats,
            &mut $e.snapshots,
            &mut $e.models,
            &mut $e.operations,
        ]
    };
}

/// What the window last saw of the store, and what its title says.
#[derive(Default)]
struct Seen {
    /// When the store was last checked for writes by others (seconds of UI time).
    watched_at: f64,
    /// The store's data version at the last look ([`Store::data_version`]).
    version: Option<i64>,
    /// The conversation the window title names (`titled`: a title was set at all).
    titled_for: Option<String>,
    titled: bool,
}

pub struct Explorer {
    store_path: PathBuf,
    store: Option<Store>,
    pub conversations: Vec<Conversation>,
    /// The conversations panel's own state (its filter and order).
    list: conversations::ConversationList,
    pub session: Option<Session>,
    pub view: View,
    /// The tree view's own state (canvas, checkpoint label, the tree's search).
    pub tree: tree_view::TreePanel,
    transcript: transcript::TranscriptView,
    pub snapshots: snapshots::SnapshotView,
    pub compare: compare::ComparePanel,
    pub context: chart::ContextPanel,
    pub timeline: timeline::TimelinePanel,
    pub diff: diff::DiffPanel,
    pub search_panel: search::SearchPanel,
    pub stats: stats::StatsPanel,
    pub models: models::ModelsPanel,
    /// The settings file (or the defaults when there is none or it is not valid: the status line says so).
    settings: Settings,
    pub operations: operations::OperationsPanel,
    /// The dialogs open over the window.
    dialogs: Dialogs,
    /// The command bar's own state (what is typed).
    pub bar: command_bar::CommandBar,
    /// The last outcome, one line; errors are kept until the next action.
    pub status: Option<(String, bool)>,
    worker: Worker,
    repaint: Arc<Mutex<Option<egui::Context>>>,
    screenshot: Option<Screenshot>,
    frames: u64,
    /// Native dialogs (rfd) are not opened under tests or screenshots.
    pub native_dialogs: bool,
    /// Where Discover looks (the user's home folder unless set).
    pub home: Option<crate::discover::Home>,
    /// The open conversation's file, followed while an agent writes it.
    follow: Option<follow::Follow>,
    /// What the window last saw of the store and said in its title.
    seen: Seen,
    fonts_installed: bool,
    /// Look through the machine's fonts on the first frame instead of beside it (a test that draws other scripts at
    /// once).
    pub fonts_at_once: bool,
    /// The machine's fonts being looked through (off the first frame: a machine can have thousands).
    fonts_coming: Option<std::sync::mpsc::Receiver<fonts::Fonts>>,
    /// The fonts installed, and the scripts none of them has.
    pub fonts: Option<fonts::Fonts>,
}

impl Explorer {
    pub fn new(store_path: PathBuf) -> Explorer {
        let repaint = Arc::new(Mutex::new(None));
        let (settings, settings_error) = match crate::config::settings() {
            Ok(s) => (s, None),
            Err(e) => (
                Settings::default(),
                Some(format!("{e:#}; using the defaults")),
            ),
        };
        let mut e = Explorer {
            worker: Worker::new(store_path.clone(), settings.clone(), repaint.clone()),
            settings,
            repaint,
            store: None,
            store_path,
            conversations: Vec::new(),
            list: Default::default(),
            session: None,
            view: View::Tree,
            tree: Default::default(),
            transcript: Default::default(),
            snapshots: Default::default(),
            compare: Default::default(),
            context: Default::default(),
            timeline: Default::default(),
            diff: Default::default(),
            search_panel: Default::default(),
            stats: Default::default(),
            models: Default::default(),
            operations: Default::default(),
            dialogs: Dialogs::default(),
            bar: Default::default(),
            status: None,
            screenshot: None,
            frames: 0,
            native_dialogs: true,
            home: crate::discover::Home::of_user(),
            follow: None,
            seen: Seen::default(),
            fonts_installed: false,
            fonts_at_once: false,
            fonts_coming: None,
            fonts: None,
        };
        match Store::open(&e.store_path) {
            Ok(s) => e.store = Some(s),
            Err(err) => e.fail(err.to_string()),
        }
        e.reload();
        // the newest conversation that is not a fork, else the newest
        let pick = e
            .conversations
            .iter()
            .rev()
            .find(|c| c.forked_from.is_none())
            .or(e.conversations.last())
            .map(|c| c.id.clone());
        if let Some(id) = pick {
            e.select(&id);
        }
        if let Some(err) = settings_error {
            e.fail(err);
        }
        e
    }

    fn info(&mut self, s: impl Into<String>) {
        self.status = Some((s.into(), false));
    }

    fn fail(&mut self, s: impl Into<String>) {
        self.status = Some((s.into(), true));
    }

    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    fn reload(&mut self) {
        let Some(store) = &self.store else { return };
        match store.conversations() {
            Ok(c) => {
                self.list.read(&c);
                self.conversations = c;
            }
            Err(e) => self.fail(e.to_string()),
        }
    }

    /// Opens a conversation by id.
    pub fn select(&mut self, id: &str) {
        let Some(store) = &self.store else { return };
        let opened = store.conversation(id).and_then(|c| Session::open(store, c));
        match opened {
            Ok(s) => {
                self.session = Some(s);
                self.tree.opened();
                self.after_change(true);
                self.font_notice();
            }
            Err(e) => self.fail(e.to_string()),
        }
    }

    /// Says which scripts of the open conversation's title no font on this machine has (they draw as boxes).
    fn font_notice(&mut self) {
        let (Some(f), Some(s)) = (&self.fonts, &self.session) else {
            return;
        };
        let missing = f.missing_in(s.conv.title.as_deref().unwrap_or(""));
        if !missing.is_empty() {
            self.info(format!(
                "no font on this machine has {}: its text draws as boxes (install one, such as Noto Sans)",
                missing.join(", ")
            ));
        }
    }

    /// Re-reads the open conversation after a write (keeping selection and expanded runs).
    fn refresh(&mut self) {
        self.reload();
        // what is re-read now includes every write so far: the watch need not read it again
        self.seen.version = self.store.as_ref().and_then(|s| s.data_version().ok());
        let Some(old) = self.session.take() else {
            return;
        };
        let Some(store) = &self.store else { return };
        let selected = old.selected.map(|i| old.heads[i].id.clone());
        match store
            .conversation(&old.conv.id)
            .and_then(|c| Session::open(store, c))
        {
            Ok(mut s) => {
                s.expanded = old.expanded;
                s.folded = old.folded;
                s.relayout();
                if let Some(id) = selected {
                    s.selected = s.find(&id).or(s.tip);
                }
                self.session = Some(s);
            }
            Err(e) => self.fail(e.to_string()),
        }
        self.after_change(false);
    }

    /// Views computed from the active path are stale after a change.
    fn after_change(&mut self, new_conversation: bool) {
        self.snapshots.remote.reset();
        self.compare.reset();
        if new_conversation {
            self.compare.picked = None;
        }
        self.context.report.reset();
        self.timeline.data.reset();
        self.diff.data.reset();
        if new_conversation {
            self.diff.other = None;
        }
        self.operations.log.reset();
    }

    fn conv_id(&self) -> Option<String> {
        self.session.as_ref().map(|s| s.conv.id.clone())
    }

    // ---- actions: built here, run by the core ----

    /// Runs an action: a pointer move at once (one short transaction), anything longer on the worker, its
    /// result routed to whoever asked.
    pub fn act(&mut self, action: Action) {
        let purpose = match &action {
            Action::Branch { .. }
            | Action::Checkpoint { .. }
            | Action::Rewind { .. }
            | Action::Undo { .. } => return self.run_now(action),
            Action::Compare { .. } => For::Compare,
            Action::Preview { .. } => For::Preview,
            Action::SnapshotPreview { .. } => For::Snapshots,
            Action::Find { .. } => For::Find,
            Action::Legibility { .. } => For::ReadBack,
            // a job comes from the open tab's panel, and its answer goes back there
            Action::Job(_) => For::Panel(self.view),
            _ => For::Write,
        };
        let action = match action {
            // the summary rung needs the provider the settings and environment name
            Action::Compact {
                conversation,
                strategy: Some(Strategy::Summary),
                force,
                target,
                protect,
                instructions,
                provider: None,
                from,
                to,
            } => Action::Compact {
                provider: crate::config::provider(&self.settings, None, None).ok(),
                conversation,
                strategy: Some(Strategy::Summary),
                force,
                target,
                protect,
                instructions,
                from,
                to,
            },
            a => a,
        };
        self.worker.submit(purpose, action);
    }

    /// A pointer move, through the core on the UI thread, and the view re-read.
    fn run_now(&mut self, action: Action) {
        let Some(store) = &mut self.store else { return };
        let cancel = std::sync::atomic::AtomicBool::new(false);
        match crate::commands::run(
            store,
            &self.settings,
            action,
            &crate::commands::Quiet,
            &cancel,
        ) {
            Ok(o) => {
                let rewound = matches!(o, Outcome::Rewound { .. });
                self.info(describe(&o));
                self.refresh();
                if rewound && let Some(s) = &mut self.session {
                    s.selected = s.tip;
                }
            }
            Err(e) => self.fail(e.to_string()),
        }
    }

    pub fn undo(&mut self) {
        let Some(conversation) = self.conv_id() else {
            return;
        };
        self.act(Action::Undo { conversation });
    }

    pub fn import(&mut self, paths: Vec<PathBuf>) {
        if !paths.is_empty() {
            self.act(Action::Import {
                paths,
                format: None,
            });
        }
    }

    /// One rung (forced), or the ladder down to the policy's target.
    pub fn compact(&mut self, strategy: Option<Strategy>, instructions: Option<String>) {
        let Some(conversation) = self.conv_id() else {
            return;
        };
        self.act(Action::Compact {
            conversation,
            strategy,
            force: true,
            target: None,
            protect: None,
            instructions,
            provider: None,
            from: None,
            to: None,
        });
    }

    /// The panels that ask the core for something, in one list: each background result goes to them.
    fn panels(&mut self) -> [&mut dyn panel::Panel; 9] {
        panels!(self)
    }

    /// A background result, to whoever asked for it.
    fn apply(&mut self, ctx: &egui::Context, done: worker::Finished) {
        let open = self.conv_id();
        // an answer to a view's older request, which it has asked again since, is dropped: the newer one is coming
        if done.superseded {
            return;
        }
        // a view's answer about a conversation that is no longer open is dropped: it must never be drawn under
        // another (its own view asks again when that conversation is opened)
        let scoped = matches!(
            done.purpose,
            For::Snapshots
                | For::Compare
                | For::Preview
                | For::Find
                | For::ReadBack
                | For::Panel(_)
        );
        if scoped && done.about.is_some() && done.about != open {
            return;
        }
        let result = match done.result {
            Err(e) => {
                // the panel that asked shows it too, with a way to try again (instead of waiting forever)
                match done.purpose {
                    For::Follow => {
                        if let Some(f) = &mut self.follow {
                            f.running = false;
                        }
                    }
                    purpose => {
                        for p in self.panels() {
                            if p.failed(purpose, &e) {
                                break;
                            }
                        }
                    }
                }
                return self.fail(e);
            }
            Ok(r) => r,
        };
        let outcome = match result {
            Done::Snapshot(snap) => {
                if Some(&snap.preview.conversation) == open.as_ref() {
                    self.snapshots.set(ctx, *snap);
                }
                return;
            }
            Done::Outcome(o) => *o,
        };
        if done.purpose == For::Follow {
            return self.followed(outcome);
        }
        let at = panel::At {
            open: open.as_deref(),
            about: done.about.as_deref(),
        };
        let mut outcome = Some(outcome);
        // a panel's job answers that panel alone
        let only = match done.purpose {
            For::Panel(v) => Some(v),
            _ => None,
        };
        for p in self.panels() {
            if only.is_none_or(|v| v == p.view()) {
                outcome = outcome.and_then(|o| p.answered(at, o));
            }
        }
        let Some(outcome) = outcome else {
            return;
        };
        match outcome {
            Outcome::Found {
                conversation,
                query,
                hits,
            } => {
                if Some(&conversation) == open.as_ref() {
                    self.found(&query, hits);
                }
            }
            Outcome::Imported(files) => self.imported(&files),
            Outcome::Continued(c) => {
                self.info(format!(
                    "wrote a {} session: {}",
                    c.harness.name(),
                    c.command
                ));
                self.dialogs.continued = Some(c);
            }
            Outcome::Forked(id) => {
                self.reload();
                self.select(&id);
                self.info(format!("forked into {id}"));
            }
            other => {
                self.info(describe(&other));
                self.refresh();
            }
        }
    }

    /// Files imported: the store read again, the first new conversation opened, the status line says what came
    /// in and what was refused.
    fn imported(&mut self, files: &[crate::import::FileOutcome]) {
        for p in self.panels() {
            p.stale();
        }
        self.reload();
        let added: Vec<String> = files
            .iter()
            .flat_map(|f| f.conversations.iter().cloned())
            .collect();
        if let Some(first) = added.first() {
            self.select(first);
        }
        let refused: Vec<&String> = files
            .iter()
            .filter(|f| f.is_refused())
            .filter_map(|f| f.error.as_ref())
            .collect();
        let skipped = files.iter().filter(|f| f.duplicate_of.is_some()).count();
        let unclaimed = files.iter().filter(|f| f.is_skipped()).count();
        let mut line = format!("imported {} conversation(s)", added.len());
        if skipped > 0 {
            line.push_str(&format!("; {skipped} file(s) already imported, skipped"));
        }
        if unclaimed > 0 {
            line.push_str(&format!(
                "; {unclaimed} file(s) holding no session, skipped"
            ));
        }
        match refused.first() {
            Some(e) => self.fail(format!("{line}; {e}")),
            None => self.info(line),
        }
    }

    /// The window's title names the open conversation.
    fn retitle(&mut self, ctx: &egui::Context) {
        // the frame loop only compares an id; the title is built when the open conversation changes
        let open = self.session.as_ref().map(|s| s.conv.id.as_str());
        if self.seen.titled_for.as_deref() == open && self.seen.titled {
            return;
        }
        let title = match &self.session {
            Some(s) => {
                let t = s.conv.title.as_deref().unwrap_or("(untitled)");
                let short: String = t.lines().next().unwrap_or("").chars().take(80).collect();
                format!("{short} — cairn")
            }
            None => "cairn".to_string(),
        };
        ctx.send_viewport_cmd(egui::ViewportCommand::Title(title));
        self.seen.titled_for = open.map(str::to_string);
        self.seen.titled = true;
    }

    /// Follows writes made by others (an agent appending turns, the CLI): every couple of seconds the open
    /// conversation's tip and message count are compared with the store's, and the view re-read when they moved.
    fn watch(&mut self, ctx: &egui::Context) {
        let now = ctx.input(|i| i.time);
        if now - self.seen.watched_at < WATCH_EVERY {
            return;
        }
        self.seen.watched_at = now;
        self.follow_file();
        let Some(store) = &self.store else { return };
        // nothing to read unless another connection committed since the last look (constant time)
        let version = store.data_version().ok();
        if version == self.seen.version {
            return;
        }
        self.seen.version = version;
        let count = store.conversations().map(|c| c.len()).unwrap_or(0);
        let moved = self.session.as_ref().and_then(|s| {
            let c = store.conversation(&s.conv.id).ok()?;
            (c.tip != s.conv.tip || c.messages != s.conv.messages)
                .then(|| c.messages.saturating_sub(s.conv.messages))
        });
        if let Some(new) = moved {
            self.refresh();
            self.info(format!(
                "the conversation changed in the store ({new} new messages)"
            ));
        } else if count != self.conversations.len() {
            self.reload();
        }
    }

    /// Imports the open conversation's file again when it moved (an agent still writing it): the import reads
    /// only what it gained, and the watch then shows the new messages.
    fn follow_file(&mut self) {
        let open = self.conv_id();
        if self.follow.as_ref().map(|f| &f.conversation) != open.as_ref() {
            self.follow = match (&self.store, &open) {
                (Some(store), Some(c)) => Some(follow::Follow::of(store, c)),
                _ => None,
            };
        }
        let Some(path) = self.follow.as_mut().and_then(|f| f.due()) else {
            return;
        };
        if let Some(f) = &mut self.follow {
            f.running = true;
        }
        self.worker.submit(
            For::Follow,
            Action::Import {
                paths: vec![path],
                format: None,
            },
        );
    }

    /// What a follow's import brought: new messages are shown (the conversation re-read) and said.
    fn followed(&mut self, outcome: Outcome) {
        if let Some(f) = &mut self.follow {
            f.running = false;
        }
        let Outcome::Imported(files) = outcome else {
            return;
        };
        let added: usize = files.iter().map(|f| f.added).sum();
        if let Some(e) = files
            .iter()
            .filter(|f| f.is_refused())
            .find_map(|f| f.error.as_ref())
        {
            return self.fail(format!("following the session's file: {e}"));
        }
        if added > 0 {
            for p in self.panels() {
                p.stale();
            }
            self.refresh();
            let file = files
                .first()
                .and_then(|f| f.file.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let how = match files.first().and_then(|f| f.read_from) {
                Some(_) => "read from where the last import stopped",
                None => "read again whole, counted once",
            };
            self.info(format!("{file} grew: +{added} message(s), {how}"));
        }
    }

    /// Blocks until background jobs are done and applies their results (tests and screenshots).
    pub fn wait_for_jobs(&mut self, ctx: &egui::Context) {
        for r in self.worker.wait() {
            self.apply(ctx, r);
        }
    }

    /// Waits for the machine's fonts being looked through (a screenshot's settling) and installs them.
    pub fn wait_for_fonts(&mut self, ctx: &egui::Context) {
        if let Some(f) = self.fonts_coming.as_ref().and_then(|rx| rx.recv().ok()) {
            self.install(ctx, f);
        }
    }

    fn install(&mut self, ctx: &egui::Context, f: fonts::Fonts) {
        ctx.set_fonts(f.definitions.clone());
        self.fonts = Some(f);
        self.fonts_coming = None;
        self.font_notice();
    }

    /// Runs a slash command: parsed by the same code as `cairn slash` into the same action. `/context` and
    /// `/tree` show their views, `/export` without a file opens the export dialog; everything else is the action.
    pub fn run_command(&mut self, input: &str) {
        let cmd = match slash::parse(input) {
            Ok(c) => c,
            Err(e) => return self.fail(e.0),
        };
        let Some(conversation) = self.conv_id() else {
            return self.fail("no conversation open");
        };
        match cmd {
            Slash::Context => self.view = View::Context,
            Slash::Tree => {
                self.view = View::Tree;
                self.tree.graph.fit = true;
            }
            Slash::Export { format, file: None } => {
                let k = ExportFormat::ALL
                    .iter()
                    .position(|x| *x == format)
                    .unwrap_or(0);
                self.dialogs.open_export(k, self.session.as_ref());
            }
            Slash::Branch { message } => {
                // select it too, so the views follow the move
                if let Some(s) = &mut self.session
                    && let Some(i) = s.find_prefix(&message)
                {
                    s.selected = Some(i);
                }
                self.act(Slash::Branch { message }.action(&conversation));
            }
            other => self.act(other.action(&conversation)),
        }
    }

    pub fn jobs_running(&self) -> bool {
        !self.worker.running.is_empty()
    }

    /// The whole UI, callable from a test harness as well as from eframe.
    pub fn draw(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if !self.fonts_installed && self.fonts_at_once {
            self.fonts_installed = true;
            self.install(&ctx, fonts::definitions());
        }
        if !self.fonts_installed {
            // the bundled fonts now, the machine's for other scripts when they are found
            self.fonts_installed = true;
            ctx.set_fonts(fonts::bundled());
            let (tx, rx) = std::sync::mpsc::channel();
            let repaint = ctx.clone();
            std::thread::spawn(move || {
                if tx.send(fonts::definitions()).is_ok() {
                    repaint.request_repaint();
                }
            });
            self.fonts_coming = Some(rx);
        }
        if let Some(f) = self.fonts_coming.as_ref().and_then(|rx| rx.try_recv().ok()) {
            self.install(&ctx, f);
        }
        if let Ok(mut r) = self.repaint.lock()
            && r.is_none()
        {
            *r = Some(ctx.clone());
        }
        for r in self.worker.poll() {
            self.apply(&ctx, r);
        }
        self.watch(&ctx);
        self.retitle(&ctx);
        self.handle_input(&ctx);

        egui::Panel::top("toolbar").show(ui, |ui| self.toolbar(ui));
        egui::Panel::bottom("command-bar").show(ui, |ui| {
            match self.bar.ui(ui, &self.worker.running, self.status.as_ref()) {
                Some(command_bar::BarAsk::Run(c)) => self.run_command(&c),
                Some(command_bar::BarAsk::Cancel(id)) => self.worker.cancel(id),
                None => {}
            }
        });
        egui::Panel::left("conversations")
            .default_size(230.0)
            .size_range(160.0..=420.0)
            .resizable(true)
            .show(ui, |ui| {
                let current = self.session.as_ref().map(|s| s.conv.id.as_str());
                if let Some(id) = self.list.ui(ui, &self.conversations, current) {
                    self.select(&id);
                }
            });
        // the transcript reads beside the tree; the wide views (pages beside text, tables, charts) take its room
        if matches!(self.view, View::Tree | View::Operations) {
            egui::Panel::right("transcript")
                .default_size(360.0)
                .resizable(true)
                .show(ui, |ui| self.transcript_panel(ui));
        }
        egui::CentralPanel::default().show(ui, |ui| self.centre(ui));
        match self
            .dialogs
            .ui(&ctx, self.native_dialogs, self.session.as_ref())
        {
            Some(DialogAsk::Run(action)) => self.act(*action),
            Some(DialogAsk::Import(paths)) => self.import(paths),
            None => {}
        }
        redact_clipboard(&ctx);
    }

    fn handle_input(&mut self, ctx: &egui::Context) {
        // files dropped on the window are imported
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        self.import(dropped);
        // Ctrl+Shift+F: search every session
        if ctx.input_mut(|i| {
            i.consume_key(
                egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
                egui::Key::F,
            )
        }) {
            self.view = View::Search;
            self.search_panel.focus = true;
        }
        // a focused text field keeps its keys (Ctrl+Z there undoes typing, not a pointer move)
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Z)) {
            self.undo();
        }
        let asks = match &self.session {
            Some(s) => self.tree.keys(ctx, s),
            None => Vec::new(),
        };
        for ask in asks {
            self.tree_ask(ask);
        }
        if ctx.input(|i| i.key_pressed(egui::Key::Enter))
            && let Some(s) = &self.session
            && let Some(i) = s.selected
        {
            self.transcript.toggle(i);
        }
    }

    /// The tree's search answered: the status line counts the matches, the first is selected.
    fn found(&mut self, query: &str, hits: Vec<String>) {
        self.info(format!("{} message(s) match {query:?}", hits.len()));
        let first = match &self.session {
            Some(s) => self.tree.found(hits, s),
            None => None,
        };
        if let Some(ask) = first {
            self.tree_ask(ask);
        }
    }

    /// Does what the tree view asked.
    fn tree_ask(&mut self, ask: tree_view::TreeAsk) {
        match ask {
            tree_view::TreeAsk::Run(action) => self.act(*action),
            tree_view::TreeAsk::Select(node) => self.select_node(node),
            tree_view::TreeAsk::Picked(node) => {
                if let Some(s) = &mut self.session {
                    s.selected = Some(node);
                    self.transcript.reveal(s, node);
                }
            }
            tree_view::TreeAsk::Rewind(label) => {
                self.dialogs.rewind = Some(RewindDialog {
                    label,
                    digest: String::new(),
                });
            }
            tree_view::TreeAsk::Fail(e) => self.fail(e),
        }
    }

    /// Opens a message in the tree and the transcript (in `conversation` when given, else the open one).
    fn open_message(&mut self, conversation: Option<&str>, message: &str) {
        if let Some(c) = conversation
            && self.conv_id().as_deref() != Some(c)
        {
            self.select(c);
        }
        self.view = View::Tree;
        let node = self.session.as_ref().and_then(|s| s.find(message));
        match node {
            Some(n) => self.select_node(n),
            None => self.fail(format!("message {message} is not in this conversation")),
        }
    }

    fn select_node(&mut self, node: usize) {
        if let Some(s) = &mut self.session {
            s.reveal(node);
            s.selected = Some(node);
            self.tree.graph.focus = Some(node);
            self.transcript.reveal(s, node);
        }
    }

    fn toolbar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("cairn").strong().size(16.0));
            ui.separator();
            if ui.button("Import…").clicked()
                && let Some(files) = self.dialogs.open_import(self.native_dialogs)
            {
                self.import(files);
            }
            if ui.button("Discover").clicked() {
                self.dialogs.discovered = Some(
                    self.home
                        .as_ref()
                        .map(crate::discover::discover_in)
                        .unwrap_or_default(),
                );
            }
            if ui.button("Export…").clicked() {
                self.dialogs.open_export(0, self.session.as_ref());
            }
            ui.separator();
            ui.menu_button("Compact", |ui| {
                if ui.button("Ladder (cheapest first)").clicked() {
                    self.compact(None, None);
                    ui.close();
                }
                for s in Strategy::LADDER {
                    if ui.button(format!("Rung: {}", s.name())).clicked() {
                        self.compact(Some(s), None);
                        ui.close();
                    }
                }
            });
            if ui.button("Undo").on_hover_text("Ctrl+Z").clicked() {
                self.undo();
            }
            ui.separator();
            let dark = ui.visuals().dark_mode;
            if ui
                .button(if dark { "Light theme" } else { "Dark theme" })
                .clicked()
            {
                ui.ctx().set_theme(if dark {
                    egui::Theme::Light
                } else {
                    egui::Theme::Dark
                });
            }
            // the store's file name (its whole path on hover)
            let name = self
                .store_path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            ui.weak(format!("store: {name}"))
                .on_hover_text(self.store_path.display().to_string());
        });
    }

    fn transcript_panel(&mut self, ui: &mut egui::Ui) {
        ui.heading("Transcript");
        let (Some(s), Some(store)) = (&mut self.session, &self.store) else {
            ui.label("No conversation open.");
            return;
        };
        ui.weak(format!(
            "active path: {} of {} messages · click a header to open it",
            s.path.len(),
            s.heads.len()
        ));
        if let Some(sel) = s.selected
            && !s.on_path[sel]
        {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!(
                    "{} is on another branch: \"Switch tip here\" to read its path.",
                    graph::node_label(s, sel)
                ),
            );
        }
        // subagents: where this one was spawned, and the ones this session spawned (each where it was spawned)
        let mut open: Option<(String, Option<String>)> = None;
        if let Some(parent) = &s.conv.linked_to {
            let title = self
                .conversations
                .iter()
                .find(|c| &c.id == parent)
                .and_then(|c| c.title.clone())
                .unwrap_or_else(|| parent.clone());
            ui.horizontal_wrapped(|ui| {
                ui.label("Subagent of");
                if ui
                    .link(title.chars().take(60).collect::<String>())
                    .clicked()
                {
                    let at = s
                        .conv
                        .spawned_by
                        .as_deref()
                        .and_then(|c| store.message_with_call(parent, c).ok().flatten());
                    open = Some((parent.clone(), at));
                }
            });
        }
        let spawned: Vec<&Conversation> = self
            .conversations
            .iter()
            .filter(|c| c.linked_to.as_deref() == Some(s.conv.id.as_str()))
            .collect();
        if !spawned.is_empty() {
            egui::CollapsingHeader::new(format!("Subagents spawned here ({})", spawned.len()))
                .id_salt("subagents")
                .show(ui, |ui| {
                    for c in &spawned {
                        ui.horizontal_wrapped(|ui| {
                            let t: String = c
                                .title
                                .as_deref()
                                .unwrap_or(&c.id)
                                .chars()
                                .take(50)
                                .collect();
                            if ui.link(t).on_hover_text("open its transcript").clicked() {
                                open = Some((c.id.clone(), None));
                            }
                            ui.weak(format!("{} messages", c.messages));
                            let at = c.spawned_by.as_deref().and_then(|call| {
                                store.message_with_call(&s.conv.id, call).ok().flatten()
                            });
                            if let Some(at) = at
                                && let Some(node) = s.find(&at)
                                && ui
                                    .small_button("where")
                                    .on_hover_text("select the spawning call")
                                    .clicked()
                            {
                                s.reveal(node);
                                s.selected = Some(node);
                                self.tree.graph.focus = Some(node);
                            }
                        });
                    }
                });
        }
        if let Some(node) = self.transcript.show(ui, s, store) {
            s.reveal(node);
            s.selected = Some(node);
            self.tree.graph.focus = Some(node);
        }
        if let Some((conv, at)) = open {
            match at {
                Some(m) => self.open_message(Some(&conv), &m),
                None => self.select(&conv),
            }
        }
    }

    fn centre(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            for v in View::ALL {
                if ui.selectable_label(self.view == v, v.name()).clicked() {
                    self.view = v;
                }
            }
        });
        ui.separator();
        let about_open = panels!(self)
            .into_iter()
            .find(|p| p.view() == self.view)
            .is_none_or(|p| p.needs_session());
        if self.session.is_none() && about_open {
            ui.label("No conversations yet: import a session (Import…, Discover, or drop files on the window).");
            return;
        }
        let ask = match self.view {
            View::Tree => {
                let asks = match (&mut self.session, &self.store) {
                    (Some(s), Some(store)) => self.tree.ui(ui, s, store),
                    _ => Vec::new(),
                };
                for ask in asks {
                    self.tree_ask(ask);
                }
                None
            }
            view => {
                let shared = panel::Shared {
                    session: self.session.as_ref(),
                    conversations: &self.conversations,
                };
                panels!(self)
                    .into_iter()
                    .find(|p| p.view() == view)
                    .filter(|p| shared.session.is_some() || !p.needs_session())
                    .and_then(|p| p.ui(ui, &shared))
            }
        };
        match ask {
            Some(panel::Ask::Run(a)) => self.act(*a),
            Some(panel::Ask::Open {
                conversation,
                message: Some(m),
            }) => self.open_message(conversation.as_deref(), &m),
            Some(panel::Ask::Open {
                conversation: Some(c),
                message: None,
            }) => {
                self.select(&c);
                self.view = View::Tree;
            }
            Some(panel::Ask::Open { .. }) | None => {}
        }
    }
}

/// One line for the status bar saying what an action did.
fn describe(o: &Outcome) -> String {
    let short = |s: &str| s.chars().take(8).collect::<String>();
    match o {
        Outcome::Moved { tip, .. } => format!("tip moved to {}", short(tip)),
        Outcome::Checkpointed(c) => format!("checkpoint {} at {}", c.label, short(&c.message)),
        Outcome::Rewound { digest } => format!("rewound; digest {}", short(digest)),
        Outcome::Undone(op) => format!("undid {}", op.kind),
        Outcome::Exported { out, exported } => {
            let mut s = match out {
                Some(p) => format!("exported {} bytes to {}", exported.bytes, p.display()),
                None => format!("exported {} bytes", exported.bytes),
            };
            if exported.redacted > 0 {
                s.push_str(&format!("; {} secret(s) redacted", exported.redacted));
            }
            if let Some(r) = exported.repairs.describe() {
                s.push_str(&format!("; repaired: {r}"));
            }
            s
        }
        Outcome::Compacted(crate::commands::Compacted::Rung(s, Some(a))) => format!(
            "{}: {} → {} tokens ({} items), marker {}",
            s.name(),
            a.tokens_before,
            a.tokens_after,
            a.items,
            short(&a.marker)
        ),
        Outcome::Compacted(crate::commands::Compacted::Rung(s, None)) => {
            format!("{}: nothing to do", s.name())
        }
        Outcome::Compacted(crate::commands::Compacted::Ladder(o)) => {
            let mut s = format!(
                "ladder: {} → {} tokens ({} step(s))",
                o.tokens_before,
                o.tokens_after,
                o.steps.len()
            );
            if let Some(n) = &o.note {
                s.push_str("; ");
                s.push_str(n);
            }
            s
        }
        Outcome::Shaken(done) => done
            .iter()
            .map(|(s, a)| match a {
                Some(a) => format!(
                    "{}: {} → {} tokens",
                    s.name(),
                    a.tokens_before,
                    a.tokens_after
                ),
                None => format!("{}: nothing to do", s.name()),
            })
            .collect::<Vec<_>>()
            .join("; "),
        Outcome::Sent(s) => format!("reply {}", short(&s.reply_id)),
        _ => "done".into(),
    }
}

/// What leaves the window by the clipboard this frame (a selection copied with Ctrl+C, a Copy button, the primary
/// selection X11 and Wayland paste with the middle button) leaves redacted, as every output of the command line does:
/// one place every copy goes through, whatever widget made it.
fn redact_clipboard(ctx: &egui::Context) {
    ctx.output_mut(|o| {
        for c in &mut o.commands {
            if let egui::OutputCommand::CopyText(t) | egui::OutputCommand::TextSelectionSettled(t) =
                c
            {
                crate::redact::replace(t);
            }
        }
    });
}

impl eframe::App for Explorer {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frames += 1;
        let ctx = ui.ctx().clone();
        self.drive_screenshot(&ctx);
        self.draw(ui);
        // wake up to follow writes made outside the window even when nothing moves on screen
        ctx.request_repaint_after(std::time::Duration::from_secs_f64(WATCH_EVERY));
    }
}

/// How to open the window.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub conversation: Option<String>,
    /// What the Diff view compares the conversation with (a conversation or a message id).
    pub compare_with: Option<String>,
    /// Save a PNG of this view after it settled, then close; the flag opens messages in the transcript.
    /// Where to save, the view, and how it is staged (the screenshot view's name: "transcript", "readback", …).
    pub screenshot: Option<(PathBuf, View, &'static str)>,
    pub dark: Option<bool>,
    /// The store was just created: offer the sessions found on this machine.
    pub first_run: bool,
    /// Zoom the tree out to the whole tree (however small).
    pub fit: bool,
}

/// Opens the window on a store and blocks until it is closed.
pub fn run(store_path: PathBuf, options: Options) -> anyhow::Result<()> {
    let mut app = Explorer::new(store_path);
    if let Some(c) = &options.conversation {
        app.select(c);
    }
    if let Some(o) = &options.compare_with {
        app.diff.other = Some(o.clone());
    }
    if options.first_run && options.screenshot.is_none() {
        let found = app
            .home
            .as_ref()
            .map(crate::discover::discover_in)
            .unwrap_or_default();
        if !found.is_empty() {
            app.info(format!(
                "{} sessions found on this machine: import any from the list",
                found.len()
            ));
            app.dialogs.discovered = Some(found);
        }
    }
    let done = Arc::new(Mutex::new(None));
    if let Some((out, view, staging)) = options.screenshot {
        app.native_dialogs = false;
        app.stage(view, staging);
        if options.fit {
            app.tree.graph.initial = false;
            app.tree.graph.fit = true;
        }
        app.screenshot = Some(Screenshot {
            out,
            requested: false,
            done: done.clone(),
        });
    }
    let dark = options.dark;
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("cairn")
            .with_inner_size([1280.0, 800.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "cairn",
        native,
        Box::new(move |cc| {
            if let Some(d) = dark {
                cc.egui_ctx.set_theme(if d {
                    egui::Theme::Dark
                } else {
                    egui::Theme::Light
                });
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))?;
    let result = done.lock().map(|d| d.clone()).unwrap_or(None);
    if let Some(Err(e)) = result {
        anyhow::bail!("screenshot failed: {e}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::remote::Remote;
    use super::*;

    /// One frame of the whole window.
    fn frame(app: &mut Explorer, ctx: &egui::Context) {
        let mut output = ctx.run_ui(egui::RawInput::default(), |ui| app.draw(ui));
        // no painter here: the textures are not uploaded anywhere
        output.textures_delta.clear();
    }

    /// A window on a store holding the demo session (the folder lives as long as the first value).
    fn demo_app() -> (tempfile::TempDir, Explorer, egui::Context) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let mut store = Store::open(&path).unwrap();
        crate::demo::install(&mut store).unwrap();
        (dir, Explorer::new(path), egui::Context::default())
    }

    #[test]
    fn a_failed_background_job_is_shown_by_its_view_and_not_resubmitted() {
        let (_dir, mut app, ctx) = demo_app();
        app.view = View::Snapshots;
        frame(&mut app, &ctx);
        assert_eq!(app.worker.running.len(), 1, "the panel asked for its pages");
        app.wait_for_jobs(&ctx);
        assert!(app.snapshots.remote.ready().is_some());
        // as if that render had failed
        app.apply(
            &ctx,
            worker::Finished {
                superseded: false,
                purpose: For::Snapshots,
                about: app.conv_id(),
                result: Err("page 1: out of memory".into()),
            },
        );
        assert!(matches!(&app.snapshots.remote, Remote::Failed(e) if e == "page 1: out of memory"));
        frame(&mut app, &ctx);
        assert!(
            app.worker.running.is_empty(),
            "a failed render is not retried by itself"
        );
        // "Try again" makes it idle: the next frame asks again
        app.snapshots.remote.reset();
        frame(&mut app, &ctx);
        assert_eq!(app.worker.running.len(), 1);
        app.wait_for_jobs(&ctx);
    }

    #[test]
    fn a_panels_job_answers_that_panel_as_its_commands_own_type() {
        let (_dir, mut app, ctx) = demo_app();
        app.view = View::Models;
        frame(&mut app, &ctx);
        assert_eq!(
            app.worker.running.len(),
            1,
            "the panel asked for the models"
        );
        app.wait_for_jobs(&ctx);
        let rows = app
            .models
            .rows
            .ready()
            .map(|r| &r.models)
            .expect("the models panel got its answer");
        assert!(
            rows.iter().any(|r| r.model.starts_with("claude")),
            "{:?}",
            rows.iter().map(|r| &r.model).collect::<Vec<_>>()
        );
        // a failure of its job is shown by it alone
        app.apply(
            &ctx,
            worker::Finished {
                superseded: false,
                purpose: For::Panel(View::Models),
                about: None,
                result: Err("store busy".into()),
            },
        );
        assert!(matches!(&app.models.rows, Remote::Failed(e) if e == "store busy"));
        assert!(
            app.stats.by_day.ready().is_none() && !matches!(app.stats.by_day, Remote::Failed(_))
        );
        // an import makes it ask again
        for p in app.panels() {
            p.stale();
        }
        assert!(app.models.rows.wanted());
    }
}
