//! What the model sees, and what each way of taking context back would leave: the one place where a figure about a
//! conversation's context is defined.
//!
//! Why one module: the context a model is sent is not the stored path. A harness may have compacted it already
//! (Claude Code's `compact_boundary`, pi's `compaction` entries, Codex's `compacted` items), and cairn's own rungs
//! leave markers that elide results, prune images, draw the middle as pages or replace it with a summary. Every
//! reader of "what the model sees" (`/context`, the comparison, the snapshot preview, the summary request,
//! calibration, replay, `send`) takes it from [`assemble::layout`], so they cannot disagree.
//!
//! The parts:
//! - [`marker`]: the typed compaction markers, read and written in one place ([`Marker::of`]).
//! - [`view`]: a path as stored heads and measures, markers resolved; bodies decoded only on demand.
//! - [`assemble`]: the layout of what is sent (pieces) and its tally from stored measures; the sent messages
//!   themselves when a request is built.
//! - [`rungs`]: planning and applying each rung, and the ladder.
//! - [`compare`], [`report`]: the comparison of strategies and the `/context` breakdown.
//! - [`policy`]: window, threshold, target, protect and reply reserve for a model, from the settings.
//! - [`parts`]: assembled tokens by block kind, and the per-kind scales learned from what providers measured.
//! - [`replay`]: the estimate against what providers measured, and the calibration fitted on it.
//!
//! The store knows nothing of this module; this module reads and writes through the store's public calls.

pub mod assemble;
pub mod compare;
pub mod editing;
pub mod marker;
pub mod parts;
pub mod policy;
pub mod replay;
pub mod report;
pub mod rungs;
pub mod timeline;
pub mod view;

pub use assemble::{ContextLayout, Piece, SentMessage, Tally, layout};
pub use marker::{Marker, Strategy};
pub use policy::{Policy, Settings};
pub use rungs::{Applied, LadderOutcome, Plan};
pub use view::PathView;

/// The newest tokens no rung touches, by default.
pub const PROTECT_TOKENS: u64 = 40_000;
/// Elision runs by itself only when it takes back at least this much (`/shake` runs it below).
pub const ELIDE_WORTH_IT: u64 = 20_000;
/// A successful tool result larger than this is elided (the measure counts exactly these).
pub const MIN_ELIDE_TOKENS: u64 = crate::tokens::LARGE_RESULT_TOKENS;
/// What the placeholder of an elided result or a pruned image costs.
pub const PLACEHOLDER_TOKENS: u64 = 20;
/// What a summary is asked to fit in (and what the comparison assumes it takes).
pub const SUMMARY_TOKENS: u64 = 2_000;
/// The reply's reserve inside the window.
pub const REPLY_RESERVE: u64 = 16_000;

/// Why a reclaim operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ReclaimError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("rendering the snapshot pages: {0}")]
    Render(#[from] crate::render::RenderError),
}
