//! The HTML export opened in a real browser (headless Chromium): every script-injection payload a transcript can
//! carry stays text, nothing runs, and the page requests nothing, not even from a server listening on this machine.
//!
//! Needs Debian's `chromium` (`.ci/run` and `scripts/test` install it as root). Where it cannot be found the test
//! fails and says so, unless `CAIRN_NO_BROWSER=1` is set (a machine that cannot have a browser).

#[path = "support/helpers.rs"]
mod helpers;

use std::io::Read as _;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::export::{ExportFormat, Options};
use cairn::reclaim::Settings;
use cairn::store::Store;
use serde_json::json;

fn run(s: &mut Store, a: Action) -> Outcome {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false)).unwrap()
}

use helpers::chromium;

/// A listener on this machine that counts every connection made to it (the page must make none).
struct Canary {
    port: u16,
    hits: Arc<AtomicUsize>,
}

fn canary() -> Canary {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            h.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 1024];
            c.set_read_timeout(Some(Duration::from_millis(200))).ok();
            while matches!(c.read(&mut buf), Ok(n) if n > 0) {}
        }
    });
    Canary { port, hits }
}

/// 24 payloads: scripts, event handlers, `javascript:` URLs, frames, markup breakouts, and requests to the canary.
fn payloads(port: u16) -> Vec<String> {
    let act =
        "document.title='PWNED';document.body.appendChild(document.createElement('pwn'+'ed'))";
    let url = format!("http://127.0.0.1:{port}");
    vec![
        format!("<script>{act}</script>"),
        format!("<img src=x onerror=\"{act}\">"),
        format!("<svg onload=\"{act}\"></svg>"),
        format!("</pre></div></article><script>{act}</script>"),
        format!("</textarea></title></style><script>{act}</script>"),
        format!("\"><script>{act}</script>"),
        format!("'><img src=x onerror=\"{act}\">"),
        format!("<a href=\"javascript:{act}\">click me</a>"),
        format!("[click me](javascript:{act})"),
        format!("<iframe src=\"javascript:{act}\"></iframe>"),
        format!("<iframe srcdoc=\"<script>{act}</script>\"></iframe>"),
        format!("<object data=\"javascript:{act}\"></object>"),
        format!("<embed src=\"{url}/embed\">"),
        format!("<body onload=\"{act}\">"),
        format!("<details open ontoggle=\"{act}\"><summary>x</summary></details>"),
        format!("<style>@import url({url}/css);</style>"),
        format!("<link rel=stylesheet href=\"{url}/link\">"),
        format!("<meta http-equiv=\"refresh\" content=\"0;url={url}/refresh\">"),
        format!("<img src=\"{url}/img\">"),
        format!("![tracker]({url}/markdown-image.png)"),
        format!("<base href=\"{url}/\"><a href=\"x\">relative</a>"),
        format!("<math><mtext></p><script>{act}</script></mtext></math>"),
        format!("<noscript><p title=\"</noscript><img src=x onerror='{act}'>\"></noscript>"),
        format!("<video><source onerror=\"{act}\"></video><input autofocus onfocus=\"{act}\">"),
    ]
}

/// A conversation carrying every payload in every place a transcript puts text: prompts, replies, thinking, tool
/// names and inputs, tool output, an error result, an image's media type, a side branch, a checkpoint label.
fn hostile_store(dir: &Path, port: u16) -> (Store, String, Vec<String>, Vec<String>) {
    let p = payloads(port);
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgAB4iG8MwAAAABJRU5ErkJggg==";
    let mut messages = Vec::new();
    for (i, chunk) in p.chunks(4).enumerate() {
        let id = format!("toolu_{i}");
        messages.push(json!({"role": "user", "content": [
            {"type": "text", "text": format!("prompt {i}: {}", chunk[0])},
        ]}));
        messages.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": chunk[1].clone(), "signature": "sig"},
            {"type": "text", "text": chunk[2].clone()},
            {"type": "tool_use", "id": id, "name": format!("Bash{}", chunk[3]), "input": {"command": chunk[3].clone(), chunk[1].clone(): chunk[0].clone()}},
        ]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "is_error": i % 2 == 1, "content": [
                {"type": "text", "text": format!("{}\n{}\n{}", chunk[0], chunk[2], chunk[3])},
                {"type": "image", "source": {"type": "base64", "media_type": format!("image/png\" onerror=\"{}", chunk[1]), "data": png}},
            ]},
        ]}));
        messages.push(json!({"role": "assistant", "content": format!("done {i}: {}", chunk[2])}));
    }
    let body = json!({"model": "claude-x", "system": p[0].clone(), "max_tokens": 100, "messages": messages});
    let file = dir.join(format!("{}.json", "hostile"));
    std::fs::write(&file, body.to_string()).unwrap();
    let mut s = Store::open(dir.join("browser.db")).unwrap();
    let conv = match run(
        &mut s,
        Action::Import {
            paths: vec![file],
            format: None,
        },
    ) {
        Outcome::Imported(o) => {
            assert!(o[0].error.is_none(), "{:?}", o[0].error);
            o[0].conversations[0].clone()
        }
        _ => panic!("import"),
    };
    // a checkpoint named by a payload, and a side branch from the middle holding the rest
    run(
        &mut s,
        Action::Checkpoint {
            conversation: conv.clone(),
            label: Some("\"><svg onload=document.title='PWNED'>".into()),
        },
    );
    let path = s.active_path(&conv).unwrap();
    let side_from = path[path.len() / 2].id.clone();
    let tip = path[path.len() - 1].id.clone();
    run(
        &mut s,
        Action::Branch {
            conversation: conv.clone(),
            message: side_from,
            expect: None,
        },
    );
    let side = vec![
        cairn::model::NewMessage::text(cairn::model::Role::User, format!("side: {}", p[2])),
        cairn::model::NewMessage::text(cairn::model::Role::Assistant, format!("side: {}", p[3])),
    ];
    run(
        &mut s,
        Action::Append {
            conversation: conv.clone(),
            messages: side,
        },
    );
    let side_path = s.active_path(&conv).unwrap();
    let side_ids: Vec<String> = side_path[side_path.len() - 2..]
        .iter()
        .map(|m| m.id.clone())
        .collect();
    run(
        &mut s,
        Action::Branch {
            conversation: conv.clone(),
            message: tip,
            expect: None,
        },
    );
    (s, conv, p, side_ids)
}

/// Chromium's DOM of `url` once the page has loaded and its timers have had time to run.
fn dump_dom(browser: &Path, url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--virtual-time-budget=3000",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
            url,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The opening tags of the real elements in a serialised DOM (text and attribute values escape `<`).
fn tags(dom: &str) -> Vec<String> {
    dom.split('<')
        .skip(1)
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic()))
        .map(|t| t.split('>').next().unwrap_or("").to_ascii_lowercase())
        .collect()
}

/// The attributes of a serialised opening tag (values are double-quoted, a quote inside one is `&quot;`).
fn attrs(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let rest = tag.trim_end_matches('/');
    let mut rest = rest.split_once(char::is_whitespace).map_or("", |(_, r)| r);
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let end = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let name = rest[..end].to_string();
        rest = &rest[end..];
        let mut value = String::new();
        if let Some(r) = rest.strip_prefix("=\"") {
            let close = r.find('"').unwrap_or(r.len());
            value = r[..close].to_string();
            rest = r.get(close + 1..).unwrap_or("");
        }
        out.push((name, value));
    }
    out
}

#[test]
fn html_export_in_chromium_runs_no_payload_and_requests_nothing() {
    let Some(browser) = chromium() else {
        if std::env::var_os("CAIRN_NO_BROWSER").is_some() {
            return;
        }
        panic!(
            "chromium not found: apt-get install chromium (or set CAIRN_NO_BROWSER=1 where no browser can be)"
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let canary = canary();
    // the detectors themselves work: a page that is not inert trips both
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        format!(
            "<html><body><img src=\"http://127.0.0.1:{}/control\"><script>{}</script></body></html>",
            canary.port, "document.body.appendChild(document.createElement('pwn'+'ed'))"
        ),
    )
    .unwrap();
    let control_dom = dump_dom(&browser, &format!("file://{}", control.display()));
    assert!(
        control_dom.contains("<pwned"),
        "the script detector is blind"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        canary.hits.swap(0, Ordering::SeqCst) > 0,
        "the request detector is blind"
    );

    let (s, conv, payloads, side) = hostile_store(dir.path(), canary.port);
    let opts = Options {
        redact: true,
        ..Options::default()
    };
    let page = cairn::export::export(&s, &conv, None, ExportFormat::Html, opts).unwrap();
    let file = dir.path().join("export.html");
    std::fs::write(&file, &page.text).unwrap();
    let dom = dump_dom(&browser, &format!("file://{}", file.display()));

    assert!(
        dom.contains("prompt 5"),
        "the page did not load: {}",
        &dom[..dom.len().min(400)]
    );
    // nothing ran: no node added, the title is still the conversation's
    assert!(!dom.contains("<pwned"), "a payload ran");
    assert!(!dom.contains("<title>PWNED"), "a payload changed the title");
    // no element a payload could have brought in; the page's own script and controls are the only ones of kind
    let mut scripts = 0;
    for t in tags(&dom) {
        let name = t.split_whitespace().next().unwrap_or("");
        if name == "script" {
            scripts += 1;
            assert_eq!(t, "script", "a script with attributes: <{t}>");
            continue;
        }
        if name == "button" {
            assert!(
                t.starts_with("button type=\"button\" id=\"find-prev\"")
                    || t.starts_with("button type=\"button\" id=\"find-next\""),
                "a transcript element reached the page: <{t}>"
            );
            continue;
        }
        if name == "input" {
            assert!(
                t.starts_with("input type=\"search\" id=\"search\"")
                    || t.starts_with("input type=\"radio\" name=\"filter\""),
                "a transcript element reached the page: <{t}>"
            );
            continue;
        }
        assert!(
            !matches!(
                name,
                "iframe"
                    | "object"
                    | "embed"
                    | "svg"
                    | "base"
                    | "link"
                    | "video"
                    | "math"
                    | "form"
                    | "button"
            ),
            "a transcript element reached the page: <{t}>"
        );
        for (attr, value) in attrs(&t) {
            assert!(
                !attr.starts_with("on"),
                "an event handler reached the page: <{t}>"
            );
            assert!(
                !value.trim_start().starts_with("javascript:"),
                "a javascript: URL reached the page: <{t}>"
            );
        }
        if name == "img" {
            assert!(
                t.contains("src=\"data:image/"),
                "an image not inline: <{t}>"
            );
        }
        if name == "meta" {
            assert!(!t.contains("refresh"), "a refresh reached the page: <{t}>");
        }
    }
    assert_eq!(scripts, 1, "the page's own script, and no other");
    // the page's script ran (it marks the body): the content-security-policy lets it, by its hash
    assert!(
        dom.contains("<body class=\"js"),
        "the page's own script did not run"
    );
    // every payload is still there for a reader, as text
    let text = dom
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
        .replace("&quot;", "\"");
    for p in &payloads {
        let head: String = p.chars().take(24).collect();
        assert!(text.contains(&head), "payload not shown as text: {p}");
    }
    // `#msg-ID` of a side-branch message shows that branch: its messages, not the active path's after the fork
    let side_dom = dump_dom(
        &browser,
        &format!("file://{}#msg-{}", file.display(), side[1]),
    );
    let visible = |dom: &str, id: &str| {
        tags(dom)
            .iter()
            .find(|t| t.starts_with("article ") && t.contains(&format!("id=\"msg-{id}\"")))
            .map(|t| !attrs(t).iter().any(|(a, _)| a == "hidden"))
    };
    let active = s.active_path(&conv).unwrap();
    let tip = active.last().unwrap().id.to_ascii_lowercase();
    for id in &side {
        let id = id.to_ascii_lowercase();
        assert_eq!(
            visible(&dom, &id),
            Some(false),
            "side message shown before it was asked for"
        );
        assert_eq!(
            visible(&side_dom, &id),
            Some(true),
            "#msg-{id} does not show its branch"
        );
    }
    assert_eq!(visible(&dom, &tip), Some(true));
    assert_eq!(
        visible(&side_dom, &tip),
        Some(false),
        "the active path's tip still shown on the side branch"
    );
    assert_eq!(
        visible(&side_dom, &active[0].id.to_ascii_lowercase()),
        Some(true),
        "the root is on every path"
    );
    // and nothing was requested, not even from this machine
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        canary.hits.load(Ordering::SeqCst),
        0,
        "the page made a request"
    );
}

#[test]
fn html_export_marks_each_match_with_a_count_and_opens_a_subagent_from_the_tree() {
    let Some(browser) = chromium() else {
        if std::env::var_os("CAIRN_NO_BROWSER").is_some() {
            return;
        }
        panic!("chromium not found: apt-get install chromium (or set CAIRN_NO_BROWSER=1)");
    };
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path().join("s.db")).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl");
    let Outcome::Imported(out) = run(
        &mut s,
        Action::Import {
            paths: vec![fixture],
            format: None,
        },
    ) else {
        panic!()
    };
    let conv = out[0].conversations[0].clone();
    let page =
        cairn::export::export(&s, &conv, None, ExportFormat::Html, Options::default()).unwrap();
    // the sidebar links the subagent the path spawned
    let call = page
        .text
        .split("href=\"#agent-")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .expect("a subagent link in the tree")
        .to_string();
    let file = dir.path().join("page.html");
    std::fs::write(&file, &page.text).unwrap();
    let url = format!("file://{}", file.display());

    // a link to a search: every match marked, the third the current one, counted
    let dom = dump_dom(&browser, &format!("{url}#find=beads&at=3"));
    let marks = dom.matches("<mark class=\"hit").count();
    let current = dom.matches("<mark class=\"hit cur\"").count();
    assert!(marks > 3, "{marks} marks");
    assert_eq!(current, 1);
    assert!(
        dom.contains(&format!(
            "id=\"find-pos\" aria-live=\"polite\">3 of {marks}<"
        )),
        "{}",
        dom.split("find-pos")
            .nth(1)
            .unwrap_or("")
            .chars()
            .take(80)
            .collect::<String>()
    );
    // every mark holds the word, in any case
    for m in dom.split("<mark class=\"hit").skip(1) {
        let word = m
            .split('>')
            .nth(1)
            .and_then(|t| t.split('<').next())
            .unwrap_or("");
        assert_eq!(word.to_lowercase(), "beads", "{word}");
    }
    // nothing is marked without a search
    assert_eq!(dump_dom(&browser, &url).matches("<mark").count(), 0);

    // the tree's link to the subagent unfolds it where it was spawned
    let dom = dump_dom(&browser, &format!("{url}#agent-{call}"));
    let tag = dom
        .split(&format!("id=\"agent-{call}\""))
        .next()
        .and_then(|t| t.rsplit('<').next())
        .unwrap_or("")
        .to_string();
    let after = dom
        .split(&format!("id=\"agent-{call}\""))
        .nth(1)
        .and_then(|t| t.split('>').next())
        .unwrap_or("");
    assert!(
        tag.starts_with("details") && (tag.contains(" open") || after.contains("open")),
        "<{tag}…{after}>"
    );
}
