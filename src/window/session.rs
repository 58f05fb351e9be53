//! The open conversation as the window holds it: every message head (no bodies), the tree's layout, the active
//! path, tips and checkpoints, and a small cache of bodies for the rows on screen. Opening a 100k-message
//! session reads one covering-index scan and decodes only what is drawn.

use std::collections::{HashMap, HashSet};

use crate::layout::TreeLayout;
use crate::model::{Checkpoint, Conversation, Message};
use crate::store::{Head, Store, StoreError};

/// Bodies kept decoded at most (the visible rows plus some scrolling slack).
const BODY_CACHE: usize = 2_000;

pub struct Session {
    pub conv: Conversation,
    pub heads: Vec<Head>,
    pub parents: Vec<Option<usize>>,
    /// Children in CSR form: `kids[kid_off[i]..kid_off[i + 1]]`, in write order.
    kid_off: Vec<u32>,
    kids: Vec<u32>,
    /// Root to tip.
    pub path: Vec<usize>,
    pub on_path: Vec<bool>,
    pub tip: Option<usize>,
    /// Messages with no children other than the current tip: the other places a branch ends.
    pub leaves: Vec<usize>,
    pub checkpoints: Vec<(Checkpoint, Option<usize>)>,
    pub layout: TreeLayout,
    /// Segments the user opened or folded, by the message that starts them (ids survive a reload). Others
    /// follow `shown_in_full`.
    pub expanded: HashSet<String>,
    pub folded: HashSet<String>,
    pub selected: Option<usize>,
    /// What the context does to messages of the active path (by head index): "elided", "image pruned",
    /// "imaged", "summarised", "compacted away".
    pub marks: HashMap<usize, &'static str>,
    bodies: HashMap<usize, Message>,
}

/// Runs shown in full unless folded: short ones, and the whole of a session without branches (up to 400
/// messages), where the chain is all there is to see.
pub fn shown_in_full(len: u32, branched: bool) -> bool {
    len <= 12 || (!branched && len <= 400)
}

impl Session {
    pub fn open(store: &Store, conv: Conversation) -> Result<Session, StoreError> {
        let heads = store.heads(&conv.id)?;
        let checkpoints = store.checkpoints(&conv.id)?;
        let mut s = Session {
            conv,
            parents: Vec::new(),
            kid_off: Vec::new(),
            kids: Vec::new(),
            path: Vec::new(),
            on_path: Vec::new(),
            tip: None,
            leaves: Vec::new(),
            checkpoints: Vec::new(),
            layout: TreeLayout::default(),
            expanded: HashSet::new(),
            folded: HashSet::new(),
            selected: None,
            marks: HashMap::new(),
            bodies: HashMap::new(),
            heads,
        };
        s.index();
        s.checkpoints = checkpoints
            .into_iter()
            .map(|c| {
                let i = s.find(&c.message);
                (c, i)
            })
            .collect();
        s.relayout();
        s.selected = s.tip;
        s.load_marks(store)?;
        Ok(s)
    }

    fn index(&mut self) {
        let n = self.heads.len();
        // heads are in write order: a chain's parent is usually the previous head
        self.parents = (0..n)
            .map(|i| {
                let p = self.heads[i].parent_seq?;
                match i.checked_sub(1) {
                    Some(j) if self.heads[j].seq == p => Some(j),
                    _ => self.heads[i].parent_in(&self.heads),
                }
            })
            .collect();
        let mut count = vec![0u32; n + 1];
        for p in self.parents.iter().flatten() {
            count[*p + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        self.kid_off = count.clone();
        self.kids = vec![0; n.saturating_sub(self.parents.iter().filter(|p| p.is_none()).count())];
        let mut fill = count;
        for (i, p) in self.parents.iter().enumerate() {
            if let Some(p) = p {
                self.kids[fill[*p] as usize] = i as u32;
                fill[*p] += 1;
            }
        }
        self.tip = self.conv.tip.as_deref().and_then(|t| self.find(t));
        self.on_path = vec![false; n];
        self.path.clear();
        let mut cur = self.tip;
        while let Some(i) = cur {
            if self.on_path[i] {
                break;
            }
            self.on_path[i] = true;
            self.path.push(i);
            cur = self.parents[i];
        }
        self.path.reverse();
        self.leaves = (0..n)
            .filter(|&i| self.children(i).is_empty() && Some(i) != self.tip)
            .collect();
    }

    /// Recomputes the layout (after a segment was expanded or collapsed).
    pub fn relayout(&mut self) {
        let (expanded, folded, heads) = (&self.expanded, &self.folded, &self.heads);
        let branched = self.parents.iter().filter(|p| p.is_none()).count() > 1
            || (0..self.heads.len()).any(|i| self.children(i).len() > 1);
        self.layout = TreeLayout::compute(&self.parents, &|n, len| {
            let id = &heads[n].id;
            expanded.contains(id) || (!folded.contains(id) && shown_in_full(len, branched))
        });
    }

    pub fn children(&self, i: usize) -> &[u32] {
        match (self.kid_off.get(i), self.kid_off.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.kids[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The node of a message id (linear: used for a few lookups, never per frame).
    pub fn find(&self, id: &str) -> Option<usize> {
        self.heads.iter().position(|h| h.id == id)
    }

    pub fn checkpoint_labels(&self, node: usize) -> impl Iterator<Item = &str> {
        self.checkpoints
            .iter()
            .filter(move |(_, i)| *i == Some(node))
            .map(|(c, _)| c.label.as_str())
    }

    /// Shows the segment holding `node` in full (so a selected message is always drawn).
    pub fn reveal(&mut self, node: usize) {
        if self.layout.position(node).is_none()
            && let Some(start) = self.layout.segment_start(node)
        {
            let id = self.heads[start].id.clone();
            self.folded.remove(&id);
            self.expanded.insert(id);
            self.relayout();
        }
    }

    pub fn toggle_segment(&mut self, start: usize) {
        let id = self.heads[start].id.clone();
        let collapsed = self
            .layout
            .segment_of
            .get(start)
            .and_then(|&s| self.layout.segments.get(s as usize))
            .is_some_and(|s| s.collapsed);
        if collapsed {
            self.folded.remove(&id);
            self.expanded.insert(id);
        } else {
            self.expanded.remove(&id);
            self.folded.insert(id);
        }
        self.relayout();
    }

    /// Decoded bodies for nodes (loaded from the store on a miss, in one call).
    pub fn ensure_bodies(&mut self, store: &Store, nodes: &[usize]) -> Result<(), StoreError> {
        let missing: Vec<usize> = nodes
            .iter()
            .copied()
            .filter(|i| !self.bodies.contains_key(i) && *i < self.heads.len())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        if self.bodies.len() + missing.len() > BODY_CACHE {
            self.bodies.clear();
        }
        let mut sorted = missing;
        sorted.sort_unstable();
        let heads: Vec<Head> = sorted.iter().map(|&i| self.heads[i].clone()).collect();
        for (i, m) in sorted.into_iter().zip(store.load(&self.conv.id, &heads)?) {
            self.bodies.insert(i, m);
        }
        Ok(())
    }

    pub fn body(&self, i: usize) -> Option<&Message> {
        self.bodies.get(&i)
    }

    /// What the context does to each message of the active path (the core's layout: harness compactions and
    /// cairn's markers), from heads and measures; only the markers' bodies are read.
    fn load_marks(&mut self, store: &Store) -> Result<(), StoreError> {
        self.marks.clear();
        if self.path.is_empty() {
            return Ok(());
        }
        let view = crate::reclaim::PathView::load(store, &self.conv.id, None)?;
        let l = crate::reclaim::layout(&view, &[], view.len());
        for (k, fate) in crate::reclaim::assemble::fates(&view, &l)
            .into_iter()
            .enumerate()
        {
            if let (Some(f), Some(&i)) = (fate, self.path.get(k)) {
                self.marks.insert(i, f.label());
            }
        }
        Ok(())
    }

    /// A message of the conversation whose id starts with `prefix` (the first, in write order).
    pub fn find_prefix(&self, prefix: &str) -> Option<usize> {
        self.heads.iter().position(|h| h.id.starts_with(prefix))
    }

    /// The mark of a message of the active path, if the context does not send it as itself.
    pub fn mark_of(&self, i: usize) -> Option<&'static str> {
        self.marks.get(&i).copied()
    }
}
