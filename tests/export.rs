//! Exports: the lossless JSONL round trip, HTML that runs nothing a transcript carries, provider bodies that a
//! provider would accept (pair-valid), Markdown options, and credentials never leaving in an export.

use std::path::{Path, PathBuf};

use cairn::export::{self, ExportFormat, Options};
use cairn::import;
use cairn::model::{NewMessage, Role};
use cairn::pairs;
use cairn::store::{ImportedMessage, Store};
use serde_json::{Value, json};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

fn store(dir: &tempfile::TempDir, name: &str) -> Store {
    Store::open(dir.path().join(name)).unwrap()
}

const SAMPLES: &[&str] = &[
    "claude-code/cc-rewind-fork-2.1.42.jsonl",
    "claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    "codex/codex-desktop-spawn-agents-0.140.jsonl",
    "pi/pi-v3-compaction-tiny.jsonl",
    "small/cc-quirks.jsonl",
    "small/pi-v2-labels.jsonl",
    "small/openai-request.json",
    "small/codex-out-of-order.jsonl",
];

/// A message as (role, content JSON, meta, parent position).
type Row = (Role, Value, Value, Option<usize>);
/// The tree as positions: rows, tip position, checkpoints by position.
type Shape = (Vec<Row>, Option<usize>, Vec<(String, usize)>);

fn shape(s: &Store, conv: &str) -> Shape {
    let msgs = s.messages(conv).unwrap();
    let pos = |id: &str| msgs.iter().position(|m| m.id == id);
    let rows = msgs
        .iter()
        .map(|m| {
            let content: Vec<Value> = m
                .content
                .iter()
                .map(|b| cairn::wire::block_to_json(b, &cairn::wire::Images::Blob).unwrap())
                .collect();
            (
                m.role,
                Value::Array(content),
                m.meta.clone(),
                m.parent.as_deref().and_then(pos),
            )
        })
        .collect();
    let tip = s.conversation(conv).unwrap().tip.as_deref().and_then(pos);
    let mut cps: Vec<(String, usize)> = s
        .checkpoints(conv)
        .unwrap()
        .into_iter()
        .map(|c| (c.label, pos(&c.message).unwrap()))
        .collect();
    cps.sort();
    (rows, tip, cps)
}

#[test]
fn jsonl_export_imports_back_to_the_same_tree() {
    let dir = tempfile::tempdir().unwrap();
    for sample in SAMPLES {
        let mut a = store(&dir, "a.db");
        let o = import::import_file(&mut a, &fixture(sample), None);
        let conv = o.conversations[0].clone();
        // give it a checkpoint and a second branch so the round trip carries them
        let _ = a.checkpoint(&conv, "cp-1");
        let file = dir.path().join("out.jsonl");
        std::fs::write(
            &file,
            export::export(&a, &conv, None, ExportFormat::Jsonl, Options::default())
                .unwrap()
                .text,
        )
        .unwrap();

        let mut b = store(&dir, "b.db");
        let back = import::import_file(&mut b, &file, None);
        assert!(back.error.is_none(), "{sample}: {:?}", back.error);
        let (ra, ta, ca) = shape(&a, &conv);
        let (rb, tb, cb) = shape(&b, &back.conversations[0]);
        assert_eq!(ra.len(), rb.len(), "{sample}");
        for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
            assert_eq!(x, y, "{sample}: message {i} differs");
        }
        assert_eq!(ta, tb, "{sample}: tip");
        assert_eq!(ca, cb, "{sample}: checkpoints");
        assert_eq!(
            a.conversation(&conv).unwrap().title,
            b.conversation(&back.conversations[0]).unwrap().title
        );
        drop((a, b));
        std::fs::remove_file(dir.path().join("a.db")).unwrap();
        std::fs::remove_file(dir.path().join("b.db")).unwrap();
        let _ = std::fs::remove_file(dir.path().join("a.db-wal"));
        let _ = std::fs::remove_file(dir.path().join("b.db-wal"));
    }
}

#[test]
fn provider_exports_are_pair_valid_for_every_sample() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "p.db");
    for sample in SAMPLES {
        let o = import::import_file(&mut s, &fixture(sample), None);
        let conv = &o.conversations[0];
        let text = export::export(&s, conv, None, ExportFormat::Anthropic, Options::default())
            .unwrap()
            .text;
        let body: Value = serde_json::from_str(&text).unwrap();
        let msgs: Vec<NewMessage> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, m)| cairn::wire::message_from_wire(m, &format!("[{i}]")).unwrap())
            .collect();
        pairs::check(&msgs, false).unwrap_or_else(|e| panic!("{sample}: anthropic body: {e}"));
        for w in msgs.windows(2) {
            assert_ne!(
                w[0].role, w[1].role,
                "{sample}: consecutive same-role messages are merged"
            );
        }
        assert!(
            msgs.iter()
                .all(|m| m.role == Role::User || m.role == Role::Assistant),
            "{sample}"
        );

        let text = export::export(&s, conv, None, ExportFormat::Openai, Options::default())
            .unwrap()
            .text;
        let body: Value = serde_json::from_str(&text).unwrap();
        let msgs = body["messages"].as_array().unwrap();
        // each assistant's tool_calls are answered by tool messages right after it
        for (i, m) in msgs.iter().enumerate() {
            if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                let want: std::collections::HashSet<&str> =
                    calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
                let got: std::collections::HashSet<&str> = msgs[i + 1..]
                    .iter()
                    .take_while(|n| n["role"] == "tool")
                    .map(|n| n["tool_call_id"].as_str().unwrap())
                    .collect();
                assert_eq!(want, got, "{sample}: openai message {i}");
            }
            if m["role"] == "tool" {
                assert!(
                    i > 0
                        && (msgs[i - 1]["role"] == "tool"
                            || msgs[i - 1].get("tool_calls").is_some()),
                    "{sample}: stray tool message {i}"
                );
            }
        }
    }
}

#[test]
fn html_is_self_contained_escapes_everything_and_links_each_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "h.db");
    let evil = "<script>alert(1)</script><img src=x onerror=alert(2)> & \"quotes\"";
    let msgs = vec![
        ImportedMessage {
            parent: None,
            message: NewMessage::text(Role::User, evil),
        },
        ImportedMessage {
            parent: Some(0),
            message: NewMessage::text(Role::Assistant, "</pre></section><script>x()</script>"),
        },
    ];
    let (c, ids) = s
        .import_conversation(Some("<b>title</b>"), &msgs, None, &[], &Value::Null)
        .unwrap();
    let html = export::export(&s, &c, None, ExportFormat::Html, Options::default())
        .unwrap()
        .text;
    // one script, the page's own (pinned by its hash in the CSP); none from the transcript
    assert_eq!(
        html.to_lowercase().matches("<script").count(),
        1,
        "a script tag got through"
    );
    assert!(html.contains("script-src 'sha256-"));
    assert!(!html.contains("<img src=x"), "an attribute got through");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;b&gt;title&lt;/b&gt;"));
    for id in &ids {
        assert!(
            html.contains(&format!("id=\"msg-{id}\"")),
            "no anchor for {id}"
        );
        assert!(html.contains(&format!("href=\"#msg-{id}\"")));
    }
    // nothing is fetched: no http(s) URLs in attributes, a CSP forbids it anyway
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    assert!(html.contains("default-src 'none'"));
    // balanced structure
    assert_eq!(
        html.matches("<section").count(),
        html.matches("</section>").count()
    );
    assert_eq!(html.matches("<ul>").count(), html.matches("</ul>").count());
    assert_eq!(
        html.matches("<details").count(),
        html.matches("</details>").count()
    );
    assert_eq!(
        html.matches("<article").count(),
        html.matches("</article>").count()
    );
}

#[test]
fn html_of_a_real_session_shows_the_tree_and_inline_images() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "h.db");
    let o = import::import_file(&mut s, &fixture("small/cc-quirks.jsonl"), None);
    let html = export::export(
        &s,
        &o.conversations[0],
        None,
        ExportFormat::Html,
        Options::default(),
    )
    .unwrap()
    .text;
    assert!(html.contains(
        "<img alt=\"image\" loading=\"lazy\" src=\"data:image/png;base64,iVBORw0KGgo=\">"
    ));
    // both branches are in the sidebar, the tip marked once
    assert!(html.contains("version A") && html.contains("version B"));
    let nav = &html[html.find("<nav>").unwrap()..html.find("</nav>").unwrap()];
    assert_eq!(nav.matches("◀ tip").count(), 1);
    assert_eq!(html.matches("<ul>").count(), html.matches("</ul>").count());
}

#[test]
fn markdown_fences_tool_output_and_honours_options() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "m.db");
    let o = import::import_file(&mut s, &fixture("small/cc-quirks.jsonl"), None);
    let c = &o.conversations[0];
    let md = export::export(&s, c, None, ExportFormat::Markdown, Options::default())
        .unwrap()
        .text;
    // a call by its name and telling argument, its result fenced beneath it
    assert!(
        md.contains("**Bash** `ls`\n\nResult:\n\n```\na.txt\n```"),
        "{md}"
    );
    assert!(md.contains("**Read** `x`"), "{md}");
    assert!(md.contains("Thinking"));
    let lean = export::export(
        &s,
        c,
        None,
        ExportFormat::Markdown,
        Options {
            tool_results: false,
            thinking: false,
            redact: true,
            ..Options::default()
        },
    )
    .unwrap()
    .text;
    assert!(!lean.contains("a.txt"), "{lean}");
    assert!(lean.contains("**Bash** `ls`"));
    assert!(!lean.contains("<summary>Thinking"));
    // text with backticks cannot close the fence early
    let msgs = vec![ImportedMessage {
        parent: None,
        message: NewMessage::new(
            Role::User,
            vec![cairn::model::Block::ToolResult {
                tool_use_id: "x".into(),
                content: cairn::model::ToolResultContent::Text("```\nbreakout".into()),
                is_error: false,
            }],
        ),
    }];
    let (c2, _) = s
        .import_conversation(None, &msgs, None, &[], &Value::Null)
        .unwrap();
    let md = export::export(&s, &c2, None, ExportFormat::Markdown, Options::default())
        .unwrap()
        .text;
    assert!(md.contains("````\n```\nbreakout\n````"), "{md}");
}

#[test]
fn exports_never_carry_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "k.db");
    let mut m = NewMessage::text(Role::User, "hi");
    m.meta = json!({"env": {"ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}, "apiKey": "plain", "headers": {"authorization": "Bearer abcdefghijklmnopqrstuvwxyz"}});
    let msgs = vec![ImportedMessage {
        parent: None,
        message: m,
    }];
    let (c, _) = s
        .import_conversation(
            None,
            &msgs,
            None,
            &[],
            &json!({"provider": {"api_key": "secret-value"}}),
        )
        .unwrap();
    for fmt in [
        ExportFormat::Jsonl,
        ExportFormat::Html,
        ExportFormat::Markdown,
        ExportFormat::Anthropic,
        ExportFormat::Openai,
    ] {
        let out = export::export(&s, &c, None, fmt, Options::default())
            .unwrap()
            .text;
        for secret in [
            "sk-ant-api03",
            "plain\"",
            "abcdefghijklmnopqrstuvwxyz",
            "secret-value",
        ] {
            assert!(!out.contains(secret), "{fmt:?} leaked {secret}");
        }
    }
}

/// The readable exports of a Claude Code-shaped session: preambles folded under one line, the title the user's
/// prompt, an Edit as a diff under its call with its result, per-reply model and tokens.
#[test]
fn readable_exports_fold_preambles_and_show_edits_as_diffs() {
    use cairn::model::{Block, ToolResultContent, Usage};
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "r.db");
    let mut reply = NewMessage::new(
        Role::Assistant,
        vec![
            Block::text("Fixing the **off-by-one**:"),
            Block::ToolUse {
                id: "e1".into(),
                name: "Edit".into(),
                input: json!({"file_path": "src/lib.rs", "old_string": "for i in 0..=n {", "new_string": "for i in 0..n {"}),
            },
        ],
    );
    reply.meta = json!({"model": "claude-opus-4-5"});
    reply.usage = Some(Usage {
        input_tokens: 1200,
        output_tokens: 80,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        ..Usage::default()
    });
    let chain = vec![
        NewMessage::text(
            Role::User,
            "Caveat: The messages below were generated by the user while running local commands. DO NOT respond.",
        ),
        NewMessage::text(Role::User, "<command-name>/model</command-name>"),
        NewMessage::text(Role::User, "Fix the loop in src/lib.rs <b>now</b>"),
        reply,
        NewMessage::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: "e1".into(),
                content: ToolResultContent::Text("The file src/lib.rs has been updated.".into()),
                is_error: false,
            }],
        ),
        NewMessage::text(Role::Assistant, "Done."),
    ];
    let msgs: Vec<ImportedMessage> = chain
        .into_iter()
        .enumerate()
        .map(|(i, message)| ImportedMessage {
            parent: i.checked_sub(1),
            message,
        })
        .collect();
    let (c, ids) = s
        .import_conversation(None, &msgs, None, &[], &Value::Null)
        .unwrap();
    let html = export::export(&s, &c, None, ExportFormat::Html, Options::default())
        .unwrap()
        .text;
    // the title is what the user typed, not the caveat
    assert!(
        html.contains("<title>Fix the loop in src/lib.rs &lt;b&gt;now&lt;/b&gt;</title>"),
        "{html}"
    );
    // both preamble messages fold, each under one line
    for id in &ids[..2] {
        let at = html.find(&format!("<article id=\"msg-{id}\"")).unwrap();
        let art = &html[at..at + html[at..].find("</article>").unwrap()];
        assert!(
            art.contains("class=\"preamble\"><details><summary>harness preamble:"),
            "{art}"
        );
    }
    // the Edit: its call by name and path, the diff, its result under it, and the tool message reduced to a pointer
    let at = html
        .find("<section class=\"tool-call\" data-tool=\"Edit\">")
        .unwrap();
    let call = &html[at..at + html[at..].find("</section>").unwrap()];
    assert!(call.contains("<b>Edit</b> src/lib.rs"), "{call}");
    assert!(
        // the word that changed within the line marked
        call.contains(
            "<span class=\"d-del\">-for i in 0..<span class=\"d-wc\">=</span>n {\n</span>"
        ),
        "{call}"
    );
    assert!(
        call.contains("<span class=\"d-add\">+for i in 0..n {\n</span>"),
        "{call}"
    );
    assert!(
        call.contains("The file src/lib.rs has been updated."),
        "{call}"
    );
    assert!(html.contains("<strong>off-by-one</strong>"));
    // the reply's model and tokens
    assert!(
        html.contains("<span>claude-opus-4-5</span>")
            && html.contains("in 1,200 · cached 0 · out 80"),
        "{html}"
    );

    let md = export::export(&s, &c, None, ExportFormat::Markdown, Options::default())
        .unwrap()
        .text;
    assert!(md.starts_with("# Fix the loop in src/lib.rs"), "{md}");
    assert!(
        md.contains("<details><summary>Harness preamble (2 messages)</summary>"),
        "{md}"
    );
    assert!(
        md.contains("**Edit** `src/lib.rs`\n\n```diff\n--- src/lib.rs\n+++ src/lib.rs\n"),
        "{md}"
    );
    assert!(md.contains("-for i in 0..=n {\n+for i in 0..n {"), "{md}");
    assert!(
        md.contains("claude-opus-4-5") && md.contains("in 1200 · cached 0 · out 80"),
        "{md}"
    );
}

/// pi writes each result of parallel calls as its own message, one after another: every result is drawn under its
/// call, and no card stands in for a message whose results are drawn elsewhere.
#[test]
fn html_draws_every_result_under_its_call_and_no_placeholder_cards() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "x.db");
    let o = import::import_file(
        &mut s,
        &fixture("pi/pi-v1-large-session-thinking-level-changes.jsonl"),
        None,
    );
    let conv = o.conversations[0].clone();
    let msgs = s.active_path(&conv).unwrap();
    let answered: std::collections::HashSet<String> = msgs
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            cairn::model::Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
            _ => None,
        })
        .collect();
    let calls: Vec<String> = msgs
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            cairn::model::Block::ToolUse { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    let with_result = calls.iter().filter(|c| answered.contains(*c)).count();
    assert!(with_result > 150, "{with_result}");
    let page = export::export(&s, &conv, None, ExportFormat::Html, Options::default())
        .unwrap()
        .text;
    let sections: Vec<&str> = page.split("<section class=\"tool-call\"").skip(1).collect();
    assert_eq!(sections.len(), calls.len());
    let drawn = sections
        .iter()
        .filter(|x| {
            let end = x.find("</section>").unwrap_or(x.len());
            x[..end].contains("class=\"result")
        })
        .count();
    assert_eq!(drawn, with_result, "every call's result under it");
    assert!(!page.contains("the results shown under the calls above"));
    // pi's setting changes and its aborted replies show where they happened
    assert!(
        page.contains("thinking → minimal"),
        "thinking-level changes shown"
    );
    assert!(page.contains(">aborted</span>"), "aborted replies marked");
    let md = export::export(&s, &conv, None, ExportFormat::Markdown, Options::default())
        .unwrap()
        .text;
    assert!(md.contains("thinking → minimal") && md.contains("aborted"));
}

/// A harness compaction says how large the context was when it compacted, as the harness recorded it.
#[test]
fn a_pi_compaction_shows_the_tokens_before_and_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "x.db");
    let o = import::import_file(
        &mut s,
        &fixture("pi/pi-v1-before-compaction-two-compactions.jsonl"),
        None,
    );
    let conv = o.conversations[0].clone();
    // after: the prompt the provider measured on the next request, as the file recorded it
    let path = s.active_path(&conv).unwrap();
    let at = path
        .iter()
        .rposition(|m| {
            m.meta
                .pointer("/entry/tokensBefore")
                .and_then(Value::as_u64)
                == Some(185_014)
        })
        .unwrap();
    let after = path[at + 1..]
        .iter()
        .find_map(|m| m.usage)
        .unwrap()
        .prompt();
    let after = format!("{after}");
    let after = after
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(",");
    for f in [ExportFormat::Html, ExportFormat::Markdown] {
        let page = export::export(&s, &conv, None, f, Options::default())
            .unwrap()
            .text;
        assert!(
            page.contains(&format!(
                "compacted the conversation here, at 185,014 tokens → {after} after"
            )),
            "{f:?}: {after}"
        );
    }
}

/// Each subagent the path spawned sits under the call that spawned it: folded, its own messages and figures, its
/// elements apart from the page's articles (which the page's script shows and hides along the tree).
#[test]
fn html_shows_each_subagent_under_its_spawning_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "x.db");
    let o = import::import_file(
        &mut s,
        &fixture("claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"),
        None,
    );
    let conv = o.conversations[0].clone();
    let subs: Vec<_> = s
        .conversations()
        .unwrap()
        .into_iter()
        .filter(|c| c.linked_to.as_deref() == Some(conv.as_str()) && c.spawned_by.is_some())
        .collect();
    assert!(!subs.is_empty());
    let page = export::export(&s, &conv, None, ExportFormat::Html, Options::default())
        .unwrap()
        .text;
    assert_eq!(
        page.matches("<details class=\"subagent\" id=\"agent-")
            .count(),
        subs.len()
    );
    for sub in &subs {
        // linked from the tree, by the call that spawned it
        let call = sub.spawned_by.as_deref().unwrap();
        assert!(
            page.contains(&format!("class=\"n agent\" href=\"#agent-{call}\"")),
            "{call}"
        );
        let first = s.active_path(&sub.id).unwrap()[0].id.clone();
        assert!(page.contains(&format!("id=\"sub-{first}\"")), "{}", sub.id);
        assert!(!page.contains(&format!("id=\"msg-{first}\"")));
        // under its own call's section
        let call = sub.spawned_by.as_deref().unwrap();
        let at = page.find(&format!("id=\"sub-{first}\"")).unwrap();
        let section = page[..at].rfind("<section class=\"tool-call\"").unwrap();
        assert!(
            !page[section..at].contains("</section>"),
            "{call}: not inside its call"
        );
    }
    let md = export::export(&s, &conv, None, ExportFormat::Markdown, Options::default())
        .unwrap()
        .text;
    assert_eq!(
        md.matches("<details><summary>subagent: ").count(),
        subs.len()
    );
}

/// The gutters of a page's numbered diffs, each as (old, new) line numbers.
fn gutters(page: &str) -> Vec<(Option<u32>, Option<u32>)> {
    page.split("<span class=\"ln\">")
        .skip(1)
        .filter_map(|g| g.split("</span>").next())
        .map(|g| {
            let mut it = g.split_whitespace().map(|n| n.parse::<u32>().ok());
            (it.next().flatten(), it.next().flatten())
        })
        .collect()
}

#[test]
fn html_diffs_carry_the_files_line_numbers_the_harness_recorded_and_the_words_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    for (f, first) in [
        // Claude Code's structuredPatch: the hunk's start in the old and the new file
        ("claude-code/cc-2.0.5-image-paste.jsonl", "oldStart"),
        // pi's numbered details.diff
        ("pi/pi-v1-before-compaction-two-compactions.jsonl", "diff"),
    ] {
        let mut s = store(&dir, &format!("{first}.db"));
        let o = import::import_file(&mut s, &fixture(f), None);
        assert!(o.error.is_none(), "{f}: {:?}", o.error);
        let page = export::export(
            &s,
            &o.conversations[0],
            None,
            ExportFormat::Html,
            Options::default(),
        )
        .unwrap()
        .text;
        assert!(page.contains("<pre class=\"patch numbered\">"), "{f}");
        let g = gutters(&page);
        assert!(g.len() > 20, "{f}: {} numbered lines", g.len());
        // numbers are the file's, not the fragment's: most edits sit past line 1
        assert!(
            g.iter()
                .filter(|(o, n)| o.unwrap_or(1) > 1 || n.unwrap_or(1) > 1)
                .count()
                > g.len() / 2,
            "{f}"
        );
        // within a replaced line, the changed words are marked
        assert!(page.contains("<span class=\"d-wc\">"), "{f}");
    }
    // the first structured hunk of an edit in the Claude Code sample, as the file recorded it
    let text = std::fs::read_to_string(fixture("claude-code/cc-2.0.5-image-paste.jsonl")).unwrap();
    let hunk = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        // an Edit's (a Write's result carries a patch too, but the page shows the file written)
        .filter(|v| v.pointer("/toolUseResult/oldString").is_some())
        .find_map(|v| v.pointer("/toolUseResult/structuredPatch/0").cloned())
        .unwrap();
    let mut s = store(&dir, "cc.db");
    let o = import::import_file(
        &mut s,
        &fixture("claude-code/cc-2.0.5-image-paste.jsonl"),
        None,
    );
    let page = export::export(
        &s,
        &o.conversations[0],
        None,
        ExportFormat::Html,
        Options::default(),
    )
    .unwrap()
    .text;
    let (old, new) = (
        hunk["oldStart"].as_u64().unwrap() as u32,
        hunk["newStart"].as_u64().unwrap() as u32,
    );
    assert!(
        page.contains(&format!(
            "@@ -{old},{} +{new},{} @@",
            hunk["oldLines"], hunk["newLines"]
        )),
        "the hunk header"
    );
    // an edit whose result recorded nothing is drawn without numbers (a fragment's are not the file's)
    let mut s = store(&dir, "labels.db");
    let o = import::import_file(&mut s, &fixture("small/cc-quirks.jsonl"), None);
    let page = export::export(
        &s,
        &o.conversations[0],
        None,
        ExportFormat::Html,
        Options::default(),
    )
    .unwrap()
    .text;
    assert!(!page.contains("patch numbered"));
}

#[test]
fn an_html_page_written_to_a_file_is_streamed_and_the_same_page() {
    use cairn::commands::{self, Action, Outcome, Quiet};
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(&dir, "s.db");
    // a session with a secret in it: the page states as many redactions as it marks
    let o = import::import_file(
        &mut s,
        &fixture("claude-code/cc-2.0.5-image-paste.jsonl"),
        None,
    );
    let conv = o.conversations[0].clone();
    let key = "sk-ant-api03-".to_string() + &"Qm7".repeat(30) + "AA";
    s.append_turn(
        &conv,
        &[
            NewMessage::text(Role::User, format!("use {key} for the deploy")),
            NewMessage::text(Role::Assistant, "done"),
        ],
    )
    .unwrap();
    let opts = Options::default();
    let whole = export::export(&s, &conv, None, ExportFormat::Html, opts).unwrap();
    let out = dir.path().join("page.html");
    let Outcome::Exported { exported, .. } = commands::run(
        &mut s,
        &cairn::reclaim::Settings::default(),
        Action::Export {
            conversation: conv.clone(),
            at: None,
            format: ExportFormat::Html,
            options: opts,
            out: Some(out.clone()),
        },
        &Quiet,
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap() else {
        panic!()
    };
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(exported.text.is_empty(), "streamed, not held");
    assert_eq!(exported.bytes, written.len() as u64);
    assert_eq!(written, whole.text);
    assert!(!written.contains(&key));
    let marks = written.matches("[redacted").count();
    assert!(marks >= 1);
    assert_eq!(exported.redacted, marks);
    let said = if marks == 1 {
        "1 secret redacted".to_string()
    } else {
        format!("{marks} secrets redacted")
    };
    assert!(written.contains(&said), "the page says {said}");
}

#[test]
fn a_result_inside_a_reply_goes_to_a_provider_as_a_note() {
    // a transcript whose reply holds a tool result (no provider accepts one there)
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.jsonl");
    std::fs::write(
        &f,
        [
            r#"{"role":"user","message":{"content":[{"type":"text","text":"why does it hang?"}]}}"#,
            r#"{"role":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"ReadFile","input":{"path":"q.rs"}}]}}"#,
            r#"{"role":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"loop {}"}]}}"#,
            r#"{"role":"assistant","message":{"content":[{"type":"tool_result","tool_use_id":"orphan","content":"x"}]}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let mut s = store(&dir, "s.db");
    let o = import::import_file(&mut s, &f, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    for format in [ExportFormat::Anthropic, ExportFormat::Openai] {
        let e = export::export(&s, &o.conversations[0], None, format, Options::default()).unwrap();
        assert!(e.repairs.orphan_results >= 1, "{format:?}");
        let body: Value = serde_json::from_str(&e.text).unwrap();
        if format == ExportFormat::Anthropic {
            let msgs: Vec<NewMessage> = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| cairn::wire::message_from_wire(m, "m").unwrap())
                .collect();
            pairs::check(&msgs, false).unwrap();
            let last = msgs.last().unwrap();
            assert_eq!(last.role, Role::Assistant);
            assert!(cairn::model::plain_text(&last.content).contains("result of tool call orphan"));
        }
    }
}

#[test]
fn a_prompt_of_blocks_no_provider_takes_leaves_the_request_opening_with_the_user() {
    // a Codex rollout whose first prompt holds only a part of a type no provider knows: its message has nothing to
    // send, and the request must still open with the user (the repair sees what is sent, not what is stored)
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rollout.jsonl");
    let lines = [
        json!({"id": "6c1f-legacy", "timestamp": "2025-05-01T10:00:00Z", "instructions": "You are Codex."}),
        json!({"type": "message", "role": "user", "content": [{"type": "i.put_text", "text": "List the files"}]}),
        json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "call_1"}),
        json!({"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One file: a.txt"}]}),
    ];
    std::fs::write(&f, lines.map(|l| l.to_string()).join("\n")).unwrap();
    let mut s = store(&dir, "u.db");
    let o = import::import_file(&mut s, &f, None);
    assert!(o.error.is_none(), "{:?}", o.error);
    let conv = &o.conversations[0];
    for format in [ExportFormat::Anthropic, ExportFormat::Openai] {
        let e = export::export(&s, conv, None, format, Options::default()).unwrap();
        let body: Value = serde_json::from_str(&e.text).unwrap();
        let first = &body["messages"][0];
        assert_eq!(first["role"], "user", "{format:?}: {first}");
        assert_eq!(e.repairs.opening_notes, 1, "{format:?}");
    }
}
