//! Assembled tokens by the kind of block they are in, and the scales a provider's measurements tell for each.
//!
//! Why split: cairn's estimate counts characters per token by kind of text, and a tokenizer does not err the same
//! way on every kind. A session that turns from prose to reading code (tool results) or to long tool calls (JSON)
//! drifts from one overall scale. The measured prompts of consecutive replies tell what each kind cost in the
//! model's own tokens; [`kind_scales`] learns one scale per kind from them, drawn toward a prior so a kind seldom
//! seen keeps the prior. The kinds are the block kinds every stored message is measured by (text, tool calls,
//! tool results, images, thinking), so learning needs no body: the store's measures carry them.

use std::ops::{Add, AddAssign};

use serde::Serialize;

use super::assemble::ByKind;
use crate::tokens::Measure;

/// How many kinds.
pub const KINDS: usize = 5;
/// The kinds, in [`Parts`] order.
pub const NAMES: [&str; KINDS] = ["text", "tool_use", "tool_result", "image", "thinking"];
/// Where tool results, images and thinking are in [`Parts`].
pub const TOOL_RESULT: usize = 2;
pub const IMAGE: usize = 3;
pub const THINKING: usize = 4;

/// Tokens by kind: text (with framing, tool definitions loaded and anything else), tool calls, tool results,
/// images, thinking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Parts(pub [u64; KINDS]);

/// A scale per kind, in [`Parts`] order.
pub type Scales = [f64; KINDS];

impl Parts {
    /// All of `n` as text (a figure with no breakdown).
    pub fn text(n: u64) -> Parts {
        Parts([n, 0, 0, 0, 0])
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Without `n` thinking tokens (a past turn's thinking a reader drops).
    pub fn without_thinking(mut self, n: u64) -> Parts {
        self.0[THINKING] = self.0[THINKING].saturating_sub(n);
        self
    }

    /// A stored message's measure (its framing and the tool definitions it loads count as text).
    pub fn of_measure(m: &Measure) -> Parts {
        let named = m.tool_use + m.tool_result + m.image + m.thinking;
        Parts([
            m.tokens().saturating_sub(named),
            m.tool_use,
            m.tool_result,
            m.image,
            m.thinking,
        ])
    }

    /// An assembled layout's breakdown (system text, summaries and pages' other text count as text).
    pub fn of_kinds(k: &ByKind) -> Parts {
        Parts([
            k.system + k.text + k.other,
            k.tool_use,
            k.tool_results,
            k.images,
            k.thinking,
        ])
    }

    /// The parts scaled and summed.
    pub fn scaled(&self, s: &Scales) -> f64 {
        self.0.iter().zip(s).map(|(&p, &k)| p as f64 * k).sum()
    }

    /// What `self` adds over `earlier`, scaled (negative where a kind shrank, as after a compaction).
    pub fn scaled_since(&self, earlier: &Parts, s: &Scales) -> f64 {
        self.scaled(s) - earlier.scaled(s)
    }

    /// The one scale these parts amount to under `s` (their scaled sum over their sum; `s`'s mean when empty).
    pub fn overall(&self, s: &Scales) -> f64 {
        match self.total() {
            0 => s.iter().sum::<f64>() / KINDS as f64,
            t => self.scaled(s) / t as f64,
        }
    }
}

/// The scales in words where the kinds differ (` (text 0.83, tool_use 1.17, …)`), nothing where they are one.
pub fn describe(s: &Scales) -> String {
    if s.iter().all(|&k| (k - s[0]).abs() < 0.005) {
        return String::new();
    }
    let each: Vec<String> = NAMES
        .iter()
        .zip(s)
        .map(|(n, k)| format!("{n} {k:.2}"))
        .collect();
    format!(" ({})", each.join(", "))
}

impl Add for Parts {
    type Output = Parts;
    fn add(mut self, o: Parts) -> Parts {
        self += o;
        self
    }
}

impl AddAssign for Parts {
    fn add_assign(&mut self, o: Parts) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

/// The lowest and highest scale a kind may take: a tokenizer is not off by more than twice either way, and a
/// fit outside that is noise (a hidden context that grew, a measurement of another request).
pub const SCALE_RANGE: (f64, f64) = (0.5, 2.0);

/// How much the prior may weigh against the data: as much as this share of the best-measured kind's spread. A
/// kind a session barely holds (a few images, no thinking) keeps its prior; one it holds much is learned. How much
/// a session's kinds can be told apart differs by session, so [`session_kind_scales`] picks among these by how
/// well each would have estimated the session's own later replies.
pub const PRIOR_WEIGHTS: [f64; 4] = [0.01, 0.1, 1.0, f64::INFINITY];
/// The weight where nothing chooses one (fits across sessions).
pub const PRIOR_WEIGHT: f64 = 0.1;

/// Replies a session needs before its own replies choose the prior's weight (fewer: the heaviest prior).
const MIN_VALIDATED: usize = 6;

/// One session's scales per kind ([`kind_scales`]), the prior's weight chosen on the session itself: fitted on
/// its first two thirds with each of [`PRIOR_WEIGHTS`], the weight whose from-scratch estimates of the last third
/// (the overhead from the session's first reply) err least is used to fit the whole.
pub fn session_kind_scales(s: &[(Parts, u64)], prior: &Scales) -> Scales {
    if s.len() < MIN_VALIDATED {
        return kind_scales(&[s], prior, PRIOR_WEIGHTS[PRIOR_WEIGHTS.len() - 1]);
    }
    let (train, test) = s.split_at(s.len() * 2 / 3);
    let fitted = Normal::of(&[train]);
    let weight = best_weight(s[0], test, |w| fitted.solve(prior, w));
    kind_scales(&[s], prior, weight)
}

/// Scales per kind across sessions, the prior's weight chosen the same way: with one session, on that session
/// ([`session_kind_scales`]); with more, fitted on all but the one with the most replies, the weight whose
/// from-scratch estimates of that one (the overhead from its own first reply) err least.
pub fn sessions_kind_scales(sessions: &[Vec<(Parts, u64)>], prior: &Scales) -> Scales {
    let filled: Vec<&Vec<(Parts, u64)>> = sessions.iter().filter(|s| !s.is_empty()).collect();
    let Some((held, _)) = filled.iter().enumerate().max_by_key(|(_, s)| s.len()) else {
        return *prior;
    };
    if filled.len() == 1 {
        return session_kind_scales(filled[held], prior);
    }
    let test = filled[held];
    if test.len() < 2 {
        return kind_scales(&filled, prior, PRIOR_WEIGHTS[PRIOR_WEIGHTS.len() - 1]);
    }
    let train: Vec<&Vec<(Parts, u64)>> = filled
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != held)
        .map(|(_, s)| *s)
        .collect();
    let fitted = Normal::of(&train);
    let weight = best_weight(test[0], &test[1..], |w| fitted.solve(prior, w));
    kind_scales(&filled, prior, weight)
}

/// Of [`PRIOR_WEIGHTS`], the one whose fit (`fit(weight)`) estimates `test` with least relative error summed, the
/// overhead taken from `first` (a session's first measured reply) at that fit's scales.
fn best_weight(first: (Parts, u64), test: &[(Parts, u64)], fit: impl Fn(f64) -> Scales) -> f64 {
    let err = |w: f64| -> f64 {
        let k = fit(w);
        let overhead = first.1 as f64 - first.0.scaled(&k);
        test.iter()
            .map(|(p, y)| ((overhead + p.scaled(&k)) - *y as f64).abs() / (*y).max(1) as f64)
            .sum()
    };
    PRIOR_WEIGHTS
        .into_iter()
        .map(|w| (w, err(w)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(PRIOR_WEIGHT, |(w, _)| w)
}

/// The one scale of the totals: the least-squares slope of measured against the parts' total within each session
/// (each centred on its own means), clamped to [`SCALE_RANGE`]; None when the sessions show no spread.
pub fn overall_slope<S: AsRef<[(Parts, u64)]>>(sessions: &[S]) -> Option<f64> {
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for s in sessions.iter().map(AsRef::as_ref).filter(|s| !s.is_empty()) {
        let k = s.len() as f64;
        let mx = s.iter().map(|(p, _)| p.total() as f64).sum::<f64>() / k;
        let my = s.iter().map(|(_, y)| *y as f64).sum::<f64>() / k;
        for (p, y) in s {
            let dx = p.total() as f64 - mx;
            sxx += dx * dx;
            sxy += dx * (*y as f64 - my);
        }
    }
    (sxx > 0.0).then(|| (sxy / sxx).clamp(SCALE_RANGE.0, SCALE_RANGE.1))
}

/// One scale per kind from sessions of `(parts, measured)` pairs: least squares of measured against parts within
/// each session (each has its own overhead, so only the spread inside a session counts), drawn toward `prior`
/// (ridge, the prior weighing `weight` of the best-measured kind's spread), each clamped to [`SCALE_RANGE`].
/// `prior` when the sessions show no spread.
pub fn kind_scales<S: AsRef<[(Parts, u64)]>>(
    sessions: &[S],
    prior: &Scales,
    weight: f64,
) -> Scales {
    Normal::of(sessions).solve(prior, weight)
}

/// The normal equations of measured against parts, each session centred on its own means (one pass over the
/// samples; each weight's fit is then a 5×5 solve).
struct Normal {
    xtx: [[f64; KINDS]; KINDS],
    xty: [f64; KINDS],
}

impl Normal {
    fn of<S: AsRef<[(Parts, u64)]>>(sessions: &[S]) -> Normal {
        let mut n = Normal {
            xtx: [[0.0; KINDS]; KINDS],
            xty: [0.0; KINDS],
        };
        for s in sessions {
            let s = s.as_ref();
            if s.len() < 2 {
                continue;
            }
            let k = s.len() as f64;
            let mut mx = [0.0f64; KINDS];
            let mut my = 0.0;
            for (p, y) in s {
                for (m, &v) in mx.iter_mut().zip(&p.0) {
                    *m += v as f64 / k;
                }
                my += *y as f64 / k;
            }
            for (p, y) in s {
                let mut dx = [0.0f64; KINDS];
                for ((d, &v), m) in dx.iter_mut().zip(&p.0).zip(&mx) {
                    *d = v as f64 - m;
                }
                let dy = *y as f64 - my;
                for (j, &xj) in dx.iter().enumerate() {
                    n.xty[j] += xj * dy;
                    for (l, &xl) in dx.iter().enumerate() {
                        n.xtx[j][l] += xj * xl;
                    }
                }
            }
        }
        n
    }

    /// The ridge solution toward `prior` at `weight` (see [`kind_scales`]).
    fn solve(&self, prior: &Scales, weight: f64) -> Scales {
        let spread = (0..KINDS).map(|j| self.xtx[j][j]).fold(0.0, f64::max);
        if spread <= 0.0 || weight.is_infinite() {
            return *prior;
        }
        let lambda = weight * spread;
        let (mut a, mut b) = (self.xtx, self.xty);
        for j in 0..KINDS {
            a[j][j] += lambda;
            b[j] += lambda * prior[j];
        }
        match solve(a, b) {
            Some(s) => s.map(|v| v.clamp(SCALE_RANGE.0, SCALE_RANGE.1)),
            None => *prior,
        }
    }
}

/// `a x = b` by Gaussian elimination with partial pivoting (the ridge makes `a` positive definite; None if it
/// is not).
fn solve(mut a: [[f64; KINDS]; KINDS], mut b: [f64; KINDS]) -> Option<Scales> {
    for c in 0..KINDS {
        let p = (c..KINDS).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < f64::EPSILON {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        let pivot = a[c];
        for r in c + 1..KINDS {
            let f = a[r][c] / pivot[c];
            for (x, p) in a[r][c..].iter_mut().zip(&pivot[c..]) {
                *x -= f * p;
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = [0.0; KINDS];
    for c in (0..KINDS).rev() {
        let s: f64 = (c + 1..KINDS).map(|k| a[c][k] * x[k]).sum();
        x[c] = (b[c] - s) / a[c][c];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(overhead: u64, scales: Scales, steps: &[[u64; KINDS]]) -> Vec<(Parts, u64)> {
        let mut at = Parts::default();
        steps
            .iter()
            .map(|s| {
                at += Parts(*s);
                (at, overhead + at.scaled(&scales).round() as u64)
            })
            .collect()
    }

    /// 45 steps of a session that talks, calls tools and reads their results, `run` steps of each in turn.
    fn turns(run: u64) -> Vec<[u64; KINDS]> {
        (0..45)
            .map(|i| match (i / run) % 3 {
                0 => [2_000 + 10 * i, 100, 0, 0, 0],
                1 => [50, 1_500 + 20 * i, 200, 0, 0],
                _ => [20, 100, 2_500 + 30 * i, 0, 0],
            })
            .collect()
    }

    #[test]
    fn each_kind_is_learned_from_how_the_measurements_grow() {
        // prose tokenises as estimated, tool results at 0.8 of the estimate, tool calls at 1.3
        let truth = [1.0, 1.3, 0.8, 1.0, 1.0];
        // a session that talks, then calls tools, then reads their results
        let steps = turns(15);
        let a = session(20_000, truth, &steps);
        let b = session(9_000, truth, &steps[10..]);
        let s = kind_scales(&[&a, &b], &[1.0; KINDS], PRIOR_WEIGHTS[0]);
        for k in 0..3 {
            assert!((s[k] - truth[k]).abs() < 0.05, "{k}: {s:?}");
        }
        // kinds never seen keep the prior
        assert_eq!((s[3], s[4]), (1.0, 1.0));
        // a heavier prior holds each kind between it and what the data tell
        let held = kind_scales(&[&a, &b], &[1.0; KINDS], PRIOR_WEIGHT);
        assert!(held[1] > 1.05 && held[1] < s[1], "{held:?}");
        assert!(held[2] < 0.95 && held[2] > s[2], "{held:?}");
    }

    #[test]
    fn a_kind_barely_seen_stays_near_its_prior_and_no_spread_tells_nothing() {
        let steps: Vec<[u64; KINDS]> = (0..30)
            .map(|i| {
                if i == 7 {
                    [1_000, 0, 0, 0, 3]
                } else {
                    [1_000, 0, 0, 0, 0]
                }
            })
            .collect();
        let a = session(5_000, [1.2, 1.0, 1.0, 1.0, 2.0], &steps);
        let s = kind_scales(&[a], &[1.0; KINDS], PRIOR_WEIGHT);
        assert!((s[0] - 1.2).abs() < 0.02, "{s:?}");
        assert!((s[4] - 1.0).abs() < 0.1, "{s:?}");
        let flat = vec![(Parts::text(100), 900u64); 5];
        assert_eq!(
            kind_scales(&[flat], &[1.1; KINDS], PRIOR_WEIGHT),
            [1.1; KINDS]
        );
        assert_eq!(
            kind_scales::<Vec<(Parts, u64)>>(&[], &[0.9; KINDS], PRIOR_WEIGHT),
            [0.9; KINDS]
        );
    }

    #[test]
    fn a_session_learns_its_kinds_only_where_its_own_later_replies_say_they_help() {
        let steps = turns(5);
        // kinds that differ: learned (one overall scale would miss the tool results)
        let truth = [1.0, 1.0, 0.7, 1.0, 1.0];
        let s = session_kind_scales(&session(12_000, truth, &steps), &[0.9; KINDS]);
        assert!((s[2] - 0.7).abs() < 0.05, "{s:?}");
        // one scale for everything: the kinds stay at it
        let s = session_kind_scales(&session(12_000, [1.1; KINDS], &steps), &[1.1; KINDS]);
        assert!(s.iter().all(|k| (k - 1.1).abs() < 0.01), "{s:?}");
        // too few replies to choose: the heaviest prior
        let few = session(12_000, truth, &steps[..4]);
        assert_eq!(session_kind_scales(&few, &[0.9; KINDS]), [0.9; KINDS]);
    }

    #[test]
    fn across_sessions_the_weight_is_chosen_on_the_session_held_out() {
        let steps = turns(5);
        let truth = [1.0, 1.0, 0.7, 1.0, 1.0];
        let a = session(12_000, truth, &steps);
        let b = session(30_000, truth, &steps[..30]);
        let s = sessions_kind_scales(&[a.clone(), b], &[0.9; KINDS]);
        assert!((s[2] - 0.7).abs() < 0.05, "{s:?}");
        // one session: chosen within it, as a session's own scales are
        assert_eq!(
            sessions_kind_scales(std::slice::from_ref(&a), &[0.9; KINDS]),
            session_kind_scales(&a, &[0.9; KINDS])
        );
        assert_eq!(sessions_kind_scales(&[], &[0.9; KINDS]), [0.9; KINDS]);
    }

    #[test]
    fn parts_keep_a_measure_total() {
        let m = Measure {
            text: 10,
            tool_use: 20,
            tool_result: 30,
            image: 40,
            thinking: 50,
            other: 6,
            tool_refs: 1,
            ..Measure::default()
        };
        let p = Parts::of_measure(&m);
        assert_eq!(p.total(), m.tokens());
        assert_eq!(p.0[1..], [20, 30, 40, 50]);
        assert_eq!(p.without_thinking(60).0[THINKING], 0);
        assert_eq!(p.overall(&[1.0; KINDS]), 1.0);
    }
}
