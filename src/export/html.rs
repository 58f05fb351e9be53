//! One self-contained HTML page a customer is glad to receive: Markdown rendered, code highlighted, each tool call
//! summarised with its result under it, edits as diffs, per-reply model, time, tokens and cost, compactions shown
//! as what the model then saw, harness preambles folded, and the whole tree in a sidebar where any branch can be
//! read.
//!
//! Still inert: every piece of transcript text is escaped (Markdown's raw HTML included), images are inline data
//! URLs, and the Content-Security-Policy allows no request and one script, the page's own, pinned by its hash
//! (`assets/export/page.js`: branch walking, filters, search). Without it the active path reads in full: articles
//! off the path carry `hidden`, and the script only moves that attribute.

use base64::Engine as _;
use sha2::Digest as _;

use super::markup::html_escape as esc;
use super::reading::{Compaction, Reading, reply_info};
use super::tools::{Detail, result_lang, summarize};
use super::{Options, Theme, highlight, is_thinking, markup, sizes};
use crate::model::{Block, ImageData, ToolResultContent};
use crate::store::{Store, StoreError};

const STYLE: &str = include_str!("../../assets/export/page.css");
const SCRIPT: &str = include_str!("../../assets/export/page.js");

/// The script's hash as the Content-Security-Policy names it.
pub fn script_hash() -> String {
    let digest = sha2::Sha256::digest(SCRIPT.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// Lines shown before and after the fold of a long output.
const HEAD_LINES: usize = 14;
const TAIL_LINES: usize = 6;
/// Outputs longer than this many lines are folded.
const FOLD_OVER: usize = 30;

use super::thousands;

/// A block of output: highlighted by `lang` when it can be, folded to its first and last lines when long.
fn output(text: &str, lang: &str) -> String {
    let part = |t: &str| highlight::code(t, lang).unwrap_or_else(|| esc(t));
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if lines.len() <= FOLD_OVER {
        return format!("<pre>{}</pre>", part(text));
    }
    let head: String = lines[..HEAD_LINES].concat();
    let middle: String = lines[HEAD_LINES..lines.len() - TAIL_LINES].concat();
    let tail: String = lines[lines.len() - TAIL_LINES..].concat();
    format!(
        "<pre>{}<details class=\"more\"><summary>… {} more lines …</summary>{}</details>{}</pre>",
        part(&head),
        lines.len() - HEAD_LINES - TAIL_LINES,
        // the folded middle is plain: highlighting what nobody unfolds would triple the page
        esc(&middle),
        part(&tail)
    )
}

/// Where a page's images come from: the store, or (for the articles written in parallel) the blobs read for them.
pub trait Blobs {
    fn blob(&self, hash: &str) -> Result<Vec<u8>, StoreError>;
}

impl Blobs for Store {
    fn blob(&self, hash: &str) -> Result<Vec<u8>, StoreError> {
        Store::blob(self, hash)
    }
}

impl Blobs for std::collections::HashMap<String, Vec<u8>> {
    fn blob(&self, hash: &str) -> Result<Vec<u8>, StoreError> {
        self.get(hash)
            .cloned()
            .ok_or_else(|| StoreError::MissingBlob(hash.to_string()))
    }
}

fn image(store: &dyn Blobs, media_type: &str, data: &ImageData) -> Result<String, StoreError> {
    let bytes = match data {
        ImageData::Bytes(b) => b.clone(),
        ImageData::Blob { hash, .. } => store.blob(hash)?,
    };
    // only image types are inlined, and only as data URLs; anything else is named, not embedded
    Ok(
        if media_type.starts_with("image/") && !media_type.contains(['"', '<', '>', ' ', '\'']) {
            format!(
                "<img alt=\"image\" loading=\"lazy\" src=\"data:{media_type};base64,{}\">\n",
                base64::engine::general_purpose::STANDARD.encode(bytes)
            )
        } else {
            format!("<p><i>[{} attachment]</i></p>\n", esc(media_type))
        },
    )
}

/// A tool result under its call (or alone, when no call of this tree asked for it).
fn result(
    store: &dyn Blobs,
    r: &Reading,
    content: &ToolResultContent,
    is_error: bool,
    call: Option<&str>,
    fate: Option<&str>,
) -> Result<String, StoreError> {
    let lang = call
        .and_then(|id| r.tool_inputs.get(id))
        .map(|(name, input)| result_lang(name, input))
        .unwrap_or_default();
    let mut inner = String::new();
    let text = content.text();
    if !text.is_empty() {
        inner.push_str(&output(&text, &lang));
    }
    if let ToolResultContent::Blocks(bs) = content {
        for b in bs {
            if let Block::Image { media_type, data } = b {
                inner.push_str(&image(store, media_type, data)?);
            }
        }
    }
    let lines = text.lines().count();
    let label = if is_error { "error" } else { "result" };
    let fate = fate
        .map(|f| format!(" · <span class=\"fate\">{}</span>", esc(f)))
        .unwrap_or_default();
    Ok(format!(
        "<div class=\"result{}\"><div class=\"head\"><span class=\"label\">{label}</span><span>{} line{}</span>{fate}</div>{inner}</div>\n",
        if is_error { " error" } else { "" },
        lines,
        if lines == 1 { "" } else { "s" }
    ))
}

/// A text block: what the user typed, an injection beside it, or the summary a compaction left.
fn text_block(m: &crate::model::Message, text: &str, out: &mut String) {
    if m.role == crate::model::Role::User
        && crate::formats::is_preamble(text)
        && m.content.len() > 1
    {
        // injected beside what the user typed (an IDE's opened file, a system reminder)
        out.push_str(&format!(
            "<details class=\"inject\"><summary>{}</summary><div class=\"body\">{}</div></details>\n",
            esc(&crate::formats::short_title(text)),
            markup::to_html(text)
        ));
    } else if m.cairn_kind() == Some(crate::model::KIND_COMPACT_SUMMARY) {
        out.push_str(&format!(
            "<div class=\"card\"><h3>The summary the model saw from here on</h3><div class=\"body\">{}</div></div>\n",
            markup::to_html(text)
        ));
    } else {
        out.push_str(&format!(
            "<div class=\"body\">{}</div>\n",
            markup::to_html(text)
        ));
    }
}

/// A tool call: its summary line and detail, its result beneath, and the subagent it spawned.
fn tool_call(
    store: &dyn Blobs,
    r: &Reading,
    (id, name, input): (&String, &String, &serde_json::Value),
    opts: Options,
    out: &mut String,
) -> Result<(), StoreError> {
    let s = summarize(name, input);
    out.push_str(&format!(
        "<section class=\"tool-call\" data-tool=\"{}\"><div class=\"call\"><b>{}</b> {}</div>\n",
        esc(name),
        esc(name),
        s.arg.as_deref().map(esc).unwrap_or_default()
    ));
    call_detail(r, id, &s.detail, out);
    if opts.tool_results
        && let Some(&(rm, rb)) = r.results.get(id)
        && let Some(Block::ToolResult {
            content, is_error, ..
        }) = r.all[rm].content.get(rb)
    {
        out.push_str(&result(
            store,
            r,
            content,
            *is_error,
            Some(id),
            r.fates.get(&rm).copied(),
        )?);
    }
    if let Some(sub) = r.subagents.get(id) {
        out.push_str(&subagent(store, id, sub, opts)?);
    }
    out.push_str("</section>\n");
    Ok(())
}

/// What a call's summary shows beneath its line: a patch, a plan, code, its input.
fn call_detail(r: &Reading, id: &str, detail: &Detail, out: &mut String) {
    match detail {
        Detail::Diff(d) => {
            // numbered where the harness recorded where the edit sits in the file
            let recorded = r
                .results
                .get(id)
                .and_then(|&(rm, rb)| super::patch::recorded(&r.all[rm], rb, id));
            let p = recorded.unwrap_or_else(|| super::patch::from_unified(d));
            out.push_str(&format!(
                "<pre class=\"patch{}\">{}</pre>\n",
                if p.numbered { " numbered" } else { "" },
                super::patch::html(&p)
            ))
        }
        Detail::Checklist(items) => {
            out.push_str("<ul class=\"plan\">");
            for (status, text) in items {
                let mark = match status.as_str() {
                    "completed" => "☑",
                    "in_progress" => "▶",
                    _ => "☐",
                };
                out.push_str(&format!(
                    "<li class=\"{}\">{mark} {}</li>",
                    esc(status),
                    esc(text)
                ));
            }
            out.push_str("</ul>\n");
        }
        Detail::Code { lang, text } => out.push_str(&output(text, lang)),
        Detail::Json(j) => out.push_str(&format!(
            "<details class=\"result\"><summary>input</summary>{}</details>\n",
            output(j, "json")
        )),
        Detail::None => {}
    }
}

fn blocks(
    store: &dyn Blobs,
    r: &Reading,
    i: usize,
    opts: Options,
    out: &mut String,
) -> Result<(), StoreError> {
    let m = &r.all[i];
    let fate = r.fates.get(&i).copied();
    for (k, b) in m.content.iter().enumerate() {
        match b {
            Block::Text { text } => text_block(m, text, out),
            b if is_thinking(b) => {
                if opts.thinking {
                    let t = match b {
                        Block::Thinking { thinking, .. } => markup::to_html(thinking),
                        _ => "<p>(encrypted reasoning)</p>".into(),
                    };
                    out.push_str(&format!(
                        "<details class=\"thinking\"><summary>Thinking</summary><div class=\"body\">{t}</div></details>\n"
                    ));
                }
            }
            Block::ToolUse { id, name, input } => {
                tool_call(store, r, (id, name, input), opts, out)?
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                if r.absorbed.contains(&(i, k)) {
                    continue;
                }
                if opts.tool_results {
                    out.push_str(&result(
                        store,
                        r,
                        content,
                        *is_error,
                        Some(tool_use_id),
                        fate,
                    )?);
                } else {
                    out.push_str("<p><i>tool result left out</i></p>\n");
                }
            }
            Block::Image { media_type, data } => out.push_str(&image(store, media_type, data)?),
            Block::Thinking { .. } => {}
            Block::Other(v) => out.push_str(&format!(
                "<details class=\"result\"><summary>{} block</summary>{}</details>\n",
                esc(v.get("type").and_then(|t| t.as_str()).unwrap_or("unknown")),
                output(&serde_json::to_string_pretty(v).unwrap_or_default(), "json")
            )),
        }
    }
    Ok(())
}

/// A subagent under the call that spawned it: folded, its messages drawn as the page's are, with its own figures.
fn subagent(
    store: &dyn Blobs,
    call: &str,
    sub: &Reading,
    opts: Options,
) -> Result<String, StoreError> {
    let (_, usage, cost) = sub.totals();
    let mut inner = String::new();
    for &i in &sub.path {
        inner.push_str(&article(store, sub, i, opts)?);
    }
    // its messages are not the page's articles (the page's script shows and hides those along the tree)
    let inner = inner
        .replace("<article ", "<div class=\"sub-msg\" ")
        .replace("</article>", "</div>")
        .replace(" id=\"msg-", " id=\"sub-")
        .replace("href=\"#msg-", "href=\"#sub-");
    let mut facts = vec![format!("{} messages", sub.path.len())];
    if usage.output_tokens > 0 {
        facts.push(format!("{} tokens out", thousands(usage.output_tokens)));
    }
    if let Some(c) = cost {
        facts.push(format!("${c:.2}"));
    }
    Ok(format!(
        "<details class=\"subagent\" id=\"agent-{}\"><summary>{} · {}</summary>{inner}</details>\n",
        esc(call),
        esc(&sub.title),
        facts.join(" · ")
    ))
}

fn compaction_card(c: &Compaction) -> String {
    match c {
        Compaction::Harness {
            harness,
            summary,
            tokens_before,
            tokens_after,
        } => {
            let who = match harness.as_str() {
                "claude-code" => "Claude Code",
                "pi" => "pi",
                "codex" => "Codex",
                h => h,
            };
            format!(
                "<div class=\"card\"><h3>{} compacted the conversation here{}</h3><p>From here on the model saw {} and the messages it kept, not what came before.</p>{}</div>\n",
                esc(who),
                sizes(*tokens_before, *tokens_after),
                if summary.is_some() {
                    "this summary"
                } else {
                    "its summary"
                },
                summary
                    .as_deref()
                    .map(|s| format!("<div class=\"body\">{}</div>", markup::to_html(s)))
                    .unwrap_or_default()
            )
        }
        Compaction::Summary { summary, covered } => format!(
            "<div class=\"card\"><h3>Summary (cairn): {covered} messages replaced</h3><div class=\"body\">{}</div></div>\n",
            markup::to_html(summary)
        ),
        Compaction::Snapshot { covered, pages } => {
            let imgs: String = pages
                .iter()
                .map(|p| {
                    format!(
                        "<img alt=\"snapshot page\" src=\"data:image/png;base64,{}\">",
                        base64::engine::general_purpose::STANDARD.encode(p)
                    )
                })
                .collect();
            format!(
                "<div class=\"card\"><h3>Snapshot (cairn): {covered} messages drawn as {} page{}</h3><p>The model saw these pages in their place.</p><div class=\"pages\">{imgs}</div></div>\n",
                pages.len(),
                if pages.len() == 1 { "" } else { "s" }
            )
        }
        Compaction::Elide { results } => format!(
            "<div class=\"card\"><h3>Elision (cairn)</h3><p>From here on the model saw {results} old tool result{} as one-line placeholders.</p></div>\n",
            if *results == 1 { "" } else { "s" }
        ),
        Compaction::Images { images } => format!(
            "<div class=\"card\"><h3>Image pruning (cairn)</h3><p>From here on the model saw the images of {images} message{} as one-line notes.</p></div>\n",
            if *images == 1 { "" } else { "s" }
        ),
        Compaction::Edit {
            harness,
            replaced,
            target,
        } => {
            let which = match target {
                Some(id) => format!("<a href=\"#msg-{}\">a message above</a>", esc(id)),
                None => "a message".to_string(),
            };
            format!(
                "<div class=\"card\"><h3>Context edit ({})</h3><p>From here on the model saw {which} {}; the history keeps it as it was.</p></div>\n",
                esc(harness),
                if *replaced {
                    "with other content"
                } else {
                    "no more"
                }
            )
        }
    }
}

/// An article's head: who wrote it, the reply's model, time, tokens and cost, where it stopped, its cache miss,
/// its fate in the context sent now, its checkpoints, the tip.
fn head_of(r: &Reading, i: usize, role: &str) -> String {
    let m = &r.all[i];
    let info = reply_info(m);
    let mut head = format!("<b>{role}</b>");
    if let Some(model) = &info.model {
        head.push_str(&format!("<span>{}</span>", esc(model)));
    }
    if let Some(t) = &info.time {
        head.push_str(&format!("<span>{}</span>", esc(t)));
    }
    if let Some(u) = &info.usage {
        let out = match info.output_estimate {
            Some(e) => format!(
                "<span title=\"the transcript records {} output tokens (counted when the reply began streaming); the reply holds about {}\">~{}</span>",
                u.output_tokens,
                thousands(e),
                thousands(e)
            ),
            None => thousands(u.output_tokens),
        };
        head.push_str(&format!(
            "<span title=\"input · cached · output tokens\">in {} · cached {} · out {out}</span>",
            thousands(u.input_tokens + u.cache_creation_input_tokens),
            thousands(u.cache_read_input_tokens),
        ));
    }
    if let Some(why) = &info.stopped {
        head.push_str(&format!(
            "<span class=\"miss\" title=\"the reply stopped short\">{}</span>",
            esc(why)
        ));
    }
    for c in &info.changes {
        head.push_str(&format!(
            "<span class=\"fate\" title=\"the harness's setting from here on\">{}</span>",
            esc(c)
        ));
    }
    if let Some(c) = r.cache.get(&i) {
        cache_spans(c, &mut head);
    }
    if let Some(f) = r.fates.get(&i)
        && !r.only_absorbed(i)
    {
        head.push_str(&format!(
            "<span class=\"fate\" title=\"in the context sent now\">{}</span>",
            esc(f)
        ));
    }
    for l in r.checkpoints.get(&i).into_iter().flatten() {
        head.push_str(&format!("<span class=\"cp\">⚑ {}</span>", esc(l)));
    }
    if r.tip == Some(i) {
        head.push_str("<span class=\"tip\">◀ tip</span>");
    }
    head
}

/// A reply's cost at list prices, and where it missed the prompt cache, what that lost.
fn cache_spans(c: &crate::cache::ReplyCache, head: &mut String) {
    if let Some(cost) = c.cost {
        head.push_str(&format!("<span title=\"at list prices\">${cost:.4}</span>"));
    }
    if let Some(cause) = c.cause {
        let lost = c.cost.zip(c.cost_if_hit).map(|(a, b)| a - b);
        head.push_str(&format!(
            "<span class=\"miss\" title=\"the cache held {} of the {} tokens the previous request left (gap {}); \
             with the cache held this reply would have cost {}\">cache miss: {} · {} lost</span>",
            thousands(c.cache_read),
            thousands(c.expected_read),
            c.gap_ms.map_or("-".to_string(), |g| format!("{:.0} s", g as f64 / 1000.0)),
            crate::models::usd(c.cost_if_hit, 4),
            cause.name(),
            crate::models::usd(lost, 4)
        ));
    }
}

fn article(store: &dyn Blobs, r: &Reading, i: usize, opts: Options) -> Result<String, StoreError> {
    let m = &r.all[i];
    let role = r.role_name(i);
    let mut attrs = format!("id=\"msg-{}\" data-role=\"{role}\"", esc(&m.id));
    if let Some(p) = &m.parent {
        attrs.push_str(&format!(" data-parent=\"{}\"", esc(p)));
    }
    if r.on_path.contains(&i) {
        attrs.push_str(" data-on=\"\"");
    } else {
        attrs.push_str(" hidden");
    }
    if r.checkpoints.contains_key(&i) {
        attrs.push_str(" data-checkpoint=\"\"");
    }
    let short: String = m.id.chars().take(8).collect();
    if r.is_preamble(i) {
        let first = crate::formats::short_title(&crate::model::plain_text(&m.content));
        let mut body = String::new();
        blocks(store, r, i, opts, &mut body)?;
        return Ok(format!(
            "<article {attrs} class=\"preamble\"><details><summary>harness preamble: {}</summary>{body}</details></article>\n",
            esc(&first)
        ));
    }
    if r.only_absorbed(i) {
        // its results are drawn under their calls: nothing of its own to show, only its anchor
        return Ok(format!("<article {attrs} data-absorbed=\"\"></article>\n"));
    }
    let mut head = head_of(r, i, role);
    head.push_str(&format!(
        "<a href=\"#msg-{}\" title=\"{}\">#{}</a>",
        esc(&m.id),
        esc(&m.id),
        esc(&short)
    ));
    let mut body = String::new();
    if let Some(c) = r.compactions.get(&i) {
        body.push_str(&compaction_card(c));
    } else {
        blocks(store, r, i, opts, &mut body)?;
    }
    Ok(format!(
        "<article {attrs}><div class=\"head\">{head}</div>\n{body}</article>\n"
    ))
}

/// The sidebar: the whole tree, branches as nested lists (iteratively: no recursion on deep trees).
fn tree(r: &Reading) -> String {
    enum Item {
        Open,
        Close,
        Node(usize),
    }
    let mut h = String::from("<ul>");
    let mut stack: Vec<Item> = Vec::new();
    let is_child: std::collections::HashSet<usize> =
        r.children.values().flatten().copied().collect();
    let roots: Vec<usize> = (0..r.all.len()).filter(|i| !is_child.contains(i)).collect();
    for &root in roots.iter().rev() {
        stack.extend([Item::Close, Item::Node(root), Item::Open]);
    }
    while let Some(item) = stack.pop() {
        let i = match item {
            Item::Open => {
                h.push_str("<li class=\"branch\"><ul>");
                continue;
            }
            Item::Close => {
                h.push_str("</ul></li>");
                continue;
            }
            Item::Node(i) => i,
        };
        let m = &r.all[i];
        let role = r.role_name(i);
        let mut marks = String::new();
        if r.tip == Some(i) {
            marks.push_str(" <span class=\"tip\">◀ tip</span>");
        }
        for l in r.checkpoints.get(&i).into_iter().flatten() {
            marks.push_str(&format!(" <span class=\"cp\">⚑ {}</span>", esc(l)));
        }
        let mut class = String::from("n");
        class.push_str(if r.on_path.contains(&i) {
            " on"
        } else {
            " off"
        });
        let cp = if r.checkpoints.contains_key(&i) {
            " data-checkpoint=\"\""
        } else {
            ""
        };
        let text = r.label(i);
        h.push_str(&format!(
            "<li><a class=\"{class}\" data-role=\"{role}\"{cp} href=\"#msg-{id}\" title=\"{id}\"><span class=\"r\">{short}</span>{text}{marks}</a></li>",
            short = if role == "assistant" { "reply" } else { role },
            id = esc(&m.id),
            text = esc(&text),
        ));
        // the subagents it spawned, each a link to where it is folded under its call
        let spawned: Vec<(&str, &Reading)> = m
            .content
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { id, .. } => r.subagents.get(id).map(|s| (id.as_str(), s)),
                _ => None,
            })
            .collect();
        if !spawned.is_empty() {
            h.push_str("<li><ul class=\"agents\">");
            for (call, sub) in spawned {
                h.push_str(&format!(
                    "<li><a class=\"n agent\" href=\"#agent-{}\" title=\"subagent\"><span class=\"r\">agent</span>{}</a></li>",
                    esc(call),
                    esc(&sub.title)
                ));
            }
            h.push_str("</ul></li>");
        }
        let kids = r.children.get(&i).cloned().unwrap_or_default();
        if kids.len() > 1 {
            for &k in kids.iter().rev() {
                stack.extend([Item::Close, Item::Node(k), Item::Open]);
            }
        } else if let Some(&k) = kids.first() {
            stack.push(Item::Node(k));
        }
    }
    h.push_str("</ul>");
    h
}

/// The page, whole (tests, the window): [`write_page`] into memory.
pub fn render(store: &Store, r: &Reading, opts: Options) -> Result<String, super::ExportError> {
    let mut out = Vec::new();
    write_page(store, r, opts, &mut out)?;
    String::from_utf8(out).map_err(|e| super::ExportError::Write(std::io::Error::other(e)))
}

/// Articles written a chunk at a time: the chunk's images read from the store, its articles drawn by as many
/// threads as there are cores, then written in order. A page is never held whole.
const CHUNK: usize = 1024;

/// The page's top: its head (title, style, the content security policy its one script is hashed into) and the
/// sidebar with the whole tree.
fn page_top(r: &Reading, opts: Options) -> String {
    let theme = match opts.theme {
        Theme::Auto => "auto",
        Theme::Light => "light",
        Theme::Dark => "dark",
    };
    let csp = format!(
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {}; base-uri 'none'; form-action 'none'",
        script_hash()
    );
    let mut h = String::with_capacity(64 * 1024);
    h.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\" data-theme=\"{theme}\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>{}</title><style>{STYLE}\n{}</style></head><body>\n",
        esc(&r.title),
        highlight::css(opts.theme)
    ));
    // the sidebar
    h.push_str("<nav><h2>Tree</h2><div class=\"tools\"><input type=\"search\" id=\"search\" placeholder=\"Search messages\" aria-label=\"Search messages\">\
        <span class=\"find\"><button type=\"button\" id=\"find-prev\" aria-label=\"Previous match\" title=\"Previous match (Shift+Enter)\">▲</button>\
        <button type=\"button\" id=\"find-next\" aria-label=\"Next match\" title=\"Next match (Enter)\">▼</button>\
        <span id=\"find-pos\" aria-live=\"polite\"></span></span>");
    for (value, label, checked) in [
        ("all", "all", true),
        ("no-results", "no tool results", false),
        ("user", "user messages", false),
        ("checkpoints", "checkpoints", false),
    ] {
        h.push_str(&format!(
            "<label><input type=\"radio\" name=\"filter\" value=\"{value}\"{}> {label}</label>",
            if checked { " checked" } else { "" }
        ));
    }
    h.push_str("</div><div class=\"count\" id=\"count\"></div>");
    h.push_str(&tree(r));
    h.push_str("</nav>\n<main>");
    h
}

/// The header's facts: the tree's size, branches, models, tokens, cost, cache, start, secrets.
fn facts_of(r: &Reading, opts: Options) -> Vec<String> {
    let (models, usage, cost) = r.totals();
    let branches = r.children.values().filter(|k| k.len() > 1).count();
    let mut facts = vec![
        format!("{} messages in the tree", r.all.len()),
        format!("{} on the path shown", r.path.len()),
    ];
    if branches > 0 {
        facts.push(format!(
            "{branches} branch point{}",
            if branches == 1 { "" } else { "s" }
        ));
    }
    if !models.is_empty() {
        facts.push(models.join(", "));
    }
    if usage.output_tokens > 0 {
        facts.push(format!(
            "{} tokens out, {} in, {} cached",
            thousands(usage.output_tokens),
            thousands(usage.input_tokens + usage.cache_creation_input_tokens),
            thousands(usage.cache_read_input_tokens)
        ));
    }
    if let Some(c) = cost {
        facts.push(format!("${c:.2}"));
    }
    if let Some(t) = &r.cache_totals
        && let Some(h) = t.hit_ratio
    {
        facts.push(format!(
            "cache hit {:.1}%, {} miss{}{}",
            h * 100.0,
            t.misses,
            if t.misses == 1 { "" } else { "es" },
            match t.lost {
                Some(l) if t.misses > 0 => format!(" ({} lost)", crate::models::usd(Some(l), 2)),
                _ => String::new(),
            }
        ));
    }
    let started = r
        .path
        .first()
        .map_or(r.conv.created_at, |&i| r.all[i].created_at);
    if let Some(t) = super::reading::time_of(started) {
        facts.push(format!("started {t}"));
    }
    facts.push(if opts.redact {
        match r.redacted {
            0 => "no secrets found".into(),
            1 => "1 secret redacted".into(),
            n => format!("{n} secrets redacted"),
        }
    } else {
        "not redacted".into()
    });
    facts
}

/// Writes the page to `out` as it is drawn; how many redaction marks it holds.
pub fn write_page(
    store: &Store,
    r: &Reading,
    opts: Options,
    out: &mut dyn std::io::Write,
) -> Result<usize, super::ExportError> {
    let mut marks = 0;
    let mut put = |s: &str| -> std::io::Result<()> {
        marks += s.matches("[redacted").count();
        out.write_all(s.as_bytes())
    };
    let mut h = page_top(r, opts);
    // the header: what this is, in figures
    let facts = facts_of(r, opts);
    h.push_str(&format!(
        "<header><h1>{}</h1><p class=\"facts\">{}</p></header>\n",
        esc(&r.title),
        facts
            .iter()
            .map(|f| format!("<span>{}</span>", esc(f)))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    put(&h)?;
    drop(h);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let mut budget = highlight::PAGE_BUDGET;
    for lo in (0..r.all.len()).step_by(CHUNK) {
        let idx: Vec<usize> = (lo..(lo + CHUNK).min(r.all.len())).collect();
        let blobs = blobs_of(store, r, &idx)?;
        let (parts, left) = draw(&blobs, r, &idx, opts, threads, budget)?;
        budget = left;
        for text in parts {
            put(&text)?;
        }
    }
    put(&format!("</main><script>{SCRIPT}</script></body></html>\n"))?;
    Ok(marks)
}

/// The images the articles at `idx` show (theirs, their results', their subagents'), read from the store.
fn blobs_of(
    store: &Store,
    r: &Reading,
    idx: &[usize],
) -> Result<std::collections::HashMap<String, Vec<u8>>, StoreError> {
    fn walk<'a>(bs: &'a [Block], out: &mut Vec<&'a str>) {
        for b in bs {
            match b {
                Block::Image {
                    data: ImageData::Blob { hash, .. },
                    ..
                } => out.push(hash),
                Block::ToolResult {
                    content: ToolResultContent::Blocks(inner),
                    ..
                } => walk(inner, out),
                _ => {}
            }
        }
    }
    let mut hashes = Vec::new();
    for &i in idx {
        walk(&r.all[i].content, &mut hashes);
        for b in &r.all[i].content {
            if let Block::ToolUse { id, .. } = b
                && let Some(sub) = r.subagents.get(id)
            {
                for m in &sub.all {
                    walk(&m.content, &mut hashes);
                }
            }
        }
    }
    let mut blobs = std::collections::HashMap::new();
    for h in hashes {
        if !blobs.contains_key(h) {
            blobs.insert(h.to_string(), store.blob(h)?);
        }
    }
    Ok(blobs)
}

/// The articles at `idx`, drawn in `threads` parts in parallel, in order, and the highlighting budget they left
/// (shared out between the parts, what each leaves passed on).
fn draw(
    blobs: &std::collections::HashMap<String, Vec<u8>>,
    r: &Reading,
    idx: &[usize],
    opts: Options,
    threads: usize,
    budget: usize,
) -> Result<(Vec<String>, usize), super::ExportError> {
    let part = |ix: &[usize], budget: usize| -> (Result<String, StoreError>, usize) {
        highlight::with_budget(budget, || {
            let mut o = String::new();
            for &i in ix {
                o.push_str(&article(blobs, r, i, opts)?);
            }
            Ok(o)
        })
    };
    if threads <= 1 || idx.len() < 64 {
        let (text, left) = part(idx, budget);
        return Ok((vec![text?], left));
    }
    let per = idx.len().div_ceil(threads);
    let parts: Vec<&[usize]> = idx.chunks(per).collect();
    let share = budget / parts.len();
    let done: Vec<std::thread::Result<(Result<String, StoreError>, usize)>> =
        std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .iter()
                .map(|ix| s.spawn(move || part(ix, share)))
                .collect();
            handles.into_iter().map(|h| h.join()).collect()
        });
    let mut left = budget - share * parts.len();
    let mut out = Vec::with_capacity(done.len());
    for d in done {
        let (text, l) = d.map_err(|_| {
            super::ExportError::Write(std::io::Error::other("drawing the page's articles failed"))
        })?;
        out.push(text?);
        left += l;
    }
    Ok((out, left))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csp_names_the_script_by_its_hash() {
        let h = script_hash();
        let expected = format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(
                std::fs::read(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/assets/export/page.js"
                ))
                .unwrap()
            ))
        );
        assert_eq!(h, expected);
    }

    #[test]
    fn long_output_folds_to_its_first_and_last_lines() {
        let text: String = (0..100).map(|k| format!("line {k}\n")).collect();
        let h = output(&text, "");
        assert!(h.contains("… 80 more lines …"), "{h}");
        let head = h.split("<details").next().unwrap();
        assert!(
            head.contains("line 0\n") && head.contains("line 13\n") && !head.contains("line 14\n")
        );
        assert!(h.ends_with("line 99\n</pre>"), "{h}");
    }
}
