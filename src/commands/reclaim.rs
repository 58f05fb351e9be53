//! Actions that take context back or continue a conversation: a rung, the ladder, `/shake`, `send`.

use std::sync::atomic::AtomicBool;

use super::{Action, Env, misrouted};
use super::{CommandError, Compacted, Outcome, Progress, policy_for};
use crate::provider::Provider;
use crate::reclaim::rungs::{apply, ladder};
use crate::reclaim::{PathView, Settings, Strategy};
use crate::store::Store;

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    let Env {
        store,
        settings,
        progress,
        cancel,
    } = env;
    match action {
        a @ A::Compact { .. } => compact(store, settings, a, progress, cancel),
        A::Shake {
            conversation,
            elide,
            images,
        } => shake(store, settings, &conversation, elide, images),
        A::Send {
            conversation,
            text,
            provider,
            window,
        } => send(
            store,
            settings,
            &conversation,
            &text,
            &provider,
            window,
            progress,
            cancel,
        ),
        A::ServerCompact {
            conversation,
            how,
            provider,
        } => server_compact(store, settings, &conversation, how, provider),
        _ => Err(misrouted()),
    }
}

/// A compaction the provider makes (Anthropic's or OpenAI's compaction endpoint), stored as a summary rung.
fn server_compact(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
    how: crate::send::ServerCompaction,
    provider: Option<Provider>,
) -> Result<Outcome, CommandError> {
    let provider = provider.ok_or_else(|| {
        CommandError::Invalid(format!(
            "{} needs the provider's key: set {}",
            how.name(),
            match how {
                crate::send::ServerCompaction::Anthropic => "ANTHROPIC_API_KEY",
                crate::send::ServerCompaction::Openai => "OPENAI_API_KEY",
            }
        ))
    })?;
    let view = PathView::load(store, conversation, None)?;
    let policy = policy_for(store, settings, &view, None, None)?;
    let opts = policy.rung_options(policy.target_tokens());
    let applied = crate::send::server_compact(store, &view.conversation, &provider, how, &opts)?;
    Ok(Outcome::Compacted(Compacted::Rung(
        Strategy::Summary,
        applied,
    )))
}

pub(super) fn compact(
    store: &mut Store,
    settings: &Settings,
    action: Action,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Outcome, CommandError> {
    let Action::Compact {
        conversation,
        strategy,
        force,
        target,
        protect,
        instructions,
        provider,
        from,
        to,
    } = action
    else {
        return Err(misrouted());
    };
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
    Ok(Outcome::Compacted(match strategy {
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
    }))
}

pub(super) fn shake(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
    elide: bool,
    images: bool,
) -> Result<Outcome, CommandError> {
    let view = PathView::load(store, conversation, None)?;
    let policy = policy_for(store, settings, &view, None, None)?;
    let opts = policy.rung_options(policy.target_tokens());
    let mut done = Vec::new();
    for (s, on) in [(Strategy::Elide, elide), (Strategy::Images, images)] {
        if on {
            done.push((s, apply(store, &view.conversation, s, true, None, &opts)?));
        }
    }
    Ok(Outcome::Shaken(done))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn send(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
    text: &str,
    provider: &Provider,
    window: Option<u64>,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Outcome, CommandError> {
    let measured = store.max_measured_prompt(&provider.model)?;
    let policy = crate::reclaim::Policy::new(settings, Some(&provider.model), window, measured);
    let sent = crate::send::send(
        store,
        conversation,
        text,
        provider,
        &policy,
        &mut |t| progress.text(t),
        cancel,
    )?;
    Ok(Outcome::Sent(sent))
}
