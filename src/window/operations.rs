//! The operations view: the log of pointer moves (append, branch, fork, checkpoint, rewind, compact, resume,
//! undo) with when each happened, and undo.
//!
//! A panel like the others: it sends the core's command ([`OperationLog`], the one `cairn log` runs) as a job and
//! takes the answer back as that command's own type; the undo it offers is the core's `Undo`, routed by the
//! explorer like every pointer move.

use eframe::egui::{self, RichText};

use super::View;
use super::panel::{Ask, At, Panel, Shared, answer_of, fail_into};
use super::remote::Remote;
use super::session::Session;
use super::worker::For;
use crate::commands::log::OperationLog;
use crate::commands::{Action, Outcome};
use crate::store::Operation;

#[derive(Default)]
pub struct OperationsPanel {
    /// The open conversation's log, and the conversation it is of.
    pub log: Remote<(String, Vec<Operation>)>,
}

/// "12 s ago", "3 min ago", "5 h ago", "2 d ago".
fn ago(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..60 => format!("{s} s ago"),
        60..3600 => format!("{} min ago", s / 60),
        3600..86400 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86400),
    }
}

/// An id's first eight characters, or "-" for none.
fn short(s: &Option<String>) -> String {
    s.as_deref()
        .map_or("-".to_string(), |x| x.chars().take(8).collect())
}

impl OperationsPanel {
    fn show(&mut self, ui: &mut egui::Ui, s: &Session) -> Option<Ask> {
        if self.log.wanted() {
            self.log = Remote::Pending;
            return Ask::run(Action::job(OperationLog {
                conversation: s.conv.id.clone(),
            }));
        }
        let Some((_, ops)) = self.log.ready() else {
            self.log.show_missing(ui, "Reading the operation log…");
            return None;
        };
        let undo = ui
            .horizontal(|ui| {
                ui.label(format!("{} operations", ops.len()));
                ui.button("Undo last (Ctrl+Z)").clicked()
            })
            .inner;
        egui::ScrollArea::vertical()
            .id_salt("operations")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                egui::Grid::new("ops")
                    .striped(true)
                    .num_columns(6)
                    .show(ui, |ui| {
                        for h in ["#", "when", "operation", "tip before → after", "detail", ""] {
                            ui.label(RichText::new(h).strong());
                        }
                        ui.end_row();
                        let now = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_millis() as i64);
                        for o in ops.iter().rev() {
                            ui.label(o.seq.to_string());
                            ui.label(ago(now - o.created_at));
                            ui.label(&o.kind);
                            ui.label(format!(
                                "{} → {}",
                                short(&o.tip_before),
                                short(&o.tip_after)
                            ));
                            ui.add(egui::Label::new(o.detail.to_string()).truncate());
                            ui.label(if o.undone { "undone" } else { "" });
                            ui.end_row();
                        }
                    });
            });
        undo.then(|| {
            Ask::Run(Box::new(Action::Undo {
                conversation: s.conv.id.clone(),
            }))
        })
    }
}

impl Panel for OperationsPanel {
    fn view(&self) -> View {
        View::Operations
    }

    fn ui(&mut self, ui: &mut egui::Ui, shared: &Shared<'_>) -> Option<Ask> {
        self.show(ui, shared.session?)
    }

    fn failed(&mut self, purpose: For, error: &str) -> bool {
        fail_into(
            &mut self.log,
            purpose == For::Panel(View::Operations),
            error,
        )
    }

    fn answered(&mut self, at: At<'_>, outcome: Outcome) -> Option<Outcome> {
        match answer_of::<Vec<Operation>>(outcome) {
            Ok(ops) => {
                if let Some(c) = at.conversation() {
                    self.log = Remote::Ready((c, ops));
                }
                None
            }
            Err(other) => Some(*other),
        }
    }

    fn stale(&mut self) {
        self.log.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::{ago, short};

    #[test]
    fn times_read_in_the_largest_whole_unit() {
        assert_eq!(ago(59_000), "59 s ago");
        assert_eq!(ago(61_000), "1 min ago");
        assert_eq!(ago(7_200_000), "2 h ago");
        assert_eq!(ago(3 * 86_400_000), "3 d ago");
        assert_eq!(ago(-5), "0 s ago");
        assert_eq!(short(&Some("0123456789".into())), "01234567");
        assert_eq!(short(&None), "-");
    }
}
