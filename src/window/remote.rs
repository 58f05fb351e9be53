//! A result the window waits for from the worker, owned by the panel that shows it.

use eframe::egui;

/// Idle (not asked for yet, or stale), pending (asked), ready, or failed (with why).
#[derive(Debug, Default)]
pub enum Remote<T> {
    #[default]
    Idle,
    Pending,
    Ready(T),
    Failed(String),
}

impl<T> Remote<T> {
    /// Not asked for yet: the panel should ask.
    pub fn wanted(&self) -> bool {
        matches!(self, Remote::Idle)
    }

    pub fn ready(&self) -> Option<&T> {
        match self {
            Remote::Ready(t) => Some(t),
            _ => None,
        }
    }

    pub fn ready_mut(&mut self) -> Option<&mut T> {
        match self {
            Remote::Ready(t) => Some(t),
            _ => None,
        }
    }

    /// Forgets the result (the path changed): the panel will ask again when shown.
    pub fn reset(&mut self) {
        *self = Remote::Idle;
    }

    /// What a panel shows while its result is missing: why it failed, with "Try again" (back to idle, so the
    /// panel asks again), or `waiting`.
    pub fn show_missing(&mut self, ui: &mut egui::Ui, waiting: &str) {
        match self {
            Remote::Failed(e) => {
                ui.colored_label(ui.visuals().error_fg_color, e.as_str());
                if ui.button("Try again").clicked() {
                    *self = Remote::Idle;
                }
            }
            Remote::Pending => {
                ui.label(waiting);
            }
            Remote::Idle => {
                ui.label(waiting);
            }
            Remote::Ready(_) => {}
        }
    }
}
