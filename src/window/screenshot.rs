//! Screenshots of the real window (`cairn screenshot`): a view is staged the way it should be seen, the
//! window waits until its background work is done and its layout has settled, then saves its own viewport
//! (eframe's screenshot) and closes.

use super::*;

pub(super) struct Screenshot {
    pub(super) out: PathBuf,
    pub(super) requested: bool,
    pub(super) done: Arc<Mutex<Option<Result<(), String>>>>,
}

impl Explorer {
    pub(super) fn drive_screenshot(&mut self, ctx: &egui::Context) {
        let Some(shot) = &mut self.screenshot else {
            return;
        };
        ctx.request_repaint();
        if shot.requested {
            let done = shot.done.lock().map(|d| d.is_some()).unwrap_or(true);
            if done {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            return;
        }
        // let the views settle: background work done, textures uploaded, layout stable
        if !self.worker.running.is_empty() {
            let results = self.worker.wait();
            for r in results {
                self.apply(ctx, r);
            }
            self.frames = 0;
            return;
        }
        if self.frames < 8 {
            return;
        }
        // the machine's fonts for other scripts, once found
        if self.fonts.is_none() {
            self.wait_for_fonts(ctx);
            self.frames = 0;
            return;
        }
        shot.requested = true;
        let out = shot.out.clone();
        let done = shot.done.clone();
        let ctx2 = ctx.clone();
        ctx.request_screenshot(move |img: Arc<egui::ColorImage>| {
            let [w, h] = img.size;
            let res = image::save_buffer(
                &out,
                img.as_raw(),
                w as u32,
                h as u32,
                image::ColorType::Rgba8,
            )
            .map_err(|e| e.to_string());
            if let Ok(mut d) = done.lock() {
                *d = Some(res);
            }
            ctx2.request_repaint();
        });
    }

    /// Sets a view up the way a screenshot of it should look. `staging` is the screenshot's view name: with
    /// "transcript", the tree view with messages opened in the transcript beside it (the first reply, thinking
    /// unfolded, and the screenshot); "readback", the snapshot pages read back; "shapes", the shape picker open;
    /// "continue", the dialog of the conversation just written as a Claude Code session.
    pub fn stage(&mut self, view: View, staging: &str) {
        let transcript = staging == "transcript";
        self.view = view;
        if view == View::Tree {
            self.tree.graph.initial = true;
        }
        if view == View::Compare {
            // the snapshot row, previewed
            self.compare.picked = Some(3);
        }
        if view == View::Search && self.search_panel.query.is_empty() {
            // a query whose words the bundled demo holds, on both branches
            self.search_panel.query = "drain OR flaky OR race".into();
        }
        if view == View::Snapshots && staging == "readback" {
            // the pages read back by tesseract
            self.snapshots.auto_read = true;
        }
        if view == View::Snapshots && staging == "shapes" {
            self.snapshots.open_picker = true;
        }
        if staging == "continue"
            && let Some(s) = &self.session
        {
            // the open conversation continued in Claude Code, written under the temporary folder
            let home =
                crate::discover::Home::at(std::env::temp_dir().join("cairn-screenshot-home"));
            let action = crate::commands::Action::Continue {
                conversation: s.conv.id.clone(),
                at: None,
                harness: crate::export::agent::Harness::ClaudeCode,
                home,
                cwd: None,
                redact: true,
            };
            self.act(action);
            return;
        }
        let Some(s) = &mut self.session else { return };
        if !transcript || view != View::Tree {
            return;
        }
        let first_reply = s.path.iter().copied().find(|&i| {
            s.heads[i].role == crate::model::Role::Assistant && s.heads[i].has_thinking()
        });
        let image = s.path.iter().copied().find(|&i| s.heads[i].has_image());
        for i in [first_reply, image].into_iter().flatten() {
            self.transcript.toggle(i);
        }
        if let Some(i) = first_reply {
            // its thinking block (block 0) unfolded
            self.transcript.unfold(i, 0);
            s.selected = Some(i);
            self.transcript.reveal(s, i);
        }
    }
}
