//! A step's uncached input as opencode recorded it, checked against what the provider measured next.
//!
//! Through GitHub Copilot, a Claude step that reasoned is recorded with twice its uncached input (`tokens.input`;
//! one more or less): the next step reads from the prompt cache everything the step sent, and what it reads beyond
//! the step's own cache read is half the recorded input. In the samples' Copilot session 21 of 24 reasoning steps
//! show it, no step without reasoning does, and the recorded prompt of the next step is then smaller than this
//! one's though nothing left the context (the "shrinking prompts": up to 6.5k). The provider's own later
//! measurement is the better one: such a step's input is what the next step's cache read says it was, and the
//! figure opencode recorded is kept beside it ([`CairnMeta::Remeasured`]: a store read by an older reader takes
//! this reading when the file is imported again).

use super::super::ImportReport;
use crate::model::{CairnMeta, NewMessage, Role};

/// The least uncached input the check reads anything into (below it, twice one figure is the other by chance).
const LEAST: u64 = 16;

/// Corrects each step whose recorded uncached input is twice (±1) what the next step's cache read grew by.
pub fn check(built: &mut [NewMessage], report: &mut ImportReport) {
    let steps: Vec<usize> = (0..built.len())
        .filter(|&i| built[i].role == Role::Assistant && built[i].usage.is_some())
        .collect();
    let mut corrected = 0;
    for w in steps.windows(2) {
        let (Some(this), Some(next)) = (built[w[0]].usage, built[w[1]].usage) else {
            continue;
        };
        let grown = next
            .cache_read_input_tokens
            .saturating_sub(this.cache_read_input_tokens);
        let recorded = this.input_tokens;
        if grown < LEAST || recorded.abs_diff(2 * grown) > 1 {
            continue;
        }
        if let Some(u) = built[w[0]].usage.as_mut() {
            u.input_tokens = grown;
        }
        built[w[0]].meta["cairn"] = CairnMeta::Remeasured {
            recorded_input: recorded,
        }
        .to_value();
        corrected += 1;
    }
    if corrected > 0 {
        report.notes.push(format!(
            "{corrected} step(s) recorded twice the uncached input the next step's cache read measured: taken as measured"
        ));
    }
}
