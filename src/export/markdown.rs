//! A path as readable Markdown: one section per message with its model, time and tokens; each tool call as a line
//! with its telling argument, its result fenced beneath in the file's language, edits as `diff` blocks, thinking
//! and long output in `<details>`, harness preambles folded. Fences grow past any backticks inside, so transcript
//! text cannot break out of them.

use serde_json::Value;

use super::markup::html_escape;
use super::reading::{Compaction, Reading, reply_info};
use super::tools::{Detail, result_lang, summarize};
use super::{Options, is_thinking};
use crate::model::{Block, ToolResultContent};

/// Backticks enough to open a code span or fence that no run of backticks in `s` closes (at least `min`).
fn ticks_for(s: &str, min: usize) -> String {
    let mut ticks = min;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            ticks = ticks.max(run + 1);
        } else {
            run = 0;
        }
    }
    "`".repeat(ticks)
}

fn fence(body: &str, lang: &str) -> String {
    let f = ticks_for(body, 3);
    format!("{f}{lang}\n{body}\n{f}\n")
}

fn details(summary: &str, body: &str) -> String {
    format!(
        "<details><summary>{}</summary>\n\n{body}\n</details>\n\n",
        html_escape(summary)
    )
}

/// Transcript text as Markdown that no renderer turns into HTML: `<`, `>` and `&` escaped outside code (fenced
/// blocks and inline code spans keep their text, which renderers show literally), so a message, title or model
/// name carrying `<script>` or `<img onerror>` is shown, never run.
pub(crate) fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    let mut fence: Option<(char, usize)> = None;
    for (n, line) in s.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let t = line.trim_start();
        let run = |c: char| t.chars().take_while(|&x| x == c).count();
        match fence {
            Some((c, len)) => {
                out.push_str(line);
                if t.starts_with(c) && run(c) >= len && t.trim_start_matches(c).trim().is_empty() {
                    fence = None;
                }
                continue;
            }
            None => {
                for c in ['`', '~'] {
                    if run(c) >= 3 {
                        fence = Some((c, run(c)));
                    }
                }
                if fence.is_some() {
                    out.push_str(line);
                    continue;
                }
            }
        }
        out.push_str(&escape_outside_code_spans(line));
    }
    out
}

/// One line: HTML-significant characters escaped except inside backtick code spans.
fn escape_outside_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let b: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '`' {
            let n = b[i..].iter().take_while(|&&c| c == '`').count();
            // the closing run of the same length, if any
            let mut j = i + n;
            let mut close = None;
            while j < b.len() {
                if b[j] == '`' {
                    let m = b[j..].iter().take_while(|&&c| c == '`').count();
                    if m == n {
                        close = Some(j);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            if let Some(j) = close {
                out.extend(&b[i..j + n]);
                i = j + n;
                continue;
            }
            out.extend(&b[i..i + n]);
            i += n;
            continue;
        }
        match b[i] {
            '<' => out.push_str("&lt;"),
            '>' if i > 0 => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// A fenced block of output, folded into `<details>` when long.
fn output(text: &str, lang: &str, label: &str) -> String {
    let lines = text.lines().count();
    if lines > 30 {
        details(&format!("{label} ({lines} lines)"), &fence(text, lang))
    } else {
        let mut out = String::new();
        if !label.is_empty() {
            out.push_str(&format!("{label}:\n\n"));
        }
        out.push_str(&fence(text, lang));
        out.push('\n');
        out
    }
}

/// Inline code that no backtick inside can close.
fn code_span(s: &str) -> String {
    let s = s.replace('\n', " ");
    let f = ticks_for(&s, 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{f}{pad}{s}{pad}{f}")
}

fn result_md(
    r: &Reading,
    content: &ToolResultContent,
    is_error: bool,
    call: Option<&str>,
) -> String {
    let lang = call
        .and_then(|id| r.tool_inputs.get(id))
        .map(|(name, input)| result_lang(name, input))
        .unwrap_or_default();
    let mut out = output(
        &content.text(),
        &lang,
        if is_error { "**Error**" } else { "Result" },
    );
    if let ToolResultContent::Blocks(bs) = content {
        for b in bs {
            if let Block::Image { media_type, .. } = b {
                out.push_str(&format!("*[image: {media_type}]*\n\n"));
            }
        }
    }
    out
}

/// A text block: what the user typed, an injection beside it, or the summary a compaction left.
fn text_md(m: &crate::model::Message, text: &str, out: &mut String) {
    if m.role == crate::model::Role::User
        && crate::formats::is_preamble(text)
        && m.content.len() > 1
    {
        // injected beside what the user typed (an IDE's opened file, a system reminder)
        out.push_str(&details(&crate::formats::short_title(text), &md_text(text)));
    } else if m.cairn_kind() == Some(crate::model::KIND_COMPACT_SUMMARY) {
        out.push_str("> **The summary the model saw from here on**\n>\n");
        for l in md_text(text).lines() {
            out.push_str(&format!("> {l}\n"));
        }
        out.push('\n');
    } else {
        out.push_str(&md_text(text));
        out.push_str("\n\n");
    }
}

/// A tool call: its summary line and detail, its result beneath, and the subagent it spawned.
fn tool_call_md(
    r: &Reading,
    (id, name, input): (&String, &String, &Value),
    opts: Options,
    out: &mut String,
) {
    let s = summarize(name, input);
    out.push_str(&format!(
        "**{}**{}\n\n",
        md_text(name).replace('*', "\\*"),
        s.arg
            .as_deref()
            .map(|a| format!(" {}", code_span(a)))
            .unwrap_or_default()
    ));
    detail_md(&s.detail, out);
    if opts.tool_results
        && let Some(&(rm, rb)) = r.results.get(id)
        && let Some(Block::ToolResult {
            content, is_error, ..
        }) = r.all[rm].content.get(rb)
    {
        out.push_str(&result_md(r, content, *is_error, Some(id)));
    }
    if let Some(sub) = r.subagents.get(id) {
        out.push_str(&subagent_md(sub, opts));
    }
}

/// What a call's summary shows beneath its line: a patch, a plan, code, its input.
fn detail_md(detail: &Detail, out: &mut String) {
    match detail {
        Detail::Diff(d) => {
            out.push_str(&fence(d.trim_end(), "diff"));
            out.push('\n');
        }
        Detail::Checklist(items) => {
            for (status, text) in items {
                let mark = if status == "completed" { "x" } else { " " };
                let now = if status == "in_progress" {
                    " *(in progress)*"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "- [{mark}] {}{now}\n",
                    md_text(&text.replace('\n', " "))
                ));
            }
            out.push('\n');
        }
        Detail::Code { lang, text } => out.push_str(&output(text, lang, "")),
        Detail::Json(j) => out.push_str(&details("input", &fence(j, "json"))),
        Detail::None => {}
    }
}

fn message_md(r: &Reading, i: usize, opts: Options, out: &mut String) {
    let m = &r.all[i];
    for (k, b) in m.content.iter().enumerate() {
        match b {
            Block::Text { text } => text_md(m, text, out),
            b if is_thinking(b) => {
                if opts.thinking {
                    let t = match b {
                        Block::Thinking { thinking, .. } => thinking.clone(),
                        _ => "(encrypted reasoning)".to_string(),
                    };
                    out.push_str(&details("Thinking", &md_text(&t)));
                }
            }
            Block::ToolUse { id, name, input } => tool_call_md(r, (id, name, input), opts, out),
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                if r.absorbed.contains(&(i, k)) {
                    continue;
                }
                if opts.tool_results {
                    out.push_str(&result_md(r, content, *is_error, Some(tool_use_id)));
                } else {
                    out.push_str("*[tool result left out]*\n\n");
                }
            }
            Block::Image { media_type, .. } => {
                out.push_str(&format!("*[image: {media_type}]*\n\n"))
            }
            Block::Thinking { .. } => {}
            Block::Other(v) => {
                let ty = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
                out.push_str(&details(
                    &format!("{ty} block"),
                    &fence(&serde_json::to_string_pretty(v).unwrap_or_default(), "json"),
                ));
            }
        }
    }
}

fn compaction_md(c: &Compaction) -> String {
    match c {
        Compaction::Harness {
            harness,
            summary,
            tokens_before,
            tokens_after,
        } => {
            let mut s = format!(
                "> **{harness} compacted the conversation here{}.** From here on the model saw {} and the messages it kept.\n",
                super::sizes(*tokens_before, *tokens_after),
                if summary.is_some() {
                    "this summary"
                } else {
                    "its summary"
                }
            );
            if let Some(sum) = summary {
                s.push_str(">\n");
                for l in md_text(sum).lines() {
                    s.push_str(&format!("> {l}\n"));
                }
            }
            s.push('\n');
            s
        }
        Compaction::Summary { summary, covered } => {
            let mut s = format!("> **Summary (cairn): {covered} messages replaced**\n>\n");
            for l in md_text(summary).lines() {
                s.push_str(&format!("> {l}\n"));
            }
            s.push('\n');
            s
        }
        Compaction::Snapshot { covered, pages } => format!(
            "> **Snapshot (cairn):** {covered} messages drawn as {} page(s); the model saw the pages in their place.\n\n",
            pages.len()
        ),
        Compaction::Elide { results } => format!(
            "> **Elision (cairn):** from here on the model saw {results} old tool result(s) as one-line placeholders.\n\n"
        ),
        Compaction::Images { images } => format!(
            "> **Image pruning (cairn):** from here on the images of {images} message(s) were one-line notes.\n\n"
        ),
        Compaction::Edit {
            harness, replaced, ..
        } => format!(
            "> **Context edit ({}):** from here on the model saw a message above {}; the history keeps it as it was.\n\n",
            md_text(harness),
            if *replaced {
                "with other content"
            } else {
                "no more"
            }
        ),
    }
}

/// The path shown, as Markdown: the same summaries as the HTML page (tool lines with their argument, results in
/// fenced blocks with a language, diffs, folded thinking and long output, per-reply model and tokens, preambles
/// folded).
/// A subagent under the call that spawned it: folded, its messages as the page's are, its headings a level down.
fn subagent_md(sub: &Reading, opts: Options) -> String {
    let (_, usage, cost) = sub.totals();
    let mut facts = vec![format!("{} messages", sub.path.len())];
    if usage.output_tokens > 0 {
        facts.push(format!(
            "{} tokens out",
            super::thousands(usage.output_tokens)
        ));
    }
    if let Some(c) = cost {
        facts.push(format!("${c:.2}"));
    }
    let body: String = render(sub, opts)
        .lines()
        .skip(1)
        .map(|l| match l.strip_prefix("## ") {
            Some(rest) => format!("#### {rest}\n"),
            None => format!("{l}\n"),
        })
        .collect();
    details(
        &format!("{} · {}", sub.title.replace('\n', " "), facts.join(" · ")),
        body.trim(),
    )
}

/// A message's heading: who wrote it, the reply's model, time, tokens and cost, its cache miss, its fate in the
/// context sent now, its checkpoints, its id.
fn head_md(r: &Reading, i: usize) -> String {
    let m = &r.all[i];
    let info = reply_info(m);
    let mut head = format!("## {}", r.role_name(i));
    let mut bits: Vec<String> = Vec::new();
    if let Some(model) = &info.model {
        bits.push(md_text(model));
    }
    if let Some(t) = &info.time {
        bits.push(t.clone());
    }
    if let Some(why) = &info.stopped {
        bits.push(md_text(why));
    }
    bits.extend(info.changes.iter().map(|c| md_text(c)));
    if let Some(u) = &info.usage {
        // Claude Code records output tokens as a reply starts streaming: the reply's own size says more
        let out = match info.output_estimate {
            Some(e) => format!("~{e}"),
            None => u.output_tokens.to_string(),
        };
        bits.push(format!(
            "in {} · cached {} · out {out}",
            u.input_tokens + u.cache_creation_input_tokens,
            u.cache_read_input_tokens,
        ));
    }
    if let Some(c) = r.cache.get(&i) {
        if let Some(cost) = c.cost {
            bits.push(format!("${cost:.4}"));
        }
        if let Some(cause) = c.cause {
            bits.push(format!(
                "cache miss ({}): {} lost",
                cause.name(),
                crate::models::usd(c.cost.zip(c.cost_if_hit).map(|(a, b)| a - b), 4)
            ));
        }
    }
    if let Some(f) = r.fates.get(&i) {
        bits.push(format!("*{f}*"));
    }
    for l in r.checkpoints.get(&i).into_iter().flatten() {
        bits.push(format!("checkpoint {}", code_span(l)));
    }
    bits.push(format!("`{}`", m.id));
    head.push_str(&format!(" · {}\n\n", bits.join(" · ")));
    head
}

pub fn render(r: &Reading, opts: Options) -> String {
    let mut out = String::new();
    out.push_str(&format!("# {}\n\n", md_text(&r.title.replace('\n', " "))));
    let (models, usage, cost) = r.totals();
    let mut facts = vec![
        format!("Conversation `{}`", r.conv.id),
        format!("{} messages on this path", r.path.len()),
    ];
    if !models.is_empty() {
        facts.push(md_text(&models.join(", ")));
    }
    if usage.output_tokens > 0 {
        facts.push(format!(
            "{} tokens out, {} in, {} cached",
            usage.output_tokens,
            usage.input_tokens + usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens
        ));
    }
    if let Some(c) = cost {
        facts.push(format!("${c:.2}"));
    }
    if opts.redact && r.redacted > 0 {
        facts.push(format!("{} secret(s) redacted", r.redacted));
    }
    out.push_str(&facts.join(" · "));
    out.push_str("\n\n");
    let mut k = 0;
    while k < r.path.len() {
        let i = r.path[k];
        // a run of preamble messages folds under one line
        if r.is_preamble(i) {
            let mut run = Vec::new();
            while k < r.path.len() && r.is_preamble(r.path[k]) {
                run.push(r.path[k]);
                k += 1;
            }
            let mut body = String::new();
            for &p in &run {
                message_md(r, p, opts, &mut body);
            }
            out.push_str(&details(
                &format!(
                    "Harness preamble ({} message{})",
                    run.len(),
                    if run.len() == 1 { "" } else { "s" }
                ),
                &body,
            ));
            continue;
        }
        k += 1;
        if r.only_absorbed(i) {
            continue;
        }
        out.push_str(&head_md(r, i));
        if let Some(c) = r.compactions.get(&i) {
            out.push_str(&compaction_md(c));
        } else {
            message_md(r, i, opts, &mut out);
        }
    }
    out
}
