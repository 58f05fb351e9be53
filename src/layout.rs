//! Where each message of a conversation's tree goes on the explorer's canvas.
//!
//! A long agent session is a chain of tens of thousands of messages with a few hundred side branches, so the
//! layout works on **segments** (maximal runs of single-child messages) rather than messages: a 100k-message
//! session with 300 branches is ~600 segments. Each segment is one node of a tidy tree (Buchheim, Jünger and
//! Leipert's linear-time form of Walker's algorithm), laid out in layers by segment level. Siblings go heaviest
//! subtree first and a parent sits above its first child, so a session's main line is one straight column with
//! its side branches to the right (centred parents would make it drift one half-column per branch point). A long
//! segment is drawn collapsed as first message, "… N hidden", last message unless expanded.
//!
//! Nothing here recurses: the first walk visits segments in reverse creation order (children are always
//! created after their parent), the second in creation order, and contours are followed by loops, so a
//! 100k-deep chain or a 10k-wide fan cannot overflow the stack. Lives in the core (no egui) so it is tested
//! and benchmarked without a window.

/// Horizontal distance between neighbouring subtrees, in layout units (a node is one unit wide).
pub const DISTANCE: f32 = 1.0;
/// Empty rows between one segment level and the next.
pub const LEVEL_GAP: u32 = 1;
/// A segment longer than this is collapsed to first, hidden, last unless expanded.
pub const COLLAPSE_OVER: usize = 3;

const NONE: u32 = u32::MAX;

/// A run of messages each of which (but the last) has exactly one child.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Index into [`TreeLayout::chain`] of the first message.
    pub start: u32,
    pub len: u32,
    /// The segment whose last message is this one's first message's parent.
    pub parent: Option<u32>,
    pub level: u32,
    /// Horizontal position, in units.
    pub x: f32,
    /// First row.
    pub y: u32,
    /// Rows drawn: `len`, or 3 when collapsed.
    pub rows: u32,
    pub collapsed: bool,
    /// Free units to the right before the next segment of the same level (labels may use them).
    pub room: f32,
    /// Messages in this segment's subtree: siblings are placed heaviest first, so the main line of a session
    /// runs straight down the left and its side branches stand to the right.
    pub weight: u64,
}

/// What a drawn row of a segment shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawnRow {
    /// The message at this node index.
    Message(usize),
    /// A collapsed run of this many messages.
    Hidden(u32),
}

#[derive(Debug, Clone, Default)]
pub struct TreeLayout {
    pub segments: Vec<Segment>,
    /// Node indices grouped by segment, each segment's run in order (root side first).
    pub chain: Vec<u32>,
    /// For each node: its segment and its offset in that segment.
    pub segment_of: Vec<u32>,
    pub offset_of: Vec<u32>,
    /// Leftmost and rightmost x, and rows in all.
    pub min_x: f32,
    pub max_x: f32,
    pub height: u32,
}

/// Each node's children in CSR form, in index (write) order: `kids[off[i]..off[i + 1]]`, `count[i]` of them.
struct Children {
    count: Vec<u32>,
    off: Vec<usize>,
    kids: Vec<u32>,
}

impl Children {
    fn of(parents: &[Option<usize>]) -> Children {
        let n = parents.len();
        let mut count = vec![0u32; n];
        for p in parents.iter().flatten() {
            if *p < n {
                count[*p] += 1;
            }
        }
        let mut off = vec![0usize; n + 1];
        for i in 0..n {
            off[i + 1] = off[i] + count[i] as usize;
        }
        let mut fill = off.clone();
        let mut kids = vec![0u32; off[n]];
        for (i, p) in parents.iter().enumerate() {
            if let Some(p) = *p
                && p < n
            {
                kids[fill[p]] = i as u32;
                fill[p] += 1;
            }
        }
        Children { count, off, kids }
    }
}

/// Messages under each message (itself included): parents come before children, so one reverse pass.
fn subtree_sizes(parents: &[Option<usize>]) -> Vec<u64> {
    let n = parents.len();
    let mut size = vec![1u64; n];
    for i in (0..n).rev() {
        if let Some(p) = parents[i]
            && p < n
            && p != i
        {
            size[p] += size[i];
        }
    }
    size
}

/// Places the segments: rows one layer per level, as tall as its tallest segment; columns by the tidy tree, with
/// the room each has before its right neighbour. Returns the height.
fn place(segments: &mut [Segment]) -> u32 {
    // rows: one layer per level, as tall as its tallest segment
    let levels = segments.iter().map(|s| s.level + 1).max().unwrap_or(0) as usize;
    let mut tallest = vec![0u32; levels];
    for s in segments.iter() {
        let t = &mut tallest[s.level as usize];
        *t = (*t).max(s.rows);
    }
    let mut top = vec![0u32; levels];
    let mut height = 0;
    for l in 0..levels {
        top[l] = height;
        height += tallest[l] + LEVEL_GAP;
    }
    for s in segments.iter_mut() {
        s.y = top[s.level as usize];
    }

    let xs = tidy(segments);
    for (s, x) in segments.iter_mut().zip(xs) {
        s.x = x;
    }
    let mut by_level: Vec<(u32, f32, usize)> = segments
        .iter()
        .enumerate()
        .map(|(k, s)| (s.level, s.x, k))
        .collect();
    by_level.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    for w in by_level.windows(2) {
        if w[0].0 == w[1].0 {
            segments[w[0].2].room = w[1].1 - w[0].1;
        }
    }
    height
}

impl TreeLayout {
    /// Lays out a tree given each node's parent index (parents before children, as the store returns heads).
    /// `expanded(first_node, len)` says whether the segment starting at that node, `len` messages long, is shown
    /// in full (runs of up to [`COLLAPSE_OVER`] always are).
    pub fn compute(parents: &[Option<usize>], expanded: &dyn Fn(usize, u32) -> bool) -> TreeLayout {
        let n = parents.len();
        let Children { count, off, kids } = Children::of(parents);
        let size = subtree_sizes(parents);

        // segments: start at a root or a child of a node with other children; follow single children
        let mut segments: Vec<Segment> = Vec::new();
        let mut chain = Vec::with_capacity(n);
        let mut segment_of = vec![NONE; n];
        let mut offset_of = vec![0u32; n];
        for i in 0..n {
            let starts = match parents[i] {
                None => true,
                Some(p) => p >= n || count[p] != 1,
            };
            if !starts || segment_of[i] != NONE {
                continue;
            }
            let s = segments.len() as u32;
            let parent_seg = parents[i]
                .filter(|p| *p < n)
                .map(|p| segment_of[p])
                .filter(|ps| *ps != NONE);
            let start = chain.len() as u32;
            let mut cur = i;
            let mut len = 0u32;
            loop {
                segment_of[cur] = s;
                offset_of[cur] = len;
                chain.push(cur as u32);
                len += 1;
                if count[cur] != 1 {
                    break;
                }
                cur = kids[off[cur]] as usize;
            }
            let collapsed = len as usize > COLLAPSE_OVER && !expanded(i, len);
            segments.push(Segment {
                start,
                len,
                parent: parent_seg,
                level: parent_seg.map_or(0, |p| segments[p as usize].level + 1),
                x: 0.0,
                y: 0,
                rows: if collapsed { 3 } else { len },
                collapsed,
                room: f32::INFINITY,
                weight: size[i],
            });
        }

        let height = place(&mut segments);
        let min_x = segments.iter().map(|s| s.x).fold(f32::INFINITY, f32::min);
        let max_x = segments
            .iter()
            .map(|s| s.x)
            .fold(f32::NEG_INFINITY, f32::max);
        TreeLayout {
            segments,
            chain,
            segment_of,
            offset_of,
            min_x: if min_x.is_finite() { min_x } else { 0.0 },
            max_x: if max_x.is_finite() { max_x } else { 0.0 },
            height: height.saturating_sub(LEVEL_GAP),
        }
    }

    /// What row `k` of segment `s` shows.
    pub fn row(&self, s: &Segment, k: u32) -> DrawnRow {
        let at = |o: u32| DrawnRow::Message(self.chain[(s.start + o) as usize] as usize);
        if !s.collapsed {
            at(k)
        } else {
            match k {
                0 => at(0),
                1 => DrawnRow::Hidden(s.len - 2),
                _ => at(s.len - 1),
            }
        }
    }

    /// Where a message is drawn (x, row), or None when it is inside a collapsed run.
    pub fn position(&self, node: usize) -> Option<(f32, u32)> {
        let s = &self.segments[*self.segment_of.get(node)? as usize];
        let o = self.offset_of[node];
        let row = if !s.collapsed {
            o
        } else if o == 0 {
            0
        } else if o == s.len - 1 {
            2
        } else {
            return None;
        };
        Some((s.x, s.y + row))
    }

    /// The node that starts the segment holding `node` (the key under which expansion is remembered).
    pub fn segment_start(&self, node: usize) -> Option<usize> {
        let s = self.segments.get(*self.segment_of.get(node)? as usize)?;
        Some(self.chain[s.start as usize] as usize)
    }
}

/// Buchheim–Jünger–Leipert on the segment tree (with a virtual root above all roots), without recursion.
fn tidy(segments: &[Segment]) -> Vec<f32> {
    let n = segments.len();
    if n == 0 {
        return Vec::new();
    }
    let root = n; // virtual
    let mut parent = vec![NONE as usize; n + 1];
    let mut count = vec![0usize; n + 1];
    for (i, s) in segments.iter().enumerate() {
        let p = s.parent.map_or(root, |p| p as usize);
        parent[i] = p;
        count[p] += 1;
    }
    let mut off = vec![0usize; n + 2];
    for i in 0..=n {
        off[i + 1] = off[i] + count[i];
    }
    let mut fill = off.clone();
    let mut kids = vec![0usize; n];
    for (i, &p) in parent.iter().enumerate().take(n) {
        kids[fill[p]] = i;
        fill[p] += 1;
    }
    // heaviest subtree first (stable: equal weights keep write order)
    for v in 0..=n {
        kids[off[v]..off[v + 1]].sort_by_key(|&k| std::cmp::Reverse(segments[k].weight));
    }
    let mut number = vec![0usize; n + 1];
    for v in 0..=n {
        for (j, &k) in kids[off[v]..off[v + 1]].iter().enumerate() {
            number[k] = j;
        }
    }
    let mut w = Walker {
        off,
        kids,
        parent,
        number,
        prelim: vec![0.0; n + 1],
        modv: vec![0.0; n + 1],
        shift: vec![0.0; n + 1],
        change: vec![0.0; n + 1],
        mid: vec![0.0; n + 1],
        thread: vec![None; n + 1],
        ancestor: (0..=n).collect(),
    };
    // first walk: children before parents (a segment's children are created after it); the root last
    for v in (0..n).rev().chain(std::iter::once(root)) {
        w.first_walk(v);
    }
    w.prelim[root] = w.mid[root];
    // second walk: parents before children
    let mut modsum = vec![0.0f32; n + 1];
    let mut x = vec![0.0f32; n];
    for v in 0..n {
        let p = w.parent[v];
        modsum[v] = modsum[p] + if p == root { 0.0 } else { w.modv[p] };
        x[v] = w.prelim[v] + modsum[v];
    }
    // the virtual root's own mod is 0, and its children's positions need no offset beyond their prelim
    x
}

struct Walker {
    off: Vec<usize>,
    kids: Vec<usize>,
    parent: Vec<usize>,
    number: Vec<usize>,
    prelim: Vec<f32>,
    modv: Vec<f32>,
    shift: Vec<f32>,
    change: Vec<f32>,
    /// Where a node goes relative to its children (above the first; 0 for a leaf), set when it is walked.
    mid: Vec<f32>,
    thread: Vec<Option<usize>>,
    ancestor: Vec<usize>,
}

impl Walker {
    fn children(&self, v: usize) -> &[usize] {
        &self.kids[self.off[v]..self.off[v + 1]]
    }

    fn next_left(&self, v: usize) -> Option<usize> {
        self.children(v).first().copied().or(self.thread[v])
    }

    fn next_right(&self, v: usize) -> Option<usize> {
        self.children(v).last().copied().or(self.thread[v])
    }

    /// Places `v`'s children (already walked) relative to each other and records `v`'s midpoint. A child's own
    /// preliminary x is set here, from its left sibling, which is what the recursive form does on entry.
    fn first_walk(&mut self, v: usize) {
        let (a, b) = (self.off[v], self.off[v + 1]);
        if a == b {
            return;
        }
        let mut default_ancestor = self.kids[a];
        for i in a..b {
            let c = self.kids[i];
            if i == a {
                self.prelim[c] = self.mid[c];
            } else {
                self.prelim[c] = self.prelim[self.kids[i - 1]] + DISTANCE;
                if self.off[c] != self.off[c + 1] {
                    self.modv[c] = self.prelim[c] - self.mid[c];
                }
            }
            default_ancestor = self.apportion(c, default_ancestor);
        }
        self.execute_shifts(v);
        // a parent sits above its first (heaviest) child, not between its children: a long session's main line
        // stays one straight column however many branches leave it
        self.mid[v] = self.prelim[self.kids[a]];
    }

    fn apportion(&mut self, v: usize, default_ancestor: usize) -> usize {
        let p = self.parent[v];
        let k = self.number[v];
        if k == 0 {
            return default_ancestor;
        }
        let first = self.kids[self.off[p]];
        let mut vir = v;
        let mut vor = v;
        let mut vil = self.kids[self.off[p] + k - 1];
        let mut vol = first;
        let mut sir = self.modv[vir];
        let mut sor = self.modv[vor];
        let mut sil = self.modv[vil];
        let mut sol = self.modv[vol];
        let mut da = default_ancestor;
        while let (Some(nil), Some(nir), Some(nol), Some(nor)) = (
            self.next_right(vil),
            self.next_left(vir),
            self.next_left(vol),
            self.next_right(vor),
        ) {
            vil = nil;
            vir = nir;
            vol = nol;
            vor = nor;
            self.ancestor[vor] = v;
            let shift = (self.prelim[vil] + sil) - (self.prelim[vir] + sir) + DISTANCE;
            if shift > 0.0 {
                let a = self.ancestor_of(vil, v, da);
                self.move_subtree(a, v, shift);
                sir += shift;
                sor += shift;
            }
            sil += self.modv[vil];
            sir += self.modv[vir];
            sol += self.modv[vol];
            sor += self.modv[vor];
        }
        if let Some(t) = self.next_right(vil)
            && self.next_right(vor).is_none()
        {
            self.thread[vor] = Some(t);
            self.modv[vor] += sil - sor;
        }
        if let Some(t) = self.next_left(vir)
            && self.next_left(vol).is_none()
        {
            self.thread[vol] = Some(t);
            self.modv[vol] += sir - sol;
            da = v;
        }
        da
    }

    fn ancestor_of(&self, vil: usize, v: usize, default_ancestor: usize) -> usize {
        let a = self.ancestor[vil];
        if self.parent[a] == self.parent[v] {
            a
        } else {
            default_ancestor
        }
    }

    fn move_subtree(&mut self, wl: usize, wr: usize, shift: f32) {
        let subtrees = self.number[wr].saturating_sub(self.number[wl]).max(1) as f32;
        self.change[wr] -= shift / subtrees;
        self.shift[wr] += shift;
        self.change[wl] += shift / subtrees;
        self.prelim[wr] += shift;
        self.modv[wr] += shift;
    }

    fn execute_shifts(&mut self, v: usize) {
        let mut shift = 0.0;
        let mut change = 0.0;
        for i in (self.off[v]..self.off[v + 1]).rev() {
            let w = self.kids[i];
            self.prelim[w] += shift;
            self.modv[w] += shift;
            change += self.change[w];
            shift += self.shift[w] + change;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_no_overlap(l: &TreeLayout) {
        let mut by_level: Vec<Vec<f32>> = Vec::new();
        for s in &l.segments {
            let lv = s.level as usize;
            if by_level.len() <= lv {
                by_level.resize(lv + 1, Vec::new());
            }
            by_level[lv].push(s.x);
        }
        for xs in &mut by_level {
            xs.sort_by(f32::total_cmp);
            for w in xs.windows(2) {
                assert!(w[1] - w[0] >= DISTANCE - 1e-3, "overlap at {w:?}");
            }
        }
    }

    #[test]
    fn a_chain_is_one_segment_collapsed() {
        let parents: Vec<Option<usize>> = (0..10usize).map(|i| i.checked_sub(1)).collect();
        let l = TreeLayout::compute(&parents, &|_, _| false);
        assert_eq!(l.segments.len(), 1);
        assert!(l.segments[0].collapsed);
        assert_eq!(l.row(&l.segments[0], 1), DrawnRow::Hidden(8));
        assert_eq!(l.position(0), Some((0.0, 0)));
        assert_eq!(l.position(5), None);
        assert_eq!(l.position(9), Some((0.0, 2)));
        let e = TreeLayout::compute(&parents, &|n, _| n == 0);
        assert_eq!(e.segments[0].rows, 10);
        assert_eq!(e.position(5), Some((0.0, 5)));
    }

    #[test]
    fn a_deep_chain_does_not_overflow() {
        let parents: Vec<Option<usize>> = (0..200_000usize).map(|i| i.checked_sub(1)).collect();
        let l = TreeLayout::compute(&parents, &|_, _| true);
        assert_eq!(l.height, 200_000);
    }

    #[test]
    fn a_deep_branching_tree_does_not_overflow() {
        // every node has two children, one of which is a leaf: 50k segment levels
        let mut parents = vec![None];
        let mut spine = 0;
        for _ in 0..50_000 {
            parents.push(Some(spine));
            parents.push(Some(spine));
            spine = parents.len() - 1;
        }
        let l = TreeLayout::compute(&parents, &|_, _| false);
        check_no_overlap(&l);
    }

    #[test]
    fn the_heaviest_child_goes_first_under_its_parent() {
        // 0 -> 1, 2, 3 ; 2 -> 4, 5 (2 has the biggest subtree)
        let parents = vec![None, Some(0), Some(0), Some(0), Some(2), Some(2)];
        let l = TreeLayout::compute(&parents, &|_, _| false);
        check_no_overlap(&l);
        let x = |n: usize| l.position(n).map(|p| p.0).unwrap_or(f32::NAN);
        assert!(x(2) < x(1) && x(1) < x(3), "{} {} {}", x(1), x(2), x(3));
        assert!((x(0) - x(2)).abs() < 1e-4);
        assert!((x(2) - x(4)).abs() < 1e-4);
        assert!(x(5) > x(4));
    }

    #[test]
    fn a_main_line_with_many_side_branches_stays_one_column() {
        // a 3000-message chain with a 3-message side branch every 30 messages
        let mut parents: Vec<Option<usize>> = Vec::new();
        let mut main = None;
        for k in 0..3000 {
            parents.push(main);
            main = Some(parents.len() - 1);
            if k % 30 == 29 {
                let mut b = main;
                for _ in 0..3 {
                    parents.push(b);
                    b = Some(parents.len() - 1);
                }
            }
        }
        let l = TreeLayout::compute(&parents, &|_, _| true);
        check_no_overlap(&l);
        let tip = main.unwrap();
        assert_eq!(l.position(0).map(|p| p.0), l.position(tip).map(|p| p.0));
        assert!(
            l.max_x - l.min_x <= 1.0 + 1e-4,
            "{} .. {}",
            l.min_x,
            l.max_x
        );
    }

    #[test]
    fn several_roots_share_one_canvas() {
        let parents = vec![None, None, Some(0), Some(1)];
        let l = TreeLayout::compute(&parents, &|_, _| false);
        assert_eq!(l.segments.len(), 2);
        check_no_overlap(&l);
    }

    #[test]
    fn random_trees_never_overlap_and_partition_the_nodes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let n = 1 + (next() % 300) as usize;
            let parents: Vec<Option<usize>> = (0..n)
                .map(|i| {
                    if i == 0 || next() % 40 == 0 {
                        None
                    } else if next() % 3 == 0 {
                        Some((next() % i as u64) as usize)
                    } else {
                        Some(i - 1)
                    }
                })
                .collect();
            let l = TreeLayout::compute(&parents, &|n, _| n % 2 == 0);
            check_no_overlap(&l);
            let mut seen = vec![false; n];
            for &c in &l.chain {
                assert!(!seen[c as usize]);
                seen[c as usize] = true;
            }
            assert!(seen.iter().all(|s| *s));
            for s in &l.segments {
                for k in 0..s.len - 1 {
                    let a = l.chain[(s.start + k) as usize] as usize;
                    let b = l.chain[(s.start + k + 1) as usize] as usize;
                    assert_eq!(parents[b], Some(a));
                }
                if let Some(p) = s.parent {
                    assert_eq!(l.segments[p as usize].level + 1, s.level);
                    assert!(l.segments[p as usize].y + l.segments[p as usize].rows <= s.y);
                }
            }
        }
    }
}
