//! Continuing a conversation with a provider, and the summary rung's model call.
//!
//! `send` assembles the context (stored messages plus compaction markers), adds the new prompt, streams the
//! reply and persists prompt and reply as one turn when it is complete. When the provider rejects the request as
//! too long, it uses the provider's own token count to correct the estimate, runs the rungs that need no model (the
//! free ones and the snapshot), and tries again; after three rejected attempts it stops with a clear error. The
//! summary rung is never fed the overflowing request. When the newest cover is OpenAI's own compaction, the request
//! goes through its Responses API with the kept item ([`responses`]). What the store holds leaves redacted here as
//! everywhere: the history sent, the middle a summary is asked of, what a provider's compaction reads (the prompt
//! typed now is sent as typed).

use std::sync::atomic::AtomicBool;

use serde::Serialize;
use serde_json::Value;

use crate::model::{Block, NewMessage, Role};
use crate::provider::{Kind, Provider, ProviderError};
use crate::reclaim::assemble::{SentMessage, layout, materialize};
use crate::reclaim::rungs::{self, RungOptions};
use crate::reclaim::{Applied, PathView, Policy, ReclaimError, Strategy};
use crate::store::{Store, StoreError};

pub mod responses;

#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Reclaim(#[from] ReclaimError),
    #[error(
        "still too long after {attempts} attempts and every rung that needs no model ({last}); try `cairn compact {conv} --strategy summary`"
    )]
    GaveUp {
        attempts: u32,
        last: String,
        conv: String,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct SentTurn {
    pub reply: String,
    pub attempts: u32,
    /// Rungs run before sending (threshold) or after an overflow, in order.
    pub compacted: Vec<String>,
    pub prompt_id: String,
    pub reply_id: String,
    /// Secrets redacted from the history sent (keys, tokens, passwords the session held: the provider needs none).
    pub redacted: usize,
}

/// The request body for these messages (repaired to be pair-valid; nothing is dropped).
fn body(store: &Store, kind: Kind, msgs: &[SentMessage]) -> Result<Value, StoreError> {
    Ok(match kind {
        Kind::Anthropic => crate::export::to_anthropic(store, msgs)?.body,
        Kind::Openai => crate::export::to_openai(store, msgs)?.body,
    })
}

/// The next request as the one estimator predicts it (the last measured prompt plus what came since, and the
/// prompt): the figure the timeline draws against the same threshold. With it, the path as loaded for it (counted
/// as the model counts), so the request it stands for is made from the same load.
fn next_request(
    store: &Store,
    conv: &str,
    policy: &Policy,
    prompt: &NewMessage,
) -> Result<(PathView, u64), SendError> {
    let view = PathView::load(store, conv, None)?;
    let (view, est) = crate::reclaim::replay::as_model_counts(store, view, &policy.model)?;
    let reader = crate::reclaim::assemble::ModelReader::of(&policy.model);
    let estimate = est.predict(
        crate::reclaim::replay::totals_after(&view, reader)
            + crate::reclaim::parts::Parts::of_measure(&crate::tokens::measure(&prompt.content)),
    );
    Ok((view, estimate))
}

/// Secrets out of the history before it leaves, as out of every other way out of the store (the provider may not be
/// the one the session ran on, and it needs no key the session saw): text, tool inputs and output redacted; a
/// thinking block that held one loses its signature, so it is left out ([`crate::redact::blocks`]). How many were
/// redacted.
fn redact_history(msgs: &mut [SentMessage]) -> usize {
    msgs.iter_mut()
        .map(|m| crate::redact::blocks(&mut m.content))
        .sum()
}

/// Sends the context a layout makes, its secrets redacted, with the prompt as typed, to the provider (OpenAI's own
/// compaction as the newest cover through its Responses API, which alone reads the kept item). With the reply, how
/// many secrets were redacted.
fn request(
    store: &Store,
    provider: &Provider,
    (view, l): (&PathView, &crate::reclaim::ContextLayout),
    prompt: &NewMessage,
    on_text: &mut dyn FnMut(&str),
    cancel: &AtomicBool,
) -> Result<(Result<crate::provider::Reply, ProviderError>, usize), SendError> {
    let mut msgs = materialize(view, l, Some(store))?;
    let redacted = redact_history(&mut msgs);
    msgs.push(SentMessage {
        role: Role::User,
        content: prompt.content.clone(),
        sources: Vec::new(),
    });
    let request = body(store, provider.kind, &msgs)?;
    // OpenAI's own compaction as the newest cover: only its Responses API reads the kept item
    let kept = match provider.kind {
        Kind::Openai => responses::kept_item(store, view)?,
        Kind::Anthropic => None,
    };
    let reply = match kept {
        Some((stands_for, item)) => responses::send(
            provider,
            responses::input(&request, &stands_for, &item),
            on_text,
        ),
        None => provider.complete(&request, on_text, cancel),
    };
    Ok((reply, redacted))
}

/// Sends `text` as the next user prompt and persists the turn when the reply is complete.
pub fn send(
    store: &mut Store,
    conv: &str,
    text: &str,
    provider: &Provider,
    policy: &Policy,
    on_text: &mut dyn FnMut(&str),
    cancel: &AtomicBool,
) -> Result<SentTurn, SendError> {
    let conv = store.resolve_conversation(conv)?;
    let prompt = NewMessage::text(Role::User, text);
    let mut compacted = Vec::new();
    let mut last = String::new();
    // Threshold: compact before sending when the context is past its share of the window.
    let target = policy.target_tokens();
    let opts = policy.rung_options(target);
    // the next request as the one estimator predicts it (the last measured prompt plus what came since), the
    // figure the timeline draws against the same threshold
    let (_, estimate) = next_request(store, &conv, policy, &prompt)?;
    if estimate > policy.threshold_tokens() {
        let outcome = rungs::ladder(store, &conv, target, &opts)?;
        compacted.extend(
            outcome
                .steps
                .iter()
                .map(|s| format!("{} (threshold)", s.strategy.name())),
        );
    }
    for attempt in 1..=3u32 {
        // in the units the ladder aims in: the next request as the one estimator predicts it
        let (view, estimate) = next_request(store, &conv, policy, &prompt)?;
        if let Some(tip) = view.heads.last()
            && !tip.ends_turn()
        {
            return Err(StoreError::NotBoundary {
                conversation: conv.clone(),
                tip: tip.id.clone(),
                why: "the last turn is incomplete",
            }
            .into());
        }
        let l = layout(&view, &[], view.len());
        let (answer, redacted) = request(store, provider, (&view, &l), &prompt, on_text, cancel)?;
        match answer {
            Ok(reply) => {
                let mut answer =
                    NewMessage::new(Role::Assistant, vec![Block::text(reply.text.clone())]);
                answer.usage = reply.usage;
                answer.meta = serde_json::json!({"model": reply.model, "cairn": crate::model::CairnMeta::SentBy("cairn send").to_value()});
                let ids = store.append_turn(&conv, &[prompt.clone(), answer])?;
                return Ok(SentTurn {
                    reply: reply.text,
                    attempts: attempt,
                    compacted,
                    prompt_id: ids[0].clone(),
                    reply_id: ids[1].clone(),
                    redacted,
                });
            }
            Err(ProviderError::Overflow {
                tokens,
                limit,
                message,
            }) => {
                last = message;
                // The provider's count corrects our estimate: aim under its limit, in our units.
                let ratio = tokens
                    .map_or(1.0, |t| t as f64 / estimate.max(1) as f64)
                    .max(0.5);
                let limit = limit.unwrap_or_else(|| tokens.map_or(estimate, |t| t * 9 / 10));
                let target = ((limit as f64 * 0.9) / ratio) as u64;
                let before = compacted.len();
                let outcome = rungs::ladder(store, &conv, target, &policy.rung_options(target))?;
                compacted.extend(outcome.steps.iter().map(|s| s.strategy.name().to_string()));
                if compacted.len() == before {
                    // nothing left that needs no model
                    break;
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(SendError::GaveUp {
        attempts: 3,
        last,
        conv,
    })
}

/// The summary rung: one model call on the middle the snapshot would image (chunked when it would not fit the
/// summarising model's window), then its marker. Never fed an overflowing request: it sees only the middle.
/// How to summarise: what to keep, the summarising model's window, the protect window left verbatim.
#[derive(Debug, Clone)]
pub struct SummaryOptions {
    pub instructions: Option<String>,
    pub window: u64,
    pub rungs: RungOptions,
}

pub fn summarize(
    store: &mut Store,
    conv: &str,
    provider: &Provider,
    opts: &SummaryOptions,
    progress: &mut dyn FnMut(usize, usize),
    cancel: &AtomicBool,
) -> Result<Option<Applied>, SendError> {
    let (instructions, window) = (opts.instructions.as_deref(), opts.window);
    let view = PathView::load(store, conv, None)?;
    let l = layout(&view, &[], view.len());
    let idx = rungs::covered_middle(&view, &l, opts.rungs.protect);
    if idx.is_empty() {
        return Ok(None);
    }
    let covered = view.bodies(Some(store), &idx)?;
    // the summariser needs no secret the middle held (and a summary that kept one would carry it on)
    let lines: Vec<String> = covered
        .iter()
        .map(|m| {
            let line = format!("{}: {}", m.role, crate::render::source_text(m));
            crate::redact::text(&line).0.into_owned()
        })
        .collect();
    // chunks that fit the summariser's window with room for the instructions and the reply
    let budget = window.saturating_sub(8_000).max(window * 6 / 10).max(1_000);
    let mut chunks: Vec<String> = vec![String::new()];
    for l in lines {
        let cur = chunks.last().map_or(0, |c| crate::tokens::text(c));
        if cur + crate::tokens::text(&l) > budget && chunks.last().is_some_and(|c| !c.is_empty()) {
            chunks.push(String::new());
        }
        if let Some(c) = chunks.last_mut() {
            let room = (budget as usize).saturating_mul(3);
            let l: String = l.chars().take(room).collect();
            c.push_str(&l);
            c.push('\n');
        }
    }
    let ask = |text: &str| -> Result<String, SendError> {
        let prompt = format!(
            "Summarise this part of an agent conversation so the agent can continue without it. Keep decisions, \
             findings, file paths, identifiers, errors and open questions; drop chatter.{}\n\n<conversation>\n{text}\n</conversation>",
            instructions
                .map(|i| format!(" Also: {i}"))
                .unwrap_or_default()
        );
        let msgs = vec![SentMessage {
            role: Role::User,
            content: vec![Block::text(prompt)],
            sources: Vec::new(),
        }];
        let reply = provider.complete(&body(store, provider.kind, &msgs)?, &mut |_| {}, cancel)?;
        Ok(reply.text)
    };
    // progress counts model calls: one per chunk, plus one to combine the chunks' summaries
    let calls = if chunks.len() == 1 {
        1
    } else {
        chunks.len() + 1
    };
    let summary = if chunks.len() == 1 {
        progress(0, calls);
        let s = ask(&chunks[0])?;
        progress(1, calls);
        s
    } else {
        let mut parts = Vec::with_capacity(chunks.len());
        for (i, c) in chunks.iter().enumerate() {
            progress(i, calls);
            parts.push(ask(c)?);
        }
        progress(chunks.len(), calls);
        let s = ask(&parts.join("\n\n"))?;
        progress(calls, calls);
        s
    };
    Ok(rungs::apply(
        store,
        conv,
        Strategy::Summary,
        true,
        Some(&summary),
        &opts.rungs,
    )?)
}

/// The providers' own compaction, run once and kept like cairn's: Anthropic's server-side compaction
/// (`compact_20260112`, beta `compact-2026-01-12`: the reply opens with a `compaction` block whose content is the
/// summary the model sees from then on) and OpenAI's `POST /v1/responses/compact` (an opaque `compaction` item with
/// `encrypted_content`). Either becomes a summary marker over the path (nothing stored is changed); OpenAI's opaque
/// item is kept in the marker's metadata, and the summary text says what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerCompaction {
    Anthropic,
    Openai,
}

impl ServerCompaction {
    pub fn name(self) -> &'static str {
        match self {
            ServerCompaction::Anthropic => "anthropic-server",
            ServerCompaction::Openai => "openai-compact",
        }
    }
}

pub fn server_compact(
    store: &mut Store,
    conv: &str,
    provider: &Provider,
    how: ServerCompaction,
    opts: &rungs::RungOptions,
) -> Result<Option<Applied>, SendError> {
    let view = PathView::load(store, conv, None)?;
    let l = layout(&view, &[], view.len());
    let mut sent = crate::reclaim::assemble::materialize(&view, &l, Some(store))?;
    redact_history(&mut sent);
    let bad = |message: String| {
        SendError::Provider(ProviderError::BadResponse {
            url: provider.base_url.clone(),
            message,
        })
    };
    let mut kept: Option<crate::reclaim::marker::ProviderKept> = None;
    let summary = match how {
        ServerCompaction::Anthropic => {
            let mut body = crate::export::to_anthropic(store, &sent)?.body;
            body["max_tokens"] = serde_json::json!(provider.max_tokens);
            body["context_management"] = serde_json::json!({"edits": [
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}
            ]});
            let v = provider.post_json("/v1/messages", &body, Some("compact-2026-01-12"))?;
            v["content"]
                .as_array()
                .and_then(|c| {
                    c.iter()
                        .find(|b| b["type"] == "compaction")
                        .and_then(|b| b["content"].as_str())
                })
                .map(str::to_string)
                .ok_or_else(|| {
                    bad("no compaction block in the reply (under the server's trigger?)".into())
                })?
        }
        ServerCompaction::Openai => {
            // the Responses API takes the conversation as messages of text
            let input: Vec<serde_json::Value> = sent
                .iter()
                .map(|m| {
                    let role = match m.role {
                        Role::Assistant => "assistant",
                        Role::System => "developer",
                        _ => "user",
                    };
                    serde_json::json!({"role": role, "content": crate::model::plain_text(&m.content)})
                })
                .collect();
            let v = provider.post_json(
                "/v1/responses/compact",
                &serde_json::json!({"input": input}),
                None,
            )?;
            let item = v["output"]
                .as_array()
                .and_then(|o| o.iter().find(|i| i["type"] == "compaction"))
                .cloned()
                .ok_or_else(|| bad("no compaction item in the answer".into()))?;
            let size = item["encrypted_content"].as_str().map_or(0, str::len);
            kept = Some(crate::reclaim::marker::ProviderKept {
                provider: "openai".into(),
                item,
            });
            format!(
                "[OpenAI compaction: the provider returned this context as an opaque item of {size} bytes, which only \
                 its Responses API can read back]"
            )
        }
    };
    let mut o = opts.clone();
    if o.range.is_none() {
        o.range = Some((0, view.len().saturating_sub(1)));
    }
    let applied = rungs::apply_keeping(
        store,
        conv,
        Strategy::Summary,
        true,
        Some(&summary),
        &o,
        kept,
    )?;
    Ok(applied)
}
