//! The operations view: the log of pointer moves (append, branch, fork, checkpoint, rewind, compact, resume,
//! undo) with when each happened, and undo.

use super::*;

/// "12 s ago", "3 min ago", "5 h ago", "2 d ago".
pub(super) fn ago(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..60 => format!("{s} s ago"),
        60..3600 => format!("{} min ago", s / 60),
        3600..86400 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86400),
    }
}

impl Explorer {
    pub(super) fn operations_view(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.label(format!("{} operations", self.operations.len()));
            if ui.button("Undo last (Ctrl+Z)").clicked() {
                self.undo();
            }
        });
        let short = |s: &Option<String>| {
            s.as_deref()
                .map_or("-".to_string(), |x| x[..8.min(x.len())].to_string())
        };
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
                        for o in self.operations.iter().rev() {
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
    }
}
