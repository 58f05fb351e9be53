//! Actions that read what the model sees: the `/context` breakdown, the comparison of strategies and its
//! previews, and snapshot pages.

use super::{Action, Env, misrouted};
use super::{CommandError, Outcome, RenderInput, policy_for};
use crate::reclaim::assemble::{layout, materialize};
use crate::reclaim::compare::{Pricing, after_of, compare_priced};
use crate::reclaim::replay::{Estimator, stored_fits};
use crate::reclaim::rungs::covered_middle;
use crate::reclaim::{PathView, Settings, report};
use crate::render::{self, Profile, Rendered, SourceText};
use crate::store::Store;

/// Runs this file's actions.
pub(super) fn run(env: Env<'_>, action: Action) -> Result<Outcome, CommandError> {
    use Action as A;
    let Env {
        store,
        settings,
        progress,
        ..
    } = env;
    match action {
        A::Context {
            conversation,
            model,
        } => context(store, settings, &conversation, model.as_deref()),
        A::Compare {
            conversation,
            budget,
            profile,
        } => compare(store, settings, &conversation, budget, profile),
        A::Preview {
            conversation,
            strategy,
            budget,
        } => preview(store, settings, &conversation, strategy, budget),
        A::Timeline {
            conversation,
            model,
        } => timeline(store, settings, &conversation, model.as_deref()),
        A::Cache { conversation, at } => Ok(Outcome::Cache(crate::cache::cache(
            store,
            &conversation,
            at.as_deref(),
            &settings.prices,
        )?)),
        A::SnapshotPreview {
            conversation,
            profile,
            shape,
        } => snapshot_preview(store, settings, &conversation, profile, shape),
        a @ A::Legibility { .. } => legibility(store, settings, a, progress),
        _ => Err(misrouted()),
    }
}

/// The context over time: each reply's prompt as measured and as estimated, the policy's lines, and where each
/// request missed the prompt cache.
pub(super) fn timeline(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
    model: Option<&str>,
) -> Result<Outcome, CommandError> {
    let view = crate::reclaim::PathView::load(store, conversation, None)?;
    let policy = policy_for(store, settings, &view, model, None)?;
    let fits = crate::reclaim::replay::stored_fits(store)?;
    let mut t = crate::reclaim::timeline::timeline(Some(store), &view, &policy, &fits)?;
    // each reply's cache miss, on the point it hit
    let cache = crate::cache::on_heads(store, &view.conversation, &view.heads, &settings.prices)?;
    let misses: std::collections::HashMap<&str, &crate::cache::ReplyCache> = cache
        .replies
        .iter()
        .filter(|r| r.cause.is_some())
        .map(|r| (r.message.as_str(), r))
        .collect();
    for p in &mut t.points {
        if let Some(r) = misses.get(p.message.as_str()) {
            p.cache_miss = r.cause;
            p.cache_lost = r.cost.zip(r.cost_if_hit).map(|(a, b)| a - b);
        }
    }
    Ok(Outcome::Timeline(t))
}

pub(super) fn context(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
    model: Option<&str>,
) -> Result<Outcome, CommandError> {
    let view = PathView::load(store, conversation, None)?;
    let policy = policy_for(store, settings, &view, model, None)?;
    // counted the way the model counts (OpenAI's models with their public tokenizer)
    let view = view.counted_by(Some(store), crate::models::tokenizer(&policy.model))?;
    let est = Estimator::for_path(&stored_fits(store)?, Some(store), &view, &policy.model)?;
    Ok(Outcome::Context(Box::new(report::report(
        &view, &policy, &est,
    ))))
}

pub(super) fn compare(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
    budget: Option<u64>,
    profile: Option<&'static Profile>,
) -> Result<Outcome, CommandError> {
    let view = PathView::load(store, conversation, None)?;
    let mut policy = policy_for(store, settings, &view, None, None)?;
    if let Some(p) = profile {
        policy.profile = p;
    }
    let budget = budget.unwrap_or_else(|| policy.target_tokens());
    let pricing = Pricing {
        model: &policy.model,
        prices: &settings.prices,
    };
    let rows = compare_priced(&view, budget, &policy.rung_options(budget), &pricing);
    Ok(Outcome::Compared {
        conversation: view.conversation,
        budget,
        policy,
        rows,
    })
}

pub(super) fn preview(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
    strategy: crate::reclaim::compare::Candidate,
    budget: Option<u64>,
) -> Result<Outcome, CommandError> {
    let view = PathView::load(store, conversation, None)?;
    let policy = policy_for(store, settings, &view, None, None)?;
    let budget = budget.unwrap_or_else(|| policy.target_tokens());
    let (_, after, _, _) = after_of(&view, strategy, budget, &policy.rung_options(budget));
    let sent = materialize(&view, &after, Some(store))?;
    Ok(Outcome::Preview {
        conversation: view.conversation,
        strategy,
        sent,
    })
}

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

/// The pages a snapshot compaction would send now, with the text they were drawn from.
#[derive(Debug, Clone)]
pub struct SnapshotPreview {
    pub conversation: String,
    pub rendered: Rendered,
    pub sources: Vec<SourceText>,
    pub options: render::Options,
    /// The shape the pages are drawn in.
    pub shape: &'static render::shape::PageShape,
    /// The shape the conversation's model reads by default (what `compact` draws unless told otherwise).
    pub default_shape: &'static render::shape::PageShape,
    /// Every shape on the same text and profile, measured without drawing.
    pub densities: Vec<render::shape::Density>,
    /// The text tokens each page replaces ([`render::PageMap::text_tokens`]).
    pub page_text_tokens: Vec<u64>,
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

pub(super) fn snapshot_preview(
    store: &mut Store,
    settings: &Settings,
    conversation: &str,
    profile: Option<&'static render::Profile>,
    shape: Option<&'static render::shape::PageShape>,
) -> Result<Outcome, CommandError> {
    let (view, policy, sources) = snapshot_middle(store, settings, conversation)?;
    let default_shape = policy.page_shape();
    let mut options = render::Options::new(profile.unwrap_or(policy.profile));
    shape.unwrap_or(default_shape).apply(&mut options);
    let rendered = render::render(&sources, &options)?;
    let page_text_tokens = rendered
        .manifest
        .pages
        .iter()
        .map(|p| p.text_tokens(&sources))
        .collect();
    Ok(Outcome::SnapshotPreview(Box::new(SnapshotPreview {
        conversation: view.conversation,
        densities: render::shape::densities(&sources, options.profile),
        page_text_tokens,
        rendered,
        sources,
        options,
        shape: shape.unwrap_or(default_shape),
        default_shape,
    })))
}

/// What `legibility` reads and with what.
/// Renders the input in each shape and has each reader read it back. The provider reader costs money: without
/// `confirmed` it only says how much.
pub(super) fn legibility(
    store: &mut Store,
    settings: &Settings,
    action: Action,
    progress: &dyn super::Progress,
) -> Result<Outcome, CommandError> {
    use crate::legibility::Reader;
    let Action::Legibility {
        input,
        profile,
        shapes,
        readers,
        script,
        provider,
        confirmed,
    } = action
    else {
        return Err(misrouted());
    };
    let sources = sources_of(store, input, true)?;
    if readers.contains(&Reader::Provider) {
        let p = provider.as_ref().ok_or_else(|| {
            CommandError::Invalid(
                "the provider reader needs a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or the settings \
                 file's \"provider\")"
                    .into(),
            )
        })?;
        if !confirmed {
            let mut tokens = 0;
            let mut cost = Some(0.0);
            // the same questions go with every shape's pages
            let prompt =
                crate::legibility::question_prompt(&crate::legibility::questions(&sources, 20));
            for shape in &shapes {
                let mut opts = render::Options::new(profile);
                shape.apply(&mut opts);
                let r = render::render(&sources, &opts)?;
                let (t, c) =
                    crate::legibility::provider_cost(&r, &prompt, &p.model, &settings.prices);
                tokens += t;
                cost = cost.zip(c).map(|(x, y)| x + y);
            }
            return Err(CommandError::Invalid(format!(
                "the provider reader sends about {tokens} tokens to {} ({}): run again with --yes",
                p.model,
                cost.map_or_else(
                    || "its price is unknown".to_string(),
                    |c| format!("about ${c:.2}")
                )
            )));
        }
    }
    let work = tempfile_dir()?;
    let mut out = Vec::new();
    let total = shapes.len() * readers.len();
    for (i, shape) in shapes.iter().enumerate() {
        for (j, reader) in readers.iter().enumerate() {
            progress.step(i * readers.len() + j, total, shape.name);
            let mut opts = render::Options::new(profile);
            shape.apply(&mut opts);
            opts.factsheet = false;
            let reading = match (reader, &provider) {
                (Reader::Provider, Some(p)) => {
                    crate::legibility::measure_recall(&sources, &opts, shape.name, p, store, 20)
                }
                _ => {
                    crate::legibility::measure(&sources, &opts, shape.name, *reader, &script, &work)
                }
            };
            out.push(reading.map_err(|e| CommandError::Invalid(e.to_string()))?);
        }
    }
    std::fs::remove_dir_all(&work).ok();
    Ok(Outcome::Legibility(out))
}

/// A fresh folder for strips under the system's temporary folder.
fn tempfile_dir() -> Result<std::path::PathBuf, CommandError> {
    let d = std::env::temp_dir().join(format!(
        "cairn-legibility-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&d)
        .map_err(|e| CommandError::Invalid(format!("{}: {e}", d.display())))?;
    Ok(d)
}
