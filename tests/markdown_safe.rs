//! The Markdown export shows a transcript's HTML, never passes it through: rendered by a common Markdown renderer
//! (pulldown-cmark, raw HTML allowed as CommonMark allows it), no tag from the transcript comes out as a tag.

use std::process::Command;

use serde_json::{Value, json};

#[test]
fn html_in_titles_models_and_messages_is_shown_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let payload = "<script>fetch('http://127.0.0.1:9/x')</script><img src=x onerror=alert(1)>";
    let lines = [
        json!({"type": "summary", "summary": format!("title {payload}"), "leafUuid": "a1"}),
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s1",
               "timestamp": "2026-11-02T10:00:00Z",
               "message": {"role": "user", "content": format!("hello {payload}\n\n`<b>in code</b>`\n\n```\n<i>fenced</i>\n```")}}),
        json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1",
               "timestamp": "2026-11-02T10:00:05Z",
               "message": {"id": "m1", "role": "assistant", "model": format!("m{payload}"),
                           "content": [{"type": "text", "text": format!("reply {payload}")},
                                       {"type": "thinking", "thinking": format!("hmm {payload}"), "signature": "s"}]}}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&file, text.join("\n") + "\n").unwrap();
    let db = dir.path().join("t.db");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let out = run(&["import", file.to_str().unwrap()]);
    let conv = out.split_whitespace().next().unwrap().to_string();
    let md = run(&["export", &conv, "--format", "markdown"]);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new(&md));
    for tag in ["<script", "<img", "<b>", "<i>"] {
        assert!(!html.contains(tag), "{tag} came out as a tag:\n{html}");
    }
    // what was typed is still there to read, and code keeps its text
    assert!(
        html.contains("&lt;script&gt;") || html.contains("&amp;lt;script"),
        "{html}"
    );
    assert!(
        md.contains("`<b>in code</b>`") && md.contains("<i>fenced</i>"),
        "{md}"
    );
}
