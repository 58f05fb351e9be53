//! The estimate against the ground truth real transcripts carry: every reply records the prompt tokens its provider
//! counted, so the context cairn assembles for the messages before it (every compaction before it honoured) can be
//! checked against that count.
//!
//! The estimate is `overhead + Σ scale(kind) × assembled(kind)`, where `assembled` is [`super::assemble::layout`]'s
//! total split by block kind ([`super::parts`]), the overhead is what a harness sends but does not record (its
//! system prompt and tool definitions: one figure per session and model, measured again after each change the
//! harness made to it, or taken from an earlier stretch that sent the same), and each kind's scale corrects the
//! estimator for a model's tokenizer on that kind of content. A compaction text the harness sent and never
//! recorded (Aider's summary) adds what such texts measured before in the session. [`replay`] predicts: a
//! session's overhead is learned from its own first measured reply only, a model's scale from that model's other
//! sessions; nothing measured at or after a reply informs its estimate. [`calibrate`] fits on the same samples and
//! keeps the fit in the store, and [`Estimator::for_path`] is the one way every command turns an assembled total
//! into an estimate.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::assemble::{ModelReader, is_prompt_head, layout_for};
use super::parts::{IMAGE, KINDS, Parts, Scales, overall_slope, sessions_kind_scales};
use super::view::PathView;
use crate::model::{CairnMeta, Role};
use crate::models::default_scale;
use crate::store::{Store, StoreError};
use crate::tokens::Tokenizer;

/// One measured reply: the assembled context before it and what its provider counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub index: usize,
    pub message: String,
    /// Its model's key; one string shared by the path's replies of the model (a long path has tens of thousands).
    pub model: Arc<str>,
    /// The harness of its session (fits are per harness and model: a harness's hidden context grows its own way).
    pub harness: Arc<str>,
    pub assembled: u64,
    /// `assembled` by kind.
    pub parts: Parts,
    pub measured: u64,
    /// The unit the harness rounded `measured` to (0 or 1: exact).
    pub precision: u64,
    /// How often the harness had changed what it sends beside the messages before this reply
    /// ([`crate::store::Head::changes_context`]): replies of one segment share one overhead.
    pub segment: usize,
    /// What the harness sends beside the messages in this segment, where the change into it named it
    /// ([`crate::model::CairnMeta::sends`]): segments that send the same share an overhead.
    pub sends: Option<Arc<str>>,
    /// Its context holds a compaction's text the harness sent but never recorded (Aider's summary): what that
    /// cost is learned from the replies measured after earlier ones ([`unrecorded_size`]). The compaction's
    /// index on the path: replies after one compaction and after another hold texts of different sizes.
    pub unrecorded: Option<usize>,
}

/// Whether each message of a path, and the next request after it (the last entry), comes after a compaction
/// whose text the harness never recorded (the last compaction before it is one:
/// [`super::marker::is_unrecorded`]).
fn after_unrecorded(
    store: Option<&Store>,
    view: &PathView,
) -> Result<Vec<Option<usize>>, StoreError> {
    let idx: Vec<usize> = (0..view.len())
        .filter(|&i| view.heads[i].is_compaction())
        .collect();
    let mut out = vec![None; view.len() + 1];
    if idx.is_empty() {
        return Ok(out);
    }
    let bodies = view.bodies(store, &idx)?;
    for (k, (&at, m)) in idx.iter().zip(&bodies).enumerate() {
        let end = idx.get(k + 1).map_or(out.len(), |&n| n);
        if super::marker::is_unrecorded(&m.meta) {
            out[at + 1..end].fill(Some(at));
        }
    }
    Ok(out)
}

/// A change of what the harness sends beside the messages: its index on the path, and what it sends after it
/// where the change named it.
type Change = (usize, Option<Arc<str>>);

/// Where the harness changed what it sends beside the messages on a path.
fn changes(store: Option<&Store>, view: &PathView) -> Result<Vec<Change>, StoreError> {
    let idx: Vec<usize> = (0..view.len())
        .filter(|&i| view.heads[i].changes_context())
        .collect();
    if idx.is_empty() {
        return Ok(Vec::new());
    }
    let bodies = view.bodies(store, &idx)?;
    Ok(idx
        .into_iter()
        .zip(bodies)
        .map(|(i, m)| (i, CairnMeta::sends(&m.meta).map(Arc::from)))
        .collect())
}

/// The assembled total of the whole path (what the next request sends before its prompt), as `reader` reads it:
/// the figure [`Estimator::predict`] takes.
pub fn totals_after(view: &PathView, reader: ModelReader) -> Parts {
    Parts::of_kinds(&layout_for(view, &[], view.len(), reader).tally.by_kind)
}

/// The assembled total before each message of the path (what a reply at that index was sent), as `reader` reads
/// it, in one pass: a message adds its tokens, a prompt drops the past turn's thinking (for readers that drop it),
/// a marker re-lays the prefix out.
pub fn totals_before(view: &PathView, reader: ModelReader) -> Vec<Parts> {
    let mut out = Vec::with_capacity(view.len());
    // the layout at the last marker, and what followed it
    let mut base = Parts::default();
    let mut base_turn_thinking = 0u64;
    let mut tail = Parts::default();
    let mut tail_past_thinking = 0u64;
    let mut tail_turn_thinking = 0u64;
    for i in 0..view.len() {
        let drop = if reader.keeps_past_thinking {
            0
        } else {
            tail_past_thinking
        };
        out.push((base + tail).without_thinking(drop));
        if view.heads[i].is_compaction() {
            let l = layout_for(view, &[], i + 1, reader);
            base = Parts::of_kinds(&l.tally.by_kind);
            base_turn_thinking = l.turn_thinking;
            tail = Parts::default();
            tail_past_thinking = 0;
            tail_turn_thinking = 0;
            continue;
        }
        if is_prompt_head(view, i) && !reader.keeps_past_thinking {
            base = base.without_thinking(base_turn_thinking);
            base_turn_thinking = 0;
            tail_past_thinking += tail_turn_thinking;
            tail_turn_thinking = 0;
        }
        // a reply the harness recorded as failed is not sent (the layout leaves it out)
        if view.heads[i].is_failed() {
            continue;
        }
        let m = &view.facts[i].measure;
        tail += Parts::of_measure(m);
        tail_turn_thinking += m.thinking;
    }
    out
}

/// A model's name as replies of one model are grouped by ([`crate::models::key`]; a name that is no model is
/// kept as it is).
pub fn model_key(model: &str) -> String {
    crate::models::key_or_raw(model)
}

/// A path's model names, each read once: its replies repeat a few names thousands of times, and reading one
/// (its key, whether its model keeps past thinking) looks it up in the catalog.
#[derive(Default)]
pub struct Names<'a> {
    read: std::collections::HashMap<&'a str, (Arc<str>, ModelReader)>,
}

impl<'a> Names<'a> {
    /// The model's key ([`model_key`]; one string for every reply of the model) and how it reads the context.
    pub fn of(&mut self, raw: &'a str) -> (&Arc<str>, ModelReader) {
        let (key, reader) = self.read.entry(raw).or_insert_with(|| {
            let key = model_key(raw);
            let reader = ModelReader::of(&key);
            (Arc::from(key), reader)
        });
        (key, *reader)
    }
}

/// The measured replies of a path, each against the context its own model would have been sent, counted with the
/// tokenizer `counted` names for the model (a public one: the bodies are read from `store` then).
pub fn samples(
    store: Option<&Store>,
    view: &PathView,
    counted: &dyn Fn(&str) -> Tokenizer,
) -> Result<Vec<Sample>, StoreError> {
    collect_samples(store, view, counted, None, &Marks::of(store, view)?)
}

/// The measured replies of `model` on a path as it stands (its measures already the model's counts), against
/// `totals` ([`totals_before`] as the model reads the path) where the caller has them.
fn model_samples(
    store: Option<&Store>,
    view: &PathView,
    (model, totals): (&str, Option<&[Parts]>),
    marks: &Marks,
) -> Result<Vec<Sample>, StoreError> {
    collect_samples(
        store,
        view,
        &|_| Tokenizer::Estimate,
        Some((model, totals)),
        marks,
    )
}

/// What a path's compactions and the harness's changes mark on it ([`changes`], [`after_unrecorded`]): read once
/// for its samples and its estimator.
struct Marks {
    changes: Vec<Change>,
    unrecorded: Vec<Option<usize>>,
}

impl Marks {
    fn of(store: Option<&Store>, view: &PathView) -> Result<Marks, StoreError> {
        Ok(Marks {
            changes: changes(store, view)?,
            unrecorded: after_unrecorded(store, view)?,
        })
    }
}

/// [`samples`], or only those of one model (against the totals given, where given).
fn collect_samples(
    store: Option<&Store>,
    view: &PathView,
    counted: &dyn Fn(&str) -> Tokenizer,
    only: Option<(&str, Option<&[Parts]>)>,
    marks: &Marks,
) -> Result<Vec<Sample>, StoreError> {
    let mut totals: BTreeMap<(bool, Tokenizer), Vec<Parts>> = BTreeMap::new();
    let mut out = Vec::with_capacity(view.len() / 2);
    let mut names = Names::default();
    // the harness, one string for all the samples
    let harness: Arc<str> = Arc::from(view.harness.as_str());
    let mut segment = 0;
    let mut sends: Option<&Arc<str>> = None;
    for i in 0..view.len() {
        if let Some((_, s)) = marks.changes.get(segment).filter(|(at, _)| *at == i) {
            segment += 1;
            sends = s.as_ref();
        }
        let f = &view.facts[i];
        if view.heads[i].role != Role::Assistant {
            continue;
        }
        let Some(measured) = f.measured_input() else {
            continue;
        };
        let precision = f.usage.map_or(0, |u| u.precision);
        let (model, reader) = names.of(f.model.as_deref().unwrap_or("unknown"));
        let given = match only {
            Some((m, _)) if m != &**model => continue,
            Some((_, given)) => given,
            None => None,
        };
        let t: &[Parts] = match given {
            Some(t) => t,
            None => {
                let tk = counted(model);
                match totals.entry((reader.keeps_past_thinking, tk)) {
                    std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                    // the stored measures are cairn's estimate: no copy of the view is needed for it
                    std::collections::btree_map::Entry::Vacant(e) if tk == Tokenizer::Estimate => {
                        e.insert(totals_before(view, reader))
                    }
                    std::collections::btree_map::Entry::Vacant(e) => {
                        e.insert(totals_before(&view.retokenized(store, tk)?, reader))
                    }
                }
            }
        };
        out.push(Sample {
            index: i,
            message: view.heads[i].id.clone(),
            model: model.clone(),
            harness: harness.clone(),
            assembled: t[i].total(),
            parts: t[i],
            measured,
            precision,
            segment,
            sends: sends.cloned(),
            unrecorded: marks.unrecorded[i],
        });
    }
    Ok(out)
}

/// How a model's estimates are corrected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The one scale of the assembled total (what `cairn models` and `calibrate` show).
    pub scale: f64,
    /// A scale per kind ([`super::parts`]); fits kept before kinds were learned have none and use `scale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Scales>,
    /// Mean overhead over the sessions it was fitted on (used for a session with no measured reply yet).
    pub overhead: f64,
    pub samples: usize,
    pub sessions: usize,
    /// For a model of no known family, the tokenizer its measurements were explained best by ([`candidates`]);
    /// None: the model's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<Tokenizer>,
}

/// Fewer measured replies than this and a model keeps the defaults.
pub const MIN_SAMPLES: usize = 3;

/// Fits `measured ≈ overhead(session) + scale × assembled` over sessions: the scale by least squares within each
/// session (each has its own overhead), clamped to a plausible range. None when the samples cannot tell a scale.
pub fn fit(sessions: &[&[Sample]]) -> Option<Fit> {
    let n: usize = sessions.iter().map(|s| s.len()).sum();
    if n < MIN_SAMPLES {
        return None;
    }
    // each stretch of a session with one overhead fits as its own
    let per: Vec<Vec<Vec<(Parts, u64)>>> = sessions
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| segments(s.iter()))
        .collect();
    let ps: Vec<Vec<(Parts, u64)>> = per.iter().flatten().cloned().collect();
    let scale = overall_slope(&ps)?;
    let kinds = sessions_kind_scales(&ps, &[scale; KINDS]);
    // the overhead a session starts with, at the kinds' scales: what its first stretch measured over its scaled
    // parts, averaged over the sessions
    let starts: Vec<f64> = per
        .iter()
        .filter_map(|segs| segs.first())
        .map(|s| {
            s.iter()
                .map(|(p, y)| *y as f64 - p.scaled(&kinds))
                .sum::<f64>()
                / s.len() as f64
        })
        .collect();
    let overhead = starts.iter().sum::<f64>() / starts.len().max(1) as f64;
    Some(Fit {
        scale,
        kinds: Some(kinds),
        overhead,
        samples: n,
        sessions: per.len(),
        tokenizer: None,
    })
}

impl Fit {
    /// The scale of each kind.
    pub fn scales(&self) -> Scales {
        self.kinds.unwrap_or([self.scale; KINDS])
    }
}

/// Samples as the (parts, measured) pairs [`kind_scales`] fits, one list per stretch that shares an overhead: a
/// segment ([`Sample::segment`]), and within it the replies after one unrecorded compaction text
/// ([`Sample::unrecorded`]: a step the scale must not bend to).
fn segments<'a>(s: impl Iterator<Item = &'a Sample>) -> Vec<Vec<(Parts, u64)>> {
    let mut out: Vec<Vec<(Parts, u64)>> = Vec::new();
    let mut at = None;
    for x in s {
        if at != Some((x.segment, x.unrecorded)) {
            out.push(Vec::new());
            at = Some((x.segment, x.unrecorded));
        }
        if let Some(last) = out.last_mut() {
            last.push((x.parts, x.measured));
        }
    }
    out
}

/// The reply whose measurement gives the overhead of an estimate made after `samples` (in path order) in
/// `segment`, which sends `sends` beside the messages: the first of that segment measured; else, when the change
/// into it named what is sent, the first of the latest segment measured that sent the same (a new run with the
/// files of an earlier one, a file dropped and added again); else the first of the last segment measured: a reply
/// after a change the harness made unseen takes the overhead measured before it until a reply after the change is
/// measured. None when nothing was measured.
fn anchor(
    samples: &[&Sample],
    segment: usize,
    sends: Option<&str>,
) -> Option<(usize, OverheadFrom)> {
    let first_of = |seg: usize| samples.iter().position(|s| s.segment == seg);
    if let Some(i) = first_of(segment) {
        return Some((i, OverheadFrom::Measured));
    }
    if let Some(same) =
        sends.and_then(|k| samples.iter().rev().find(|s| s.sends.as_deref() == Some(k)))
    {
        return first_of(same.segment).map(|i| (i, OverheadFrom::SameSends));
    }
    first_of(samples.last()?.segment).map(|i| (i, OverheadFrom::Stale))
}

/// The fits `cairn calibrate` kept in the store, by [`fit_key`].
pub type Fits = BTreeMap<String, Fit>;

/// What a fit is for: one model as one harness drives it.
pub fn fit_key(harness: &str, model: &str) -> String {
    format!("{harness}:{model}")
}

const FITS_KEY: &str = "calibration";

/// The fits kept in the store (none before the first `cairn calibrate`).
pub fn stored_fits(store: &Store) -> Result<Fits, StoreError> {
    Ok(store
        .value(FITS_KEY)?
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default())
}

/// The tokenizers a model's measurements choose among: its own where it is public (OpenAI's o200k); for a model
/// whose tokenizer is not public (Anthropic's and Google's, a third party's through a harness, one released after
/// the catalog), cairn's estimate by text kind and each public tokenizer, since which counts its text most nearly
/// as its provider does is learned from what the provider measured, not assumed from its name.
pub fn candidates(model: &str) -> Vec<Tokenizer> {
    match crate::models::tokenizer(model) {
        Tokenizer::Estimate => vec![Tokenizer::Estimate, Tokenizer::O200k],
        public => vec![public],
    }
}

/// The tokenizer `model`'s context is counted with: the one `cairn calibrate` found its measurements explained
/// best by ([`Fit::tokenizer`]: as `harness` drives it, else as any harness does, the fit on most replies), else
/// the model's own ([`crate::models::tokenizer`]).
pub fn counted_with(fits: &Fits, harness: &str, model: &str) -> Tokenizer {
    fitted_tokenizer(fits, harness, model)
        .unwrap_or_else(|| crate::models::tokenizer(&model_key(model)))
}

/// The tokenizer `calibrate` chose for `model` (as `harness` drives it, else as any harness does, the fit on most
/// replies), if it chose one.
fn fitted_tokenizer(fits: &Fits, harness: &str, model: &str) -> Option<Tokenizer> {
    let model = model_key(model);
    fits.get(&fit_key(harness, &model))
        .and_then(|f| f.tokenizer)
        .or_else(|| {
            fits.iter()
                .filter(|(k, f)| {
                    f.tokenizer.is_some() && k.rsplit_once(':').is_some_and(|(_, m)| m == model)
                })
                .max_by_key(|(_, f)| f.samples)
                .and_then(|(_, f)| f.tokenizer)
        })
}

/// Of tokenizers tried on the same measured prompts ((tokenizer, whether a fit was made, its median error)), the
/// one whose fit explains them best; the model's `own` where none does better. `calibrate`'s rule, and
/// [`tokenizer_for`]'s on one path.
fn explains_best(
    own: Tokenizer,
    tried: impl Iterator<Item = (Tokenizer, bool, f64)>,
) -> Option<Tokenizer> {
    tried
        .filter(|t| t.1)
        .min_by(|a, b| a.2.total_cmp(&b.2).then((a.0 != own).cmp(&(b.0 != own))))
        .map(|t| t.0)
}

/// The tokenizer `model`'s context on `view` (as stored, counted by the estimate) is counted with: the one
/// `calibrate` chose ([`counted_with`]); where no calibration chose one for a model whose tokenizer is not
/// public, the one whose fit explains this path's own measured replies of the model best (`calibrate`'s rule on
/// one session: a store never calibrated counts as a calibrated one would); else the model's own. Only a path
/// with measured replies is counted by another tokenizer to choose (once: the counts are kept); the path as the
/// chosen one counted it is given back where choosing made it, so it is not counted again.
pub fn tokenizer_for(
    fits: &Fits,
    store: Option<&Store>,
    view: &PathView,
    model: &str,
) -> Result<(Tokenizer, Option<PathView>), StoreError> {
    let model = model_key(model);
    if let Some(tk) = fitted_tokenizer(fits, &view.harness, &model) {
        return Ok((tk, None));
    }
    let own = crate::models::tokenizer(&model);
    let tried = candidates(&model);
    if tried.len() < 2 || !(0..view.len()).any(|i| view.facts[i].measured_input().is_some()) {
        return Ok((own, None));
    }
    // what this path chose last, while it has not grown since
    let memo = store
        .filter(|_| view.is_stored())
        .zip(view.heads.last())
        .map(|(s, tip)| {
            (
                s,
                format!("path-tokenizer/{}/{model}", view.conversation),
                json!({"tip": tip.id, "version": PATH_CHOICE_VERSION}),
            )
        });
    if let Some((s, key, at)) = &memo
        && let Some(v) = s.value(key)?
        && v.get("at") == Some(at)
        && let Some(tk) = v
            .get("tokenizer")
            .and_then(|t| Tokenizer::deserialize(t).ok())
    {
        return Ok((tk, None));
    }
    let mut results = Vec::with_capacity(tried.len());
    let mut counted = Vec::with_capacity(tried.len());
    // where the harness changed what it sends and compacted: the path's own, however its messages are counted
    let marks = Marks::of(store, view)?;
    for tk in tried {
        let recounted = match tk {
            Tokenizer::Estimate => None,
            _ => Some(view.retokenized(store, tk)?),
        };
        // the model's replies, against the path as `tk` counts it
        let v = recounted.as_ref().unwrap_or(view);
        let own_replies = model_samples(store, v, (&model, None), &marks)?;
        let (f, _, after) = calibrated(&[own_replies]);
        results.push((tk, f.is_some(), after));
        counted.push((tk, recounted));
    }
    let tk = explains_best(own, results.into_iter()).unwrap_or(own);
    if let Some((s, key, at)) = &memo {
        s.keep_value(key, &json!({"at": at, "tokenizer": tk}))?;
    }
    let made = counted
        .into_iter()
        .find(|(t, _)| *t == tk)
        .and_then(|(_, v)| v);
    Ok((tk, made))
}

/// The rules a path's kept tokenizer choice was made under: raised when they change, so a kept choice is made
/// again.
const PATH_CHOICE_VERSION: u32 = 1;

/// A path counted the way its model counts (the tokenizer its measurements chose: [`counted_with`]) and the one
/// estimator of what a layout of it sends: what `context`, `send`, `compact`, `compare` and the preview measure a
/// context by, so the target a ladder aims at, the threshold `send` tests and the totals the comparison prices are
/// one figure.
pub fn as_model_counts(
    store: &Store,
    view: PathView,
    model: &str,
) -> Result<(PathView, Estimator), StoreError> {
    let fits = stored_fits(store)?;
    let (tk, made) = tokenizer_for(&fits, Some(store), &view, model)?;
    let view = match made {
        Some(counted) => counted,
        None => view.counted_by(Some(store), tk)?,
    };
    let est = Estimator::for_path(&fits, Some(store), &view, (model, tk))?;
    Ok((view, est))
}

/// How one path's assembled totals become estimates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimator {
    pub model: String,
    /// The one scale the kinds' scales amount to on this path's context now.
    pub scale: f64,
    /// The scale of each kind ([`super::parts::NAMES`] order): what [`Estimator::estimate`] applies.
    pub kind_scales: Scales,
    pub overhead: f64,
    /// The path's last measured reply of the model: (assembled before it, measured).
    pub last_measured: Option<(u64, u64)>,
    /// What was assembled before that reply, by kind.
    #[serde(skip)]
    pub last_parts: Option<Parts>,
    /// Where the scale and overhead came from, in words.
    pub source: String,
}

impl Estimator {
    /// The one calibration choice, the same [`replay`] scores: the scale this path's own measured replies of the
    /// model tell (once there are enough), else the model's stored fit, else its default; the overhead from the
    /// path's first measured reply of that model at that scale (else the fit's mean overhead, else none); and the
    /// last measured reply, which the next request is predicted from.
    /// `view` is counted the way the model counts, by `tk` ([`tokenizer_for`], [`PathView::counted_by`]);
    /// `store` reads its bodies when a sample needs them.
    pub fn for_path(
        fits: &Fits,
        store: Option<&Store>,
        view: &PathView,
        (model, tk): (&str, Tokenizer),
    ) -> Result<Estimator, StoreError> {
        Self::made(fits, store, view, (model, tk), None)
    }

    /// [`Estimator::for_path`] where the caller has the path's [`totals_before`] as the model reads it (the
    /// timeline, which estimates every reply from them): they are not made again.
    pub fn for_path_with_totals(
        fits: &Fits,
        store: Option<&Store>,
        view: &PathView,
        (model, tk): (&str, Tokenizer),
        totals: &[Parts],
    ) -> Result<Estimator, StoreError> {
        Self::made(fits, store, view, (model, tk), Some(totals))
    }

    fn made(
        fits: &Fits,
        store: Option<&Store>,
        view: &PathView,
        (model, tk): (&str, Tokenizer),
        totals: Option<&[Parts]>,
    ) -> Result<Estimator, StoreError> {
        let model = &model_key(model);
        let fit = fits.get(&fit_key(&view.harness, model));
        let prior = fit.map_or_else(|| [default_scale(model); KINDS], Fit::scales);
        // the view's measures are already the model's counts: its samples are taken as they stand
        let marks = Marks::of(store, view)?;
        let own = model_samples(store, view, (model, totals), &marks)?;
        let refs: Vec<&Sample> = own.iter().collect();
        let after = own_scale_after(model, fit.is_some());
        let kinds = session_scales(&refs, refs.len(), &prior, after);
        let scale = own.last().map_or(kinds[0], |s| s.parts.overall(&kinds));
        // the segment the next request is in: after the path's last change
        let changes = &marks.changes;
        let end = changes.last().and_then(|(_, s)| s.as_deref());
        let anchored = anchor(&refs, changes.len(), end);
        let unrecorded = unrecorded_size(&refs, refs.len(), &kinds);
        let held = match marks.unrecorded[view.len()] {
            Some(_) => unrecorded,
            None => 0.0,
        };
        let (overhead, how) = match (anchored.map(|(a, _)| refs[a]), fit) {
            (Some(s), _) => (
                segment_overhead(&refs, anchored.map_or(0, |(a, _)| a), &kinds, unrecorded) + held,
                if held > 0.0 {
                    format!(
                        "overhead from this session's reply {}, with {held:.0} for the compaction text the \
                         harness never recorded (what the replies after earlier ones measured)",
                        s.message
                    )
                } else {
                    format!("overhead from this session's reply {}", s.message)
                },
            ),
            (None, Some(f)) => (f.overhead, "overhead: the model's mean".to_string()),
            (None, None) => (0.0, "no overhead measured".to_string()),
        };
        let scale_how = match fit {
            _ if own.len() >= after && kinds != prior => {
                format!("scale {scale:.2} from this session's {} replies", own.len())
            }
            Some(f) => format!("scale {scale:.2} fitted on {} replies", f.samples),
            None => format!("default scale {scale:.2}"),
        };
        // a prompt measured before a compaction was of a context that is gone, and one measured before the harness
        // changed to what an earlier segment sent had that segment's overhead: the next is predicted from scratch
        let last = own.last().filter(|s| {
            !(s.index + 1..view.len()).any(|i| view.lays_out_anew(i))
                && anchored.map(|(_, from)| from) != Some(OverheadFrom::SameSends)
        });
        Ok(Estimator {
            model: model.to_string(),
            scale,
            kind_scales: kinds,
            overhead,
            last_measured: last.map(|s| (s.assembled, s.measured)),
            last_parts: last.map(|s| s.parts),
            source: format!(
                "{}{}; {scale_how}{}; {how}",
                tk.name(),
                if fitted_tokenizer(fits, &view.harness, model).is_none()
                    && tk != crate::models::tokenizer(model)
                {
                    ", which this path's measured replies chose"
                } else {
                    ""
                },
                super::parts::describe(&kinds)
            ),
        })
    }

    /// From scratch: the overhead plus the assembled context, each kind scaled.
    pub fn estimate(&self, assembled: Parts) -> u64 {
        (self.overhead + assembled.scaled(&self.kind_scales))
            .max(0.0)
            .round() as u64
    }

    /// What a layout of the path with `planned` markers (not yet written) sends: the next request as predicted
    /// from the last measured prompt (what the rungs take out, taken out of it), from scratch where one of them
    /// lays the context out anew (a summary or a snapshot: that prompt was of a context that is gone;
    /// [`super::view::Resolved::lays_out_anew`]). What `context` says once they are written.
    pub fn sent(&self, l: &super::assemble::ContextLayout, planned: &[super::view::Placed]) -> u64 {
        let parts = Parts::of_kinds(&l.tally.by_kind);
        if planned.iter().any(|p| p.marker.lays_out_anew()) {
            self.estimate(parts)
        } else {
            self.predict(parts)
        }
    }

    /// The images' share of a layout's tokens, scaled as [`Estimator::estimate`] scales them.
    pub fn images(&self, l: &super::assemble::ContextLayout) -> u64 {
        (l.tally.by_kind.images as f64 * self.kind_scales[IMAGE])
            .max(0.0)
            .round() as u64
    }

    /// The tokens of a prompt's prefix whose assembled messages are `assembled` tokens: what is sent before them
    /// (the overhead) and them at the path's one scale. What a cache holding that prefix holds.
    pub fn prefix(&self, assembled: u64) -> u64 {
        (self.overhead + assembled as f64 * self.scale)
            .max(0.0)
            .round() as u64
    }

    /// The next request ([`predicted_from`] the last measured reply, when no compaction that lays the context out
    /// anew came after it). What `send` compacts by.
    pub fn predict(&self, assembled: Parts) -> u64 {
        let last = self
            .last_measured
            .zip(self.last_parts)
            .map(|((_, m), a)| (m, a));
        predicted_from(last, assembled, &self.kind_scales, self.estimate(assembled))
    }
}

/// The next request's prompt from the last measured one (its prompt, and what was assembled before it): that
/// prompt plus what was assembled since, each kind scaled; `estimate` (from scratch) when there is none to go
/// from: nothing measured yet, or a compaction laid the context out again since the last measurement (that prompt
/// was of a context that is gone). On the samples' harness compactions, the first prompt after one is closer from
/// scratch: opencode's −30.6% → +1.1%, pi's −12.8% → −1.2% and −9.9% → −7.4%.
pub fn predicted_from(
    last: Option<(u64, Parts)>,
    assembled: Parts,
    scales: &Scales,
    estimate: u64,
) -> u64 {
    match last {
        Some((m, a)) => (m as f64 + assembled.scaled_since(&a, scales))
            .max(0.0)
            .round() as u64,
        None => estimate,
    }
}

/// One conversation's samples, with what tells its hidden context apart.
#[derive(Debug, Clone)]
pub struct ReplayedConversation {
    pub id: String,
    pub harness: String,
    pub version: Option<String>,
    pub subagent: bool,
    /// The conversation a subagent's is linked to (an Aider editor's, its architect's): its siblings were sent
    /// what it was sent beside the messages most nearly.
    pub parent: Option<String>,
    pub samples: Vec<Sample>,
    /// The replies of models of no known family counted with each other tokenizer they may count with
    /// ([`candidates`]): which one the model counts with is learned from the measurements.
    pub alternatives: Vec<(Tokenizer, Vec<Sample>)>,
    /// Path indexes of the harness's own compactions, and their ids.
    pub compactions: Vec<usize>,
    /// Path indexes of every compaction that lays the context out anew (the harness's, a summary, a snapshot): a
    /// prompt measured before one does not predict the next.
    pub markers: Vec<usize>,
    pub compaction_ids: BTreeMap<usize, String>,
    /// The tokens of what the harness recorded it sends beside the messages ([`recorded_beside`]):
    /// the part of a session's overhead known before any reply is measured.
    pub beside: u64,
}

/// What a harness recorded of what it sends beside the messages (its system prompt, tool definitions), from a
/// conversation's meta: its reader lists where under `sends_beside` (JSON pointers into the meta: Codex's base
/// instructions and the app's dynamic tools, sent with every request; Claude Code 2.1.33x's system prompt and tools
/// of its first request). Empty where the harness records none of it: the overhead its replies measured is all
/// there is.
pub fn recorded_beside(meta: &serde_json::Value) -> String {
    let pointers = meta
        .get("sends_beside")
        .and_then(serde_json::Value::as_array);
    pointers
        .into_iter()
        .flatten()
        .filter_map(|p| meta.pointer(p.as_str()?))
        .map(|v| match (v.as_str(), text_blocks(v)) {
            (Some(t), _) => t.to_string(),
            (None, Some(t)) => t,
            (None, None) => v.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of a list of text blocks (a system prompt as the Messages API takes it: Claude Code's), None for
/// anything else (tool definitions: sent as JSON).
fn text_blocks(v: &serde_json::Value) -> Option<String> {
    v.as_array()?
        .iter()
        .map(|b| b.get("text")?.as_str())
        .collect::<Option<Vec<_>>>()
        .map(|t| t.join("\n"))
}

/// Samples of every conversation of the store (conversations whose path cannot be read are left out and named in
/// the second list).
pub fn store_samples(
    store: &Store,
) -> Result<(Vec<ReplayedConversation>, Vec<String>), StoreError> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for c in store.conversations()? {
        let own = |m: &str| crate::models::tokenizer(m);
        match PathView::load(store, &c.id, None)
            .and_then(|v| Ok((samples(Some(store), &v, &own)?, v)))
        {
            Ok((samples, v)) => {
                // a model of no known family is counted with each tokenizer it may count with, too
                let unknown: Vec<&str> = samples
                    .iter()
                    .map(|s| &*s.model)
                    .filter(|m| candidates(m).len() > 1)
                    .collect();
                let mut alternatives = Vec::new();
                if let Some(first) = unknown.first() {
                    for tk in candidates(first).into_iter().skip(1) {
                        let with = |m: &str| {
                            if candidates(m).contains(&tk) {
                                tk
                            } else {
                                crate::models::tokenizer(m)
                            }
                        };
                        let alt: Vec<Sample> = self::samples(Some(store), &v, &with)?
                            .into_iter()
                            .filter(|s| unknown.contains(&&*s.model))
                            .collect();
                        alternatives.push((tk, alt));
                    }
                }
                let markers: Vec<usize> = (0..v.len()).filter(|&i| v.lays_out_anew(i)).collect();
                let compactions: Vec<usize> = markers
                    .iter()
                    .copied()
                    .filter(|&i| v.is_harness_compaction(i))
                    .collect();
                let compaction_ids = compactions
                    .iter()
                    .map(|&i| (i, v.heads[i].id.clone()))
                    .collect();
                let meta = store.conversation_meta(&c.id)?;
                let beside = crate::tokens::text(&recorded_beside(&meta));
                let parent = crate::model::CairnMeta::linked_to(&meta)
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_string);
                out.push(ReplayedConversation {
                    id: c.id,
                    harness: v.harness,
                    version: v.harness_version,
                    subagent: v.subagent,
                    parent,
                    samples,
                    alternatives,
                    compactions,
                    markers,
                    compaction_ids,
                    beside,
                })
            }
            Err(e) => skipped.push(format!("{}: {e}", c.id)),
        }
    }
    Ok((out, skipped))
}

/// A model's calibration: the fit and its quality (median absolute error of the raw estimate and of the fit, in
/// percent).
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub model: String,
    pub harness: String,
    pub samples: usize,
    pub sessions: usize,
    /// None: too few samples; the defaults are used.
    pub fit: Option<Fit>,
    pub error_before: f64,
    pub error_after: f64,
}

/// Fits every model on the store's measured replies and keeps the fits (models with too few samples keep the
/// defaults).
pub fn calibrate(store: &mut Store) -> Result<(Vec<Calibration>, Vec<String>), StoreError> {
    let (all, skipped) = store_samples(store)?;
    // each model's sessions per harness, counted with each tokenizer it may count with (its own first)
    type Counted = BTreeMap<Tokenizer, Vec<Vec<Sample>>>;
    let mut by_model: BTreeMap<(String, String), Counted> = BTreeMap::new();
    for c in all {
        let own = c.samples.iter().map(|s| crate::models::tokenizer(&s.model));
        let mut per: BTreeMap<(String, String, Tokenizer), Vec<Sample>> = BTreeMap::new();
        for (s, tk) in c.samples.iter().zip(own) {
            per.entry((s.harness.to_string(), s.model.to_string(), tk))
                .or_default()
                .push(s.clone());
        }
        for (tk, v) in c.alternatives {
            for s in v {
                per.entry((s.harness.to_string(), s.model.to_string(), tk))
                    .or_default()
                    .push(s);
            }
        }
        for ((h, m, tk), v) in per {
            by_model
                .entry((h, m))
                .or_default()
                .entry(tk)
                .or_default()
                .push(v);
        }
    }
    let mut out = Vec::new();
    let mut fits = Fits::new();
    for ((harness, model), counted) in by_model {
        let own = crate::models::tokenizer(&model);
        // the tokenizer whose fit explains the measurements best (the model's own where none fits better)
        let results: Vec<(Tokenizer, Option<Fit>, f64, f64, usize, usize)> = counted
            .iter()
            .map(|(tk, sessions)| {
                let (f, before, after) = calibrated(sessions);
                let n = sessions.iter().map(Vec::len).sum();
                (*tk, f, before, after, n, sessions.len())
            })
            .collect();
        let best = explains_best(own, results.iter().map(|r| (r.0, r.1.is_some(), r.3)));
        let pick = best
            .and_then(|tk| results.iter().find(|r| r.0 == tk))
            .or_else(|| results.iter().find(|r| r.0 == own))
            .or(results.first())
            .cloned();
        let Some((tk, mut f, before, after, samples, sessions)) = pick else {
            continue;
        };
        if let Some(f) = &mut f {
            // said only where the measurements chose among tokenizers
            f.tokenizer = (candidates(&model).len() > 1).then_some(tk);
            fits.insert(fit_key(&harness, &model), f.clone());
        }
        out.push(Calibration {
            samples,
            sessions,
            model,
            harness,
            fit: f,
            error_before: before * 100.0,
            error_after: after * 100.0,
        });
    }
    store.set_value(FITS_KEY, &json!(fits))?;
    Ok((out, skipped))
}

/// A model's fit on its sessions, and the median error of the raw estimate and of the fit (each stretch of one
/// overhead at its own mean overhead, as the fit took it).
fn calibrated(sessions: &[Vec<Sample>]) -> (Option<Fit>, f64, f64) {
    let refs: Vec<&[Sample]> = sessions.iter().map(Vec::as_slice).collect();
    let f = fit(&refs);
    let before = median(
        sessions
            .iter()
            .flatten()
            .map(|s| rel(s.assembled as f64, s.measured)),
    );
    let after = match &f {
        Some(f) => {
            let scales = f.scales();
            median(
                sessions
                    .iter()
                    .flat_map(|s| segments(s.iter()))
                    .flat_map(|seg| {
                        let off = seg
                            .iter()
                            .map(|(p, y)| *y as f64 - p.scaled(&scales))
                            .sum::<f64>()
                            / seg.len() as f64;
                        seg.into_iter()
                            .map(move |(p, y)| rel(off + p.scaled(&scales), y))
                    }),
            )
        }
        None => before,
    };
    (f, before, after)
}

fn rel(estimated: f64, measured: u64) -> f64 {
    ((estimated - measured as f64) / measured as f64).abs()
}

fn median(it: impl Iterator<Item = f64>) -> f64 {
    quantile(it.collect(), 0.5)
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let k = ((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1;
    v[k]
}

/// One reply of a replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplyRow {
    pub message: String,
    pub conversation: String,
    pub model: String,
    /// From scratch: the session's overhead (from its first measured reply) plus the context scaled.
    pub estimated: u64,
    pub measured: u64,
    /// `(estimated - measured) / measured`, from the nearest count a rounded measurement allows ([`Usage`]'s
    /// `precision`).
    ///
    /// [`Usage`]: crate::model::Usage
    pub error: f64,
    /// The next request as `send` predicts it: the last measured prompt of the session plus what was added
    /// since, scaled. None for a session's first measured reply (there is no last measured prompt: its figure is
    /// the estimate).
    pub predicted: Option<u64>,
    pub predicted_error: Option<f64>,
    /// Where the estimate's overhead came from.
    pub overhead: OverheadFrom,
}

/// Where a reply's estimate took the overhead (what the harness sends and does not record) from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverheadFrom {
    /// Measured in its own stretch of the session: an earlier reply with the same hidden context.
    Measured,
    /// The session's first measured reply: other sessions' overhead.
    Borrowed,
    /// The first reply after the harness changed what it sends unrecorded (Aider's files, a new run): the
    /// overhead measured before the change, which no longer holds. The file cannot tell by how much.
    Stale,
    /// The first reply after the harness changed what it sends to what an earlier stretch of the session sent (a
    /// new Aider run with the files of an earlier one): that stretch's overhead.
    SameSends,
}

/// A model's errors over some of its replies.
#[derive(Debug, Clone, Serialize)]
pub struct Errors {
    pub replies: usize,
    /// Of them, those predicted from an earlier measured prompt (the predicted errors are over these; 0 when none).
    pub predicted_replies: usize,
    pub median_abs_error: f64,
    pub p90_abs_error: f64,
    pub predicted_median_abs_error: f64,
    pub predicted_p90_abs_error: f64,
}

impl Errors {
    fn of(rows: &[&ReplyRow]) -> Errors {
        let errs: Vec<f64> = rows.iter().map(|r| r.error.abs()).collect();
        let perrs: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.predicted_error.map(f64::abs))
            .collect();
        Errors {
            replies: rows.len(),
            predicted_replies: perrs.len(),
            median_abs_error: round4(quantile(errs.clone(), 0.5)),
            p90_abs_error: round4(quantile(errs, 0.9)),
            predicted_median_abs_error: round4(quantile(perrs.clone(), 0.5)),
            predicted_p90_abs_error: round4(quantile(perrs, 0.9)),
        }
    }
}

/// The first measured prompt after a harness's compaction, as cairn predicts it (summary, kept messages,
/// overhead) against what the provider measured.
#[derive(Debug, Clone, Serialize)]
pub struct CompactionRow {
    /// The compaction.
    pub message: String,
    pub conversation: String,
    /// The harness that compacted (its reader's name: `aider`, `pi`, `opencode`, …).
    pub harness: String,
    /// The first measured reply after it.
    pub reply: String,
    pub predicted: u64,
    pub measured: u64,
    pub error: f64,
}

/// One harness's compactions: how far the first prompt after each was predicted from what was measured.
#[derive(Debug, Clone, Serialize)]
pub struct HarnessCompactions {
    pub harness: String,
    pub compactions: usize,
    pub median_abs_error: f64,
    pub max_abs_error: f64,
    /// The one furthest off.
    pub worst: String,
}

impl HarnessCompactions {
    /// Per harness, in name order.
    fn of(rows: &[CompactionRow]) -> Vec<HarnessCompactions> {
        let mut grouped: BTreeMap<&str, Vec<&CompactionRow>> = BTreeMap::new();
        for r in rows {
            grouped.entry(r.harness.as_str()).or_default().push(r);
        }
        grouped
            .into_iter()
            .filter_map(|(harness, rows)| {
                let worst = rows
                    .iter()
                    .max_by(|a, b| a.error.abs().total_cmp(&b.error.abs()))?;
                Some(HarnessCompactions {
                    harness: harness.to_string(),
                    compactions: rows.len(),
                    median_abs_error: round4(quantile(
                        rows.iter().map(|r| r.error.abs()).collect(),
                        0.5,
                    )),
                    max_abs_error: round4(worst.error.abs()),
                    worst: worst.message.clone(),
                })
            })
            .collect()
    }
}

/// The worst reply of a model.
#[derive(Debug, Clone, Serialize)]
pub struct Worst {
    pub message: String,
    pub estimated: u64,
    pub measured: u64,
}

/// One model's replay.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRow {
    pub model: String,
    pub replies: usize,
    pub median_abs_error: f64,
    pub p90_abs_error: f64,
    pub predicted_median_abs_error: f64,
    pub predicted_p90_abs_error: f64,
    /// How many replies were predicted from an earlier measured prompt (none: the predicted errors mean nothing).
    pub predicted_replies: usize,
    /// The same errors over the replies whose overhead was measured in their own stretch of the session
    /// ([`OverheadFrom::Measured`]): what cairn's estimate is worth where the file records everything sent
    /// but the harness's fixed overhead.
    pub measured_overhead: Errors,
    pub worst: Worst,
    /// How the estimate was made for this model: "calibrated" (scale from its other sessions) or "default".
    pub estimator: String,
}

/// A replay of conversations against what their providers measured.
#[derive(Debug, Clone, Serialize)]
pub struct Replay {
    pub models: Vec<ModelRow>,
    pub replies: Vec<ReplyRow>,
    pub compactions: Vec<CompactionRow>,
    /// The compactions summed up per harness.
    pub compactions_by_harness: Vec<HarnessCompactions>,
    /// Conversations that could not be read (named, then left out).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// Replays `only` (every conversation when None): each measured reply's estimate, made only from what came before
/// it in its session and from other sessions. A session's first measured reply has no overhead of its own yet: it
/// takes the overhead of the other sessions of the same harness most like it (same kind, subagent or not, and the
/// nearest harness version, whose system prompt and tools are most alike).
pub fn replay(store: &Store, only: Option<&str>) -> Result<Replay, StoreError> {
    let only = only.map(|c| store.resolve_conversation(c)).transpose()?;
    let (all, skipped) = store_samples(store)?;
    // sessions: a conversation's replies of one model, counted with each tokenizer the model's measurements choose
    // among ([`candidates`]): the first list is each model's own tokenizer
    let mut counted: Vec<(Tokenizer, Vec<Session>)> = Vec::new();
    let mut tokenizers: Vec<Tokenizer> = vec![];
    for c in &all {
        for (tk, _) in &c.alternatives {
            if !tokenizers.contains(tk) {
                tokenizers.push(*tk);
            }
        }
    }
    counted.push((Tokenizer::Estimate, sessions_of(&all, None)));
    for tk in tokenizers {
        counted.push((tk, sessions_of(&all, Some(tk))));
    }
    // each session counted otherwise is replayed again; the others are the first list's
    let runs: Vec<Vec<Vec<Replayed>>> = counted
        .iter()
        .enumerate()
        .map(|(k, (_, sessions))| replay_sessions(sessions, only.as_deref(), k > 0))
        .collect();
    let mut methods: BTreeMap<String, bool> = BTreeMap::new();
    let mut replies = Vec::new();
    let mut compactions = Vec::new();
    let (_, base) = &counted[0];
    for (i, (conv, model, ..)) in base.iter().enumerate() {
        if only.as_deref().is_some_and(|o| o != conv.id) {
            continue;
        }
        // the tokenizers this session was counted with (its own first)
        let tried: Vec<usize> = (0..counted.len())
            .filter(|&k| k == 0 || counted[k].1[i].3)
            .collect();
        // the model's other sessions' mean error, per tokenizer: the same for every reply of this session
        let others: Vec<Option<f64>> = (0..counted.len())
            .map(|k| {
                let errors: Vec<f64> = counted[k]
                    .1
                    .iter()
                    .enumerate()
                    .filter(|(j, (c, m, ..))| *j != i && c.id != conv.id && m == model)
                    .flat_map(|(j, _)| runs[k][j].iter())
                    .filter(|r| r.row.overhead == OverheadFrom::Measured)
                    .map(|r| r.row.error.abs())
                    .collect();
                (!errors.is_empty()).then(|| errors.iter().sum::<f64>() / errors.len() as f64)
            })
            .collect();
        let rows = &runs[0][i];
        for (n, _) in rows.iter().enumerate() {
            // each reply takes the tokenizer that estimated best what was measured before it: this session's
            // earlier replies (their overhead measured), the recent ones weighing most (a session's text changes
            // kind as it goes), and the model's other sessions, as much as one reply of its own
            let score = |k: usize| -> f64 {
                let mut sum = 0.0;
                let mut weight = 0.0;
                for (j, r) in runs[k][i][..n].iter().enumerate() {
                    if r.row.overhead == OverheadFrom::Measured {
                        let w = 0.5f64.powf((n - j) as f64 / CHOICE_HALF_LIFE);
                        sum += w * r.row.error.abs();
                        weight += w;
                    }
                }
                if let Some(mean) = others[k] {
                    sum += mean;
                    weight += 1.0;
                }
                if weight > 0.0 { sum / weight } else { 0.0 }
            };
            let best = tried
                .iter()
                .copied()
                .map(|k| (k, score(k)))
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
                .map_or(0, |(k, _)| k);
            let r = &runs[best][i][n];
            let fitted = r.fitted;
            if fitted || !methods.contains_key(*model) {
                methods.insert(model.to_string(), fitted);
            }
            replies.push(r.row.clone());
            compactions.extend(r.compaction.clone());
        }
    }
    let models = per_model(&replies, &methods);
    for r in &mut replies {
        r.error = round4(r.error);
        r.predicted_error = r.predicted_error.map(round4);
    }
    Ok(Replay {
        models,
        replies,
        compactions_by_harness: HarnessCompactions::of(&compactions),
        compactions,
        skipped,
    })
}

/// How many replies back a reply's error weighs half as much when a session's replies choose the tokenizer
/// its next is counted with.
const CHOICE_HALF_LIFE: f64 = 8.0;

/// A conversation's replies of one model: the conversation, the model, its measured replies, and whether they were
/// counted with another tokenizer than the model's own ([`ReplayedConversation::alternatives`]).
type Session<'a> = (&'a ReplayedConversation, &'a str, Vec<&'a Sample>, bool);

/// The sessions of `all`, each model's replies counted with its own tokenizer, or with `tk` where the
/// conversation counted them so too.
fn sessions_of(all: &[ReplayedConversation], tk: Option<Tokenizer>) -> Vec<Session<'_>> {
    let mut sessions = Vec::new();
    for c in all {
        let alt = tk.and_then(|t| c.alternatives.iter().find(|(a, _)| *a == t));
        let mut per: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
        for s in &c.samples {
            per.entry(&*s.model).or_default().push(s);
        }
        let mut by: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
        for s in alt.iter().flat_map(|(_, v)| v) {
            by.entry(&*s.model).or_default().push(s);
        }
        for (m, v) in per {
            match by.remove(m) {
                Some(a) if a.len() == v.len() => sessions.push((c, m, a, true)),
                _ => sessions.push((c, m, v, false)),
            }
        }
    }
    sessions
}

/// One reply replayed: its row, the harness compaction it is the first measured prompt after (if any), and
/// whether its model's estimator was fitted on other sessions.
struct Replayed {
    row: ReplyRow,
    compaction: Option<CompactionRow>,
    fitted: bool,
}

/// Every session's replies estimated from scratch and predicted from the last measurement, each with only what
/// its session measured before it and what other sessions of the model and harness measured (`only`: one
/// conversation's; `recounted_only`: the sessions counted with another tokenizer than their model's own; the others
/// are left empty).
fn replay_sessions(
    sessions: &[Session],
    only: Option<&str>,
    recounted_only: bool,
) -> Vec<Vec<Replayed>> {
    // each session's own overhead at the model's default scale, beyond what its harness recorded sending, for the
    // first-reply prior
    let own: Vec<f64> = sessions
        .iter()
        .map(|(c, m, v, _)| {
            v[0].measured as f64 - default_scale(m) * (v[0].assembled + c.beside) as f64
        })
        .collect();
    let mut out = Vec::new();
    for (conv, model, samples, recounted) in sessions {
        let mut rows = Vec::new();
        if recounted_only && !recounted {
            out.push(rows);
            continue;
        }
        // a model of unknown family is replayed whole: which tokenizer its other sessions chose is evidence
        if only.is_some_and(|o| o != conv.id) && candidates(model).len() == 1 {
            out.push(rows);
            continue;
        }
        let others: Vec<Vec<Sample>> = sessions
            .iter()
            .filter(|(c, m, ..)| c.id != conv.id && m == model && c.harness == conv.harness)
            .map(|(_, _, v, _)| v.iter().map(|s| (*s).clone()).collect())
            .collect();
        let refs: Vec<&[Sample]> = others.iter().map(Vec::as_slice).collect();
        let f = fit(&refs);
        let prior_scales = f
            .as_ref()
            .map_or_else(|| [default_scale(model); KINDS], Fit::scales);
        let after = own_scale_after(model, f.is_some());
        let prior =
            prior_overhead(sessions, &own, conv) + default_scale(model) * conv.beside as f64;
        for (n, s) in samples.iter().enumerate() {
            let est = session_estimate(samples, n, &prior_scales, prior, after);
            let predicted = (n > 0).then(|| {
                let last = samples[n - 1];
                let relaid = conv.markers.iter().any(|&c| last.index < c && c < s.index);
                let from = (!relaid && est.overhead != OverheadFrom::SameSends)
                    .then_some((last.measured, last.parts));
                predicted_from(from, s.parts, &est.scales, est.estimated)
            });
            // the first measured prompt after a harness compaction
            let compaction = conv
                .compactions
                .iter()
                .find(|c| **c < s.index && (n == 0 || samples[n - 1].index < **c))
                .map(|c| CompactionRow {
                    message: conv.compaction_ids.get(c).cloned().unwrap_or_default(),
                    conversation: conv.id.clone(),
                    harness: conv.harness.clone(),
                    reply: s.message.clone(),
                    predicted: est.estimated,
                    measured: s.measured,
                    error: round4(off(est.estimated, s)),
                });
            rows.push(Replayed {
                row: ReplyRow {
                    message: s.message.clone(),
                    conversation: conv.id.clone(),
                    model: model.to_string(),
                    estimated: est.estimated,
                    measured: s.measured,
                    error: off(est.estimated, s),
                    predicted,
                    predicted_error: predicted.map(|p| off(p, s)),
                    overhead: est.overhead,
                },
                compaction,
                fitted: f.is_some(),
            });
        }
        out.push(rows);
    }
    out
}

/// Each model's errors over its replies (estimated from scratch and predicted from the last measurement), its
/// worst reply, and whether its estimator was calibrated on other sessions.
fn per_model(replies: &[ReplyRow], methods: &BTreeMap<String, bool>) -> Vec<ModelRow> {
    let mut models = Vec::new();
    let mut grouped: BTreeMap<&str, Vec<&ReplyRow>> = BTreeMap::new();
    for r in replies {
        grouped.entry(r.model.as_str()).or_default().push(r);
    }
    for (model, rows) in grouped {
        let all = Errors::of(&rows);
        let own: Vec<&ReplyRow> = rows
            .iter()
            .copied()
            .filter(|r| r.overhead == OverheadFrom::Measured)
            .collect();
        let worst = rows
            .iter()
            .max_by(|a, b| a.error.abs().total_cmp(&b.error.abs()))
            .map(|r| Worst {
                message: r.message.clone(),
                estimated: r.estimated,
                measured: r.measured,
            });
        let Some(worst) = worst else { continue };
        models.push(ModelRow {
            model: model.to_string(),
            replies: all.replies,
            median_abs_error: all.median_abs_error,
            p90_abs_error: all.p90_abs_error,
            predicted_median_abs_error: all.predicted_median_abs_error,
            predicted_p90_abs_error: all.predicted_p90_abs_error,
            predicted_replies: all.predicted_replies,
            measured_overhead: Errors::of(&own),
            worst,
            estimator: if methods.get(model).copied().unwrap_or(false) {
                "calibrated".into()
            } else {
                "default".into()
            },
        });
    }
    models
}

/// How far an estimate is from what the provider measured, relative to it: from the nearest count the measurement
/// allows (a count the harness rounded, Aider's `13k`, is any of 12,500 to 13,500; an estimate among them is no
/// error).
fn off(estimated: u64, s: &Sample) -> f64 {
    let m = s.measured as f64;
    let half = s.precision.max(1) as f64 / 2.0;
    let e = estimated as f64;
    let nearest = if s.precision <= 1 {
        m
    } else {
        e.clamp(m - half, m + half)
    };
    (e - nearest) / m
}

/// A reply's estimate from what its session measured before it.
struct SessionEstimate {
    scales: Scales,
    estimated: u64,
    overhead: OverheadFrom,
}

/// Fewer measured replies than this before a reply, and a session's own scale is not trusted over a prior that
/// knows something (a fit on the model's other sessions, or its tokenizer's known scale).
pub const MIN_SESSION_SAMPLES: usize = 3;

/// Where a model's prior is a guess (no session of it fitted, and a tokenizer nobody published: a third party's
/// model, or one released after the catalog), the first measured step of a session already says more: two
/// measured replies give one slope.
pub const MIN_SESSION_SAMPLES_UNKNOWN: usize = 2;

/// How many of a session's measured replies must come before its own scale is used over the prior: fewer where
/// the prior is only a guess ([`MIN_SESSION_SAMPLES_UNKNOWN`]).
pub fn own_scale_after(model: &str, fitted: bool) -> usize {
    if fitted || crate::models::family(model) != crate::models::Family::Other {
        MIN_SESSION_SAMPLES
    } else {
        MIN_SESSION_SAMPLES_UNKNOWN
    }
}

/// The scales a session's own measurements tell, from the replies before `n`, once there are `after` of them
/// ([`own_scale_after`]; else `prior`): each kind's slope of measured against assembled ([`kind_scales`]), drawn
/// toward the one slope of the measured total against the assembled total, so a kind the session holds little of
/// takes the scale the session as a whole tells.
fn session_scales(samples: &[&Sample], n: usize, prior: &Scales, after: usize) -> Scales {
    let before = &samples[..n];
    if before.len() < after {
        return *prior;
    }
    // each stretch with one overhead (between the changes the harness made unseen) fits as its own
    let ps = segments(before.iter().copied());
    match overall_slope(&ps) {
        Some(one) => sessions_kind_scales(&ps, &[one; KINDS]),
        None => *prior,
    }
}

/// Reply `n` of a session estimated from scratch with only what was measured before it: the session's scale so
/// far, its overhead from its first measured reply at that scale (after a change the harness made unseen, from the
/// first reply measured after it: [`anchor`]; the first reply: `prior_overhead`).
fn session_estimate(
    samples: &[&Sample],
    n: usize,
    prior_scales: &Scales,
    prior_overhead: f64,
    after: usize,
) -> SessionEstimate {
    // the session's own measurements beat other sessions' fit once there are enough of them: a model nobody
    // fitted (released yesterday, or a third party's through a harness) is learned within its first replies
    let scales = session_scales(samples, n, prior_scales, after);
    let s = samples[n];
    let unrecorded = unrecorded_size(samples, n, &scales);
    let (overhead, from) = match anchor(&samples[..n], s.segment, s.sends.as_deref()) {
        None => (prior_overhead, OverheadFrom::Borrowed),
        Some((a, from)) => (
            segment_overhead(&samples[..n], a, &scales, unrecorded),
            from,
        ),
    };
    let held = if s.unrecorded.is_some() {
        unrecorded
    } else {
        0.0
    };
    let estimated = (overhead + s.parts.scaled(&scales) + held).max(0.0).round() as u64;
    SessionEstimate {
        scales,
        estimated,
        overhead: from,
    }
}

/// The overhead a reply measured: what it measured beyond its context, each kind scaled, and beyond the
/// unrecorded compaction text it held (`unrecorded` tokens, when it held one).
fn overhead_at(s: &Sample, scales: &Scales, unrecorded: f64) -> f64 {
    let held = if s.unrecorded.is_some() {
        unrecorded
    } else {
        0.0
    };
    s.measured as f64 - s.parts.scaled(scales) - held
}

/// The overhead a segment measured, from its first reply `a` among `samples` on: an exact measurement gives it;
/// a rounded one (Aider's `13k`) gives a range, which each later reply of the segment narrows where the two
/// overlap. The middle of what is left.
fn segment_overhead(samples: &[&Sample], a: usize, scales: &Scales, unrecorded: f64) -> f64 {
    let range = |s: &Sample| {
        let o = overhead_at(s, scales, unrecorded);
        let half = if s.precision <= 1 {
            0.0
        } else {
            s.precision as f64 / 2.0
        };
        (o - half, o + half)
    };
    let segment = samples[a].segment;
    let (mut lo, mut hi) = range(samples[a]);
    for s in samples[a + 1..].iter().filter(|s| s.segment == segment) {
        let (l, h) = range(s);
        if lo.max(l) <= hi.min(h) {
            (lo, hi) = (lo.max(l), hi.min(h));
        }
    }
    (lo + hi) / 2.0
}

/// What a compaction's text the harness sent but never recorded (Aider's summary) costs in this session, from the
/// replies before `n` that held one while the reply their overhead was measured at did not: the mean of what each
/// measured beyond its estimate without it (none below zero). Zero when no such reply was measured: the marker's
/// own text stands in for it.
fn unrecorded_size(samples: &[&Sample], n: usize, scales: &Scales) -> f64 {
    let mut sum = 0.0;
    let mut k = 0usize;
    for (j, s) in samples[..n].iter().enumerate() {
        if s.unrecorded.is_none() {
            continue;
        }
        let Some((a, from)) = anchor(&samples[..j], s.segment, s.sends.as_deref()) else {
            continue;
        };
        if from == OverheadFrom::Stale || samples[a].unrecorded.is_some() {
            continue;
        }
        sum += s.measured as f64
            - segment_overhead(&samples[..j], a, scales, 0.0)
            - s.parts.scaled(scales);
        k += 1;
    }
    if k == 0 {
        0.0
    } else {
        (sum / k as f64).max(0.0)
    }
}

/// How unlike another session is, least first: of another subagent-ness, of another parent, the version's
/// distance part by part.
type Likeness = (bool, bool, Vec<u64>);

/// The overhead a session's first reply is estimated with: the mean own overhead of the other sessions of its
/// harness most like it (same subagent-ness first, then a subagent's siblings, of which the nearest in the order
/// they were read, then the nearest version); for a harness no other session was written by, the median own
/// overhead of every other session (an agent's system prompt and tools are of the same order whichever harness
/// sends them; nothing is a worse guess than that); none when there are none.
fn prior_overhead(sessions: &[Session], own: &[f64], conv: &ReplayedConversation) -> f64 {
    let version = |v: &Option<String>| -> Vec<u64> {
        v.as_deref()
            .unwrap_or("")
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    let mine = version(&conv.version);
    let distance = |c: &ReplayedConversation| -> Likeness {
        let theirs = version(&c.version);
        let d = (0..mine.len().max(theirs.len()))
            .map(|k| {
                mine.get(k)
                    .unwrap_or(&0)
                    .abs_diff(*theirs.get(k).unwrap_or(&0))
            })
            .collect();
        (c.subagent != conv.subagent, c.parent != conv.parent, d)
    };
    let candidates: Vec<(usize, Likeness)> = sessions
        .iter()
        .enumerate()
        .filter(|(_, (c, ..))| c.id != conv.id && c.harness == conv.harness)
        .map(|(j, (c, ..))| (j, distance(c)))
        .collect();
    let Some(best) = candidates.iter().map(|(_, d)| d).min() else {
        let others: Vec<f64> = sessions
            .iter()
            .zip(own)
            .filter(|((c, ..), _)| c.id != conv.id)
            .map(|(_, &o)| o.max(0.0))
            .collect();
        return quantile(others, 0.5);
    };
    let near: Vec<usize> = candidates
        .iter()
        .filter(|(_, d)| d == best)
        .map(|(j, _)| *j)
        .collect();
    // a subagent's siblings: the one read just before it (else just after) sent the most alike (an Aider
    // editor's files grow through the session)
    if conv.parent.is_some() && !best.1 {
        let me = sessions
            .iter()
            .position(|(c, ..)| c.id == conv.id)
            .unwrap_or(0);
        if let Some(j) = near.iter().min_by_key(|&&j| (j.abs_diff(me), j > me)) {
            return own[*j];
        }
    }
    near.iter().map(|&j| own[j]).sum::<f64>() / near.len() as f64
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(assembled: u64, measured: u64) -> Sample {
        Sample {
            index: 0,
            message: String::new(),
            model: "m".into(),
            harness: "pi".into(),
            assembled,
            parts: Parts::text(assembled),
            measured,
            precision: 0,
            segment: 0,
            sends: None,
            unrecorded: None,
        }
    }

    #[test]
    fn a_rounded_measurement_is_a_range_and_an_estimate_in_it_is_no_error() {
        let exact = s(0, 13_000);
        assert_eq!(off(13_400, &exact), 400.0 / 13_000.0);
        let rounded = Sample {
            precision: 1_000,
            ..s(0, 13_000)
        };
        assert_eq!(off(13_400, &rounded), 0.0);
        assert_eq!(off(12_500, &rounded), 0.0);
        assert_eq!(off(14_000, &rounded), 500.0 / 13_000.0);
        assert_eq!(off(12_000, &rounded), -500.0 / 13_000.0);
    }

    #[test]
    fn after_a_change_the_harness_made_unseen_the_overhead_is_measured_again() {
        // 5k of overhead, then a file of 8k added to what the harness sends beside the messages
        let mut v: Vec<Sample> = (0..4).map(|i| s(1000 * i, 5_000 + 1000 * i)).collect();
        v.extend((4..8).map(|i| Sample {
            segment: 1,
            ..s(1000 * i, 13_000 + 1000 * i)
        }));
        let refs: Vec<&Sample> = v.iter().collect();
        let prior = [1.0; KINDS];
        // the reply right after the change: only what was measured before it, the old overhead
        assert_eq!(
            session_estimate(&refs, 4, &prior, 0.0, MIN_SESSION_SAMPLES).estimated,
            9_000
        );
        // the ones after it: the overhead of the first reply measured after the change, the scale not bent by it
        assert_eq!(
            session_estimate(&refs, 6, &prior, 0.0, MIN_SESSION_SAMPLES).estimated,
            19_000
        );
        assert_eq!(
            anchor(&refs[..6], 1, None),
            Some((4, OverheadFrom::Measured))
        );
        assert_eq!(anchor(&refs[..4], 1, None), Some((0, OverheadFrom::Stale)));
        assert_eq!(segments(v.iter()).len(), 2);
        let f = fit(&[&v]).unwrap();
        assert!((f.scale - 1.0).abs() < 1e-9, "{f:?}");
        // one session, which starts with its first stretch's overhead
        assert_eq!(f.sessions, 1);
        assert!((f.overhead - 5_000.0).abs() < 1e-6, "{f:?}");
    }

    #[test]
    fn a_change_back_to_what_an_earlier_stretch_sent_takes_its_overhead() {
        // a run with a file (5k of overhead), one without it (3k), then the file again: a new run, or dropped and
        // added back
        let with: Option<Arc<str>> = Some("m\na.rs".into());
        let mut v: Vec<Sample> = (0..3)
            .map(|i| Sample {
                sends: with.clone(),
                ..s(1000 * i, 5_000 + 1000 * i)
            })
            .collect();
        v.extend((3..6).map(|i| Sample {
            segment: 1,
            sends: Some("m".into()),
            ..s(1000 * i, 3_000 + 1000 * i)
        }));
        v.extend((6..8).map(|i| Sample {
            segment: 2,
            sends: with.clone(),
            ..s(1000 * i, 5_000 + 1000 * i)
        }));
        let refs: Vec<&Sample> = v.iter().collect();
        let prior = [1.0; KINDS];
        let e = session_estimate(&refs, 6, &prior, 0.0, MIN_SESSION_SAMPLES);
        assert_eq!((e.estimated, e.overhead), (11_000, OverheadFrom::SameSends));
        // what it sends not named: the overhead before the change, stale
        let unnamed: Vec<Sample> = v
            .iter()
            .cloned()
            .map(|x| Sample { sends: None, ..x })
            .collect();
        let refs: Vec<&Sample> = unnamed.iter().collect();
        let e = session_estimate(&refs, 6, &prior, 0.0, MIN_SESSION_SAMPLES);
        assert_eq!((e.estimated, e.overhead), (9_000, OverheadFrom::Stale));
    }

    #[test]
    fn rounded_measurements_of_one_stretch_narrow_its_overhead() {
        // 5,300 of overhead; each reply's prompt printed to the thousand (`13k`): each alone allows ±500
        let v: Vec<Sample> = [(1_000, 6_000), (2_700, 8_000), (4_400, 10_000)]
            .iter()
            .map(|&(a, m)| Sample {
                precision: 1_000,
                ..s(a, m)
            })
            .collect();
        let refs: Vec<&Sample> = v.iter().collect();
        let one = [1.0; KINDS];
        // the first alone: 4,500..5,500
        assert_eq!(segment_overhead(&refs[..1], 0, &one, 0.0), 5_000.0);
        // with the second (4,800..5,800): 4,800..5,500; with the third (5,100..6,100): 5,100..5,500
        assert_eq!(segment_overhead(&refs[..2], 0, &one, 0.0), 5_150.0);
        assert_eq!(segment_overhead(&refs, 0, &one, 0.0), 5_300.0);
        // exact measurements: the first reply's, whatever follows
        let exact: Vec<Sample> = [(1_000, 6_000), (2_000, 7_100)]
            .iter()
            .map(|&(a, m)| s(a, m))
            .collect();
        let refs: Vec<&Sample> = exact.iter().collect();
        assert_eq!(segment_overhead(&refs, 0, &one, 0.0), 5_000.0);
    }

    #[test]
    fn a_summary_the_harness_never_recorded_costs_what_the_replies_after_earlier_ones_measured() {
        // 5k of overhead; after each summary (its stand-in counted as nothing) the provider measured 1,200 more
        let mut v: Vec<Sample> = (0..3).map(|i| s(1000 * i, 5_000 + 1000 * i)).collect();
        v.extend((3..6).map(|i| Sample {
            unrecorded: Some(2),
            ..s(1000 * i, 6_200 + 1000 * i)
        }));
        let refs: Vec<&Sample> = v.iter().collect();
        let one = [1.0; KINDS];
        assert_eq!(unrecorded_size(&refs, 3, &one), 0.0);
        assert_eq!(unrecorded_size(&refs, 4, &one), 1_200.0);
        // the first reply after a summary is estimated without it (nothing measured one yet), the next with it
        assert_eq!(
            session_estimate(&refs, 3, &one, 0.0, MIN_SESSION_SAMPLES).estimated,
            8_000
        );
        assert_eq!(
            session_estimate(&refs, 4, &one, 0.0, MIN_SESSION_SAMPLES).estimated,
            10_200
        );
        // a stretch whose overhead was measured after a summary takes the summary out of it
        let after: Vec<Sample> = v
            .iter()
            .cloned()
            .chain(std::iter::once(Sample {
                segment: 1,
                unrecorded: Some(2),
                ..s(7000, 14_200)
            }))
            .chain(std::iter::once(Sample {
                segment: 1,
                ..s(8000, 14_000)
            }))
            .collect();
        let refs: Vec<&Sample> = after.iter().collect();
        assert_eq!(
            session_estimate(&refs, 7, &one, 0.0, MIN_SESSION_SAMPLES).estimated,
            14_000
        );
    }

    #[test]
    fn a_first_reply_borrows_the_overhead_of_its_harness_else_of_every_session() {
        let conv = |id: &str, harness: &str, version: &str| ReplayedConversation {
            id: id.into(),
            harness: harness.into(),
            version: Some(version.into()),
            subagent: false,
            parent: None,
            samples: Vec::new(),
            alternatives: Vec::new(),
            compactions: Vec::new(),
            markers: Vec::new(),
            compaction_ids: BTreeMap::new(),
            beside: 0,
        };
        let cs = [
            conv("a", "claude-code", "2.1.100"),
            conv("b", "claude-code", "2.0.5"),
            conv("c", "pi", "0.40"),
            conv("d", "codex", "0.140"),
        ];
        let sessions: Vec<Session> = cs.iter().map(|c| (c, "m", Vec::new(), false)).collect();
        let own = [20_000.0, 14_000.0, 3_000.0, 16_000.0];
        let new_cc = conv("e", "claude-code", "2.1.120");
        assert_eq!(
            prior_overhead(&sessions, &own, &new_cc),
            20_000.0,
            "the nearest version of its harness"
        );
        // a harness nobody else wrote: the median of every other session, not nothing
        assert_eq!(prior_overhead(&sessions, &own, &cs[3]), 14_000.0);
        assert_eq!(prior_overhead(&sessions[3..], &own[3..], &cs[3]), 0.0);
        // subagents: their siblings first, the one read just before (an Aider editor's files grow)
        let sub = |id: &str, parent: &str| ReplayedConversation {
            subagent: true,
            parent: Some(parent.into()),
            ..conv(id, "aider", "")
        };
        let cs = [
            sub("e1", "x"),
            sub("f1", "y"),
            sub("e2", "x"),
            sub("e3", "x"),
            sub("e4", "x"),
        ];
        let sessions: Vec<Session> = cs.iter().map(|c| (c, "m", Vec::new(), false)).collect();
        let own = [1_000.0, 9_000.0, 2_000.0, 3_000.0, 4_000.0];
        assert_eq!(prior_overhead(&sessions, &own, &cs[3]), 2_000.0);
        assert_eq!(
            prior_overhead(&sessions, &own, &cs[0]),
            2_000.0,
            "none before it"
        );
        // a subagent with no sibling: the other subagents of its harness
        assert_eq!(prior_overhead(&sessions, &own, &cs[1]), 2_500.0);
    }

    #[test]
    fn a_fit_finds_the_scale_whatever_each_session_overhead() {
        let a: Vec<Sample> = (1..20).map(|i| s(i * 1000, 15_000 + i * 1100)).collect();
        let b: Vec<Sample> = (1..20).map(|i| s(i * 900, 30_000 + i * 990)).collect();
        let f = fit(&[&a, &b]).unwrap();
        assert!((f.scale - 1.1).abs() < 0.01, "{f:?}");
        assert!((f.overhead - 22_500.0).abs() < 50.0, "{f:?}");
        assert_eq!(fit(&[&a[..2]]), None);
    }

    #[test]
    fn quantiles_take_the_nearest_rank() {
        assert_eq!(quantile(vec![0.3, 0.1, 0.2], 0.5), 0.2);
        assert_eq!(quantile((1..=10).map(f64::from).collect(), 0.9), 9.0);
        assert_eq!(quantile(vec![], 0.9), 0.0);
    }
}
