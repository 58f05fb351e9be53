//! The texts pages are drawn from: a text or a stretch of a path (`render`, `legibility`), or the middle a
//! snapshot would cover now (`densities`, the snapshot preview).

use super::{CommandError, RenderInput, policy_for};
use crate::reclaim::assemble::layout;
use crate::reclaim::rungs::covered_middle;
use crate::reclaim::{PathView, Settings};
use crate::render::{self, SourceText};
use crate::store::Store;

/// What to render (or read back): a text, or a stretch of a path, secrets redacted unless asked not to.
pub(super) fn sources_of(
    store: &mut Store,
    input: RenderInput,
    redact: bool,
) -> Result<Vec<render::SourceText>, CommandError> {
    Ok(match input {
        RenderInput::Text { name, text } => {
            let text = if redact {
                crate::redact::text(&text).0.into_owned()
            } else {
                text
            };
            vec![render::text_source(&name, text)]
        }
        RenderInput::Path {
            conversation,
            from,
            to,
        } => {
            let path = match &to {
                Some(m) => store.path_to(&conversation, m)?,
                None => store.active_path(&conversation)?,
            };
            let start = match &from {
                Some(m) => {
                    let id = store.resolve_message(&conversation, m)?;
                    path.iter().position(|x| x.id == id).ok_or_else(|| {
                        CommandError::Invalid(format!(
                            "message {id} is not on the path to {}",
                            to.as_deref().unwrap_or("the tip")
                        ))
                    })?
                }
                None => 0,
            };
            render::sources_with(&path[start..], redact)
        }
    })
}

/// What a snapshot would cover now (the same protect as `compact --strategy snapshot`), as render sources, with
/// the conversation's policy.
pub(super) fn snapshot_middle(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
) -> Result<(PathView, crate::reclaim::Policy, Vec<SourceText>), CommandError> {
    let view = PathView::load(store, conversation, None)?;
    let policy = policy_for(store, settings, &view, None, None)?;
    let l = layout(&view, &[], view.len());
    let idx = covered_middle(&view, &l, policy.protect_for(policy.target_tokens()));
    // drawn as the rung draws them: what an earlier elision took is a short note
    let elided: std::collections::HashSet<usize> = l
        .sent_messages()
        .filter(|(_, e, _)| *e)
        .map(|(i, _, _)| i)
        .collect();
    let covered: Vec<_> = view
        .bodies(Some(store), &idx)?
        .iter()
        .zip(&idx)
        .map(|(m, i)| crate::reclaim::assemble::as_drawn(m, elided.contains(i)))
        .collect();
    Ok((view, policy, render::sources(&covered)))
}
