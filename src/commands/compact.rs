//! `compact` (`/compact`): one rung (`force`: even below its threshold), or the ladder down to a target when no
//! strategy is named, cheapest first; a partial compaction between two messages. The summary rung needs a model.

use std::sync::atomic::AtomicBool;

use super::{Command, CommandError, Compacted, Env, Progress, policy_for};
use crate::provider::Provider;
use crate::reclaim::rungs::{apply, ladder};
use crate::reclaim::{PathView, Settings, Strategy};
use crate::store::Store;

/// Compacts a conversation.
#[derive(Debug, Clone)]
pub struct Compact {
    pub conversation: String,
    pub strategy: Option<Strategy>,
    pub force: bool,
    pub target: Option<u64>,
    pub protect: Option<u64>,
    pub instructions: Option<String>,
    pub provider: Option<Provider>,
    /// Only the messages from `from` (default: the first the rungs work on) to `to` (default: the tip): a
    /// partial compaction; the protect window does not apply.
    pub from: Option<String>,
    pub to: Option<String>,
}

impl Command for Compact {
    type Output = Compacted;

    fn run(self, env: Env<'_>) -> Result<Compacted, CommandError> {
        compact(env.store, env.settings, self, env.progress, env.cancel)
    }

    fn conversation(&self) -> Option<&str> {
        Some(&self.conversation)
    }
}

fn compact(
    store: &mut Store,
    settings: &Settings,
    c: Compact,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Compacted, CommandError> {
    let Compact {
        conversation,
        strategy,
        force,
        target,
        protect,
        instructions,
        provider,
        from,
        to,
    } = c;
    let view = PathView::load(store, &conversation, None)?;
    let policy = policy_for(store, settings, &view, None, None)?;
    let target = target.unwrap_or_else(|| policy.target_tokens());
    let mut opts = policy.rung_options(target);
    if let Some(p) = protect {
        opts.protect = p;
    }
    // a partial compaction: the range on the path, widened so no call loses its result
    if from.is_some() || to.is_some() {
        let at = |id: &Option<String>, default: usize| -> Result<usize, CommandError> {
            match id {
                None => Ok(default),
                Some(m) => {
                    let id = store.resolve_message(&view.conversation, m)?;
                    view.index_of(&id).ok_or_else(|| {
                        CommandError::Invalid(format!("message {id} is not on the active path"))
                    })
                }
            }
        };
        let last = view.len().saturating_sub(1);
        let (mut from, mut to) = (at(&from, 0)?, at(&to, last)?);
        if from > to {
            return Err(CommandError::Invalid(format!(
                "--from is after --to on the path ({from} > {to})"
            )));
        }
        while from > 0 && view.heads[from].has_tool_result() {
            from -= 1;
        }
        while to < last && view.heads[to + 1].has_tool_result() {
            to += 1;
        }
        opts.range = Some((from, to));
    }
    let conv = view.conversation;
    Ok(match strategy {
        None => Compacted::Ladder(ladder(store, &conv, target, &opts)?),
        Some(Strategy::Summary) => {
            let provider = provider.ok_or_else(|| {
                CommandError::Invalid(
                    "the summary rung needs a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or the settings \
                     file's \"provider\"); the snapshot rung needs none"
                        .into(),
                )
            })?;
            let sopts = crate::send::SummaryOptions {
                instructions,
                window: settings.window_of(&provider.model),
                rungs: opts,
            };
            let mut on = |done: usize, total: usize| progress.step(done, total, "model calls");
            let applied = crate::send::summarize(store, &conv, &provider, &sopts, &mut on, cancel)?;
            Compacted::Rung(Strategy::Summary, applied)
        }
        Some(s) => Compacted::Rung(s, apply(store, &conv, s, force, None, &opts)?),
    })
}
