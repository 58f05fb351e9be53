//! The session tree as a graph: the tidy layout of [`crate::layout`] drawn with egui's painter, with pan
//! (drag), zoom (Ctrl+wheel or pinch, around the pointer), culling (only segments that cross the screen are
//! visited) and three levels of detail: lines per segment when far out, dots per message, then dots with
//! labels. Nodes on screen are also accessible widgets (labelled "message ID ROLE"), so tests and screen
//! readers can find and click them.

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

use super::session::Session;
use crate::layout::DrawnRow;
use crate::model::Role;

/// Pixels per layout unit (horizontal) and per row (vertical) at zoom 1.
pub const UNIT_X: f32 = 240.0;
pub const ROW_Y: f32 = 28.0;

pub struct GraphView {
    /// Screen offset of the layout origin from the canvas' top-left corner, in pixels.
    pub pan: Vec2,
    pub zoom: f32,
    /// Centre this node on the next frame.
    pub focus: Option<usize>,
    pub fit: bool,
    /// The first look at a conversation: the whole tree when it is readable that way, else the tip up close.
    pub initial: bool,
    /// Messages drawn with labels last frame (their text is loaded for the next).
    pub visible: Vec<usize>,
    /// Where the canvas was drawn last frame.
    pub canvas: Option<Rect>,
}

impl Default for GraphView {
    fn default() -> Self {
        GraphView {
            pan: Vec2::new(40.0, 30.0),
            zoom: 1.0,
            focus: None,
            fit: false,
            initial: false,
            visible: Vec::new(),
            canvas: None,
        }
    }
}

/// What the user did on the canvas this frame.
pub enum GraphEvent {
    Select(usize),
    /// Expand or collapse the segment starting at this node.
    Toggle(usize),
    Branch(usize),
    Fork(usize),
    /// A partial compaction: from this message (on the active path) to the tip, as a snapshot.
    CompactFrom(usize),
    /// The path to this message written as a new session of a harness, which resumes it.
    Continue(usize, crate::export::agent::Harness),
}

pub fn role_color(role: Role, dark: bool) -> Color32 {
    match (role, dark) {
        (Role::User, true) => Color32::from_rgb(110, 170, 255),
        (Role::User, false) => Color32::from_rgb(30, 90, 200),
        (Role::Assistant, true) => Color32::from_rgb(110, 210, 150),
        (Role::Assistant, false) => Color32::from_rgb(20, 130, 70),
        (Role::Tool, true) => Color32::from_rgb(240, 180, 90),
        (Role::Tool, false) => Color32::from_rgb(180, 100, 0),
        (Role::System, true) => Color32::from_rgb(190, 160, 240),
        (Role::System, false) => Color32::from_rgb(110, 60, 170),
    }
}

pub fn node_label(s: &Session, i: usize) -> String {
    let h = &s.heads[i];
    let role = if h.has_tool_result() {
        "tool result"
    } else {
        h.role.as_str()
    };
    format!("message {} {role}", &h.id[..h.id.len().min(8)])
}

impl GraphView {
    fn origin(&self, rect: Rect) -> Pos2 {
        rect.min + self.pan
    }

    fn to_screen(&self, rect: Rect, x: f32, row: f32) -> Pos2 {
        self.origin(rect) + Vec2::new(x * UNIT_X, row * ROW_Y) * self.zoom
    }

    /// Zoom so the whole tree fits the canvas.
    fn fit_to(&mut self, s: &Session, rect: Rect) {
        // one unit per column plus room for the rightmost labels
        let w = (s.layout.max_x - s.layout.min_x + 1.0) * UNIT_X + 160.0;
        let h = (s.layout.height as f32 + 2.0) * ROW_Y;
        self.zoom = (rect.width() / w).min(rect.height() / h).clamp(0.002, 1.5);
        self.pan = Vec2::new(
            (rect.width() - 160.0 * self.zoom) / 2.0
                - (s.layout.min_x + s.layout.max_x) / 2.0 * UNIT_X * self.zoom,
            20.0,
        );
    }

    /// Fits, focuses, pans and zooms the view as asked or as the pointer does.
    fn navigate(&mut self, ui: &egui::Ui, s: &Session, rect: Rect, response: &egui::Response) {
        if self.fit {
            self.fit = false;
            self.fit_to(s, rect);
        }
        if self.initial {
            self.initial = false;
            self.fit_to(s, rect);
            if self.zoom < 0.6 {
                self.zoom = 0.9;
                self.focus = s.tip;
            }
        }
        if let Some(n) = self.focus.take()
            && let Some((x, row)) = s.layout.position(n)
        {
            let p = Vec2::new(x * UNIT_X, row as f32 * ROW_Y) * self.zoom;
            self.pan = rect.size() / 2.0 - p;
        }
        // pan and zoom
        if response.dragged() {
            self.pan += response.drag_delta();
        }
        if response.hovered() {
            let (zoom, scroll) = ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta));
            if zoom != 1.0 {
                let pointer = ui.input(|i| i.pointer.hover_pos()).unwrap_or(rect.center());
                let before = (pointer - self.origin(rect)) / self.zoom;
                self.zoom = (self.zoom * zoom).clamp(0.002, 3.0);
                self.pan = pointer - rect.min - before * self.zoom;
            } else if scroll != Vec2::ZERO {
                self.pan += scroll;
            }
        }
    }

    /// Far out, nodes have no labels: the checkpoints and the selection marked so they stay findable.
    fn far_marks(&self, ui: &egui::Ui, painter: &egui::Painter, s: &Session, rect: Rect) {
        // far out, nodes have no labels: keep the checkpoints and the selection findable
        let red = Color32::from_rgb(230, 70, 70);
        let sel = ui.visuals().selection.stroke.color;
        let marks = s
            .checkpoints
            .iter()
            .filter_map(|(_, n)| n.map(|n| (n, red)))
            .chain(s.selected.map(|n| (n, sel)));
        for (n, col) in marks {
            let Some((x, row)) = self.approx_position(s, n) else {
                continue;
            };
            let p = self.to_screen(rect, x, row);
            if rect.expand(10.0).contains(p) {
                if col == red {
                    let top = p + Vec2::new(-3.0, -9.0);
                    painter.add(egui::Shape::convex_polygon(
                        vec![top, top + Vec2::new(-8.0, 3.0), top + Vec2::new(0.0, 6.0)],
                        red,
                        Stroke::NONE,
                    ));
                } else {
                    painter.circle_stroke(p, 6.0, Stroke::new(2.0, col));
                }
            }
        }
    }

    pub fn show(&mut self, ui: &mut egui::Ui, s: &Session) -> Vec<GraphEvent> {
        let mut events = Vec::new();
        self.visible.clear();
        let rect = ui.available_rect_before_wrap();
        self.canvas = Some(rect);
        let response = ui.interact(
            rect,
            ui.scope_id().with("graph-canvas"),
            Sense::click_and_drag(),
        );
        let dark = ui.visuals().dark_mode;
        self.navigate(ui, s, rect, &response);
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);

        let row_px = ROW_Y * self.zoom;
        let unit_px = UNIT_X * self.zoom;
        let detail = detail_at(row_px);
        let origin = self.origin(rect);
        // visible layout window (one unit / row of slack)
        let x_lo = (rect.left() - origin.x) / unit_px - 1.0;
        let x_hi = (rect.right() - origin.x) / unit_px + 1.0;
        let r_lo = ((rect.top() - origin.y) / row_px - 1.0).max(0.0);
        let r_hi = (rect.bottom() - origin.y) / row_px + 1.0;

        let edge = ui.visuals().weak_text_color();
        let path_col = if dark {
            Color32::from_rgb(255, 200, 80)
        } else {
            Color32::from_rgb(200, 120, 0)
        };
        let text_col = ui.visuals().text_color();
        let (path, weak) = (Stroke::new(2.5, path_col), Stroke::new(1.0, edge));
        let layout = &s.layout;
        for seg in &layout.segments {
            let top = seg.y as f32;
            let bottom = (seg.y + seg.rows - 1) as f32;
            // edge from the parent segment's last row
            if let Some(p) = seg.parent {
                let ps = &layout.segments[p as usize];
                let from_row = (ps.y + ps.rows - 1) as f32;
                let (lo, hi) = (ps.x.min(seg.x), ps.x.max(seg.x));
                if hi >= x_lo && lo <= x_hi && top >= r_lo && from_row <= r_hi {
                    let on = s.on_path[layout.chain[seg.start as usize] as usize];
                    let a = self.to_screen(rect, ps.x, from_row);
                    let b = self.to_screen(rect, seg.x, top);
                    edge_to(&painter, a, b, if on { path } else { weak });
                }
            }
            if seg.x < x_lo || seg.x > x_hi || bottom < r_lo || top > r_hi {
                continue;
            }
            let first = layout.chain[seg.start as usize] as usize;
            let stroke = if s.on_path[first] { path } else { weak };
            let a = self.to_screen(rect, seg.x, top);
            let b = self.to_screen(rect, seg.x, bottom);
            painter.line_segment([a, b], stroke);
            if detail == 0 {
                // far out: the segment's line, its ends marked when they are tips or checkpoints
                let last = layout.chain[(seg.start + seg.len - 1) as usize] as usize;
                if Some(last) == s.tip {
                    painter.circle_filled(b, 4.0, path_col);
                } else if s.children(last).is_empty() {
                    painter.circle_stroke(b, 2.5, Stroke::new(1.0, text_col));
                }
                continue;
            }
            let k_lo = (r_lo - top).max(0.0) as u32;
            let k_hi = ((r_hi - top).max(0.0) as u32).min(seg.rows.saturating_sub(1));
            for k in k_lo..=k_hi {
                let pos = self.to_screen(rect, seg.x, top + k as f32);
                match layout.row(seg, k) {
                    DrawnRow::Hidden(n) => {
                        let room = unit_px * seg.room;
                        if hidden_row(ui, &painter, (pos, room, self.zoom), n, detail, first) {
                            events.push(GraphEvent::Toggle(first));
                        }
                    }
                    DrawnRow::Message(i) => {
                        let room = UNIT_X * self.zoom * seg.room;
                        self.draw_node(ui, &painter, s, i, pos, detail, dark, room, &mut events);
                        // a fully shown long segment can be folded again from its first message
                        if k == 0
                            && !seg.collapsed
                            && seg.len as usize > crate::layout::COLLAPSE_OVER
                            && detail == 2
                            && fold_button(ui, &painter, pos, first)
                        {
                            events.push(GraphEvent::Toggle(first));
                        }
                    }
                }
            }
        }
        if detail < 2 {
            self.far_marks(ui, &painter, s, rect);
        }
        if response.clicked()
            && let Some(p) = response.interact_pointer_pos()
            && let Some(i) = self.hit(s, rect, p)
        {
            events.push(GraphEvent::Select(i));
        }
        events
    }

    #[allow(clippy::too_many_arguments)]
    fn draw_node(
        &mut self,
        ui: &mut egui::Ui,
        painter: &egui::Painter,
        s: &Session,
        i: usize,
        pos: Pos2,
        detail: u8,
        dark: bool,
        room: f32,
        events: &mut Vec<GraphEvent>,
    ) {
        let h = &s.heads[i];
        let role = if h.has_tool_result() {
            Role::Tool
        } else {
            h.role
        };
        let col = role_color(role, dark);
        let r = (5.0 * self.zoom.clamp(0.6, 1.4)).max(2.0);
        let text_col = ui.visuals().text_color();
        if h.is_compaction() {
            painter.rect_filled(Rect::from_center_size(pos, Vec2::splat(r * 2.2)), 1.0, col);
        } else {
            painter.circle_filled(pos, r, col);
        }
        if h.has_error() {
            painter.circle_stroke(
                pos,
                r + 2.5,
                Stroke::new(2.0, Color32::from_rgb(230, 60, 60)),
            );
        }
        if Some(i) == s.tip {
            painter.circle_stroke(pos, r + 5.0, Stroke::new(2.5, text_col));
        } else if s.children(i).is_empty() {
            painter.circle_stroke(pos, r + 4.0, Stroke::new(1.0, text_col));
        }
        if Some(i) == s.selected {
            let sel = ui.visuals().selection.stroke.color;
            painter.rect_stroke(
                Rect::from_center_size(pos, Vec2::splat(r * 2.0 + 12.0)),
                3.0,
                Stroke::new(2.0, sel),
                egui::StrokeKind::Outside,
            );
        }
        let labels: Vec<&str> = s.checkpoint_labels(i).collect();
        if !labels.is_empty() {
            // a flag on a pole
            let top = pos + Vec2::new(-r - 2.0, -r - 10.0);
            painter.line_segment(
                [top, pos + Vec2::new(-r - 2.0, 0.0)],
                Stroke::new(1.5, text_col),
            );
            painter.add(egui::Shape::convex_polygon(
                vec![top, top + Vec2::new(-10.0, 3.5), top + Vec2::new(0.0, 7.0)],
                Color32::from_rgb(230, 70, 70),
                Stroke::NONE,
            ));
        }
        if detail < 2 {
            return;
        }
        self.visible.push(i);
        let text = node_text(s, i, role, &labels);
        let weak = !s.on_path[i];
        // labels stay in their column so neighbouring branches never overprint each other
        let clipped = column_clip(painter, pos, room);
        let drawn = clipped.text(
            pos + Vec2::new(r + 8.0, 0.0),
            Align2::LEFT_CENTER,
            text,
            FontId::proportional(12.0),
            if weak {
                ui.visuals().weak_text_color()
            } else {
                text_col
            },
        );
        // what the message says, when zoomed in far enough to read it
        if self.zoom >= 0.6
            && let Some(m) = s.body(i)
        {
            clipped.text(
                Pos2::new(drawn.right() + 8.0, pos.y),
                Align2::LEFT_CENTER,
                m.summary(44),
                FontId::proportional(11.0),
                ui.visuals().weak_text_color(),
            );
        }
        let hit = Rect::from_center_size(pos + Vec2::new(40.0, 0.0), Vec2::new(110.0, 18.0));
        let resp = ui.interact(hit, ui.scope_id().with(("node", i)), Sense::click());
        resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, node_label(s, i)));
        if resp.clicked() {
            events.push(GraphEvent::Select(i));
        }
        resp.context_menu(|ui| node_menu(ui, s, i, events));
    }

    /// Where a message is, or where its collapsed run is drawn when it is hidden inside one.
    fn approx_position(&self, s: &Session, n: usize) -> Option<(f32, f32)> {
        if let Some((x, row)) = s.layout.position(n) {
            return Some((x, row as f32));
        }
        let seg = s
            .layout
            .segments
            .get(*s.layout.segment_of.get(n)? as usize)?;
        Some((seg.x, seg.y as f32 + 1.0))
    }

    /// The drawn message nearest a click, if it is close to one.
    fn hit(&self, s: &Session, rect: Rect, p: Pos2) -> Option<usize> {
        let origin = self.origin(rect);
        let lx = (p.x - origin.x) / (UNIT_X * self.zoom);
        let row = ((p.y - origin.y) / (ROW_Y * self.zoom)).round();
        if row < 0.0 {
            return None;
        }
        let row = row as u32;
        let tolerance = (12.0 / (UNIT_X * self.zoom)).max(0.25);
        s.layout.segments.iter().find_map(|seg| {
            if (seg.x - lx).abs() > tolerance || row < seg.y || row >= seg.y + seg.rows {
                return None;
            }
            match s.layout.row(seg, row - seg.y) {
                DrawnRow::Message(i) => Some(i),
                DrawnRow::Hidden(_) => None,
            }
        })
    }
}

/// A painter clipped to a node's column: from just left of the node to just short of the next segment to the
/// right (`room` pixels away; infinite when there is none).
fn column_clip(painter: &egui::Painter, pos: Pos2, room: f32) -> egui::Painter {
    let column = Rect::from_min_max(
        Pos2::new(pos.x - 30.0, pos.y - 20.0),
        Pos2::new(pos.x + room.min(1e5) - 18.0, pos.y + 20.0),
    );
    painter.with_clip_rect(column.intersect(painter.clip_rect()))
}

/// Keyboard moves on the tree: parent, first child (the one on the active path if any), previous/next sibling.
pub fn step(s: &Session, from: usize, key: egui::Key) -> Option<usize> {
    match key {
        egui::Key::ArrowUp => s.parents[from],
        egui::Key::ArrowDown => {
            let kids = s.children(from);
            kids.iter()
                .copied()
                .find(|&k| s.on_path[k as usize])
                .or_else(|| kids.first().copied())
                .map(|k| k as usize)
        }
        egui::Key::ArrowLeft | egui::Key::ArrowRight => {
            let sibs: Vec<usize> = match s.parents[from] {
                Some(p) => s.children(p).iter().map(|&k| k as usize).collect(),
                None => (0..s.heads.len())
                    .filter(|&i| s.parents[i].is_none())
                    .collect(),
            };
            let k = sibs.iter().position(|&x| x == from)?;
            if key == egui::Key::ArrowLeft {
                k.checked_sub(1).map(|j| sibs[j])
            } else {
                sibs.get(k + 1).copied()
            }
        }
        _ => None,
    }
}

/// A collapsed run's row: a pill, its count when near, and a button that expands it; whether it was clicked.
fn hidden_row(
    ui: &egui::Ui,
    painter: &egui::Painter,
    (pos, room, zoom): (Pos2, f32, f32),
    n: u32,
    detail: u8,
    first: usize,
) -> bool {
    let (row_px, unit_px) = (ROW_Y * zoom, UNIT_X * zoom);
    let r = Rect::from_center_size(pos, Vec2::new(22.0, 14.0) * zoom.min(1.0));
    painter.rect_filled(r, 3.0, ui.visuals().widgets.inactive.bg_fill);
    if detail == 2 {
        column_clip(painter, pos, room).text(
            pos + Vec2::new(14.0, 0.0),
            Align2::LEFT_CENTER,
            format!("… {n} messages (expand)"),
            FontId::proportional(12.0),
            ui.visuals().weak_text_color(),
        );
    }
    let id = ui.scope_id().with(("hidden", first));
    let hit = Rect::from_center_size(pos, Vec2::new(unit_px * 0.8, row_px));
    let r = ui.interact(hit, id, Sense::click());
    r.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::Role::Button,
            true,
            format!("expand {n} hidden messages"),
        )
    });
    r.clicked()
}

/// The button that folds a fully shown long run again, beside its first message; whether it was clicked.
fn fold_button(ui: &egui::Ui, painter: &egui::Painter, pos: Pos2, first: usize) -> bool {
    let r = Rect::from_center_size(pos - Vec2::new(16.0, 0.0), Vec2::splat(12.0));
    let resp = ui.interact(r, ui.scope_id().with(("fold", first)), Sense::click());
    painter.text(
        r.center(),
        Align2::CENTER_CENTER,
        "−",
        FontId::proportional(12.0),
        ui.visuals().text_color(),
    );
    resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, "collapse run"));
    resp.clicked()
}

/// An edge from a parent segment's last row down to a child segment's first: across, then down.
fn edge_to(painter: &egui::Painter, a: Pos2, b: Pos2, stroke: Stroke) {
    let mid = Pos2::new(b.x, a.y + (b.y - a.y) * 0.5);
    painter.line_segment([a, Pos2::new(a.x, mid.y)], stroke);
    painter.line_segment([Pos2::new(a.x, mid.y), mid], stroke);
    painter.line_segment([mid, b], stroke);
}

/// How much a row of `row_px` pixels shows: 0 the segments' lines, 1 the nodes, 2 their labels too.
fn detail_at(row_px: f32) -> u8 {
    if row_px < 6.0 {
        0
    } else if row_px < 16.0 {
        1
    } else {
        2
    }
}

/// A node's label: its role and short id, what it holds, whether it is a tip, its checkpoints.
fn node_text(s: &Session, i: usize, role: Role, labels: &[&str]) -> String {
    let h = &s.heads[i];
    let mut text = format!("{} {}", role.as_str(), &h.id[..h.id.len().min(8)]);
    if h.has_tool_use() {
        text.push_str(" · tool call");
    }
    if h.has_error() {
        text.push_str(" · error");
    }
    if h.has_image() {
        text.push_str(" · image");
    }
    if h.is_compaction() {
        text.push_str(" · compaction");
    }
    if Some(i) == s.tip {
        text.push_str("  ◀ tip");
    } else if s.children(i).is_empty() {
        text.push_str("  ◁ tip");
    }
    for l in labels {
        text.push_str(&format!("  ⚑ {l}"));
    }
    text
}

/// A node's context menu: switch the tip, fork, compact from it, continue in a harness.
fn node_menu(ui: &mut egui::Ui, s: &Session, i: usize, events: &mut Vec<GraphEvent>) {
    if ui.button("Switch tip here").clicked() {
        events.push(GraphEvent::Branch(i));
        ui.close();
    }
    if ui.button("Fork from here").clicked() {
        events.push(GraphEvent::Fork(i));
        ui.close();
    }
    if s.on_path[i]
        && ui
            .button("Compact from here")
            .on_hover_text(
                "a snapshot of this message through the tip (partial compaction; undoable)",
            )
            .clicked()
    {
        events.push(GraphEvent::CompactFrom(i));
        ui.close();
    }
    ui.menu_button("Continue in…", |ui| {
        for h in crate::export::agent::Harness::ALL {
            if ui
                .button(h.label())
                .on_hover_text(format!(
                    "the path to this message as a new {} session, where {} finds it; shows the \
                     command that resumes it",
                    h.label(),
                    h.label()
                ))
                .clicked()
            {
                events.push(GraphEvent::Continue(i, h));
                ui.close();
            }
        }
    });
}
