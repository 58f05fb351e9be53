//! What opencode takes out of the context without writing a message of its own: the old tool outputs its prune
//! clears (`state.time.compacted` on the tool part; the output stays in the session), and everything before the
//! recent turns a compaction keeps after its summary (`tail_start_id` on the compaction part). `cairn context`
//! shows what the model sees after each.

use cairn::store::Store;
use serde_json::{Value, json};

#[path = "support/helpers.rs"]
mod helpers;

const MINUTE: i64 = 60_000;
const START: i64 = 1_780_000_000_000;

fn user(id: &str, at: i64, text: &str) -> Value {
    json!({"info": {"id": id, "sessionID": "ses_test", "role": "user", "time": {"created": at}},
           "parts": [{"id": format!("prt_{id}"), "type": "text", "text": text}]})
}

/// A step that read a large file (`pruned_at`: when opencode's prune cleared its output).
fn read_step(id: &str, at: i64, file: &str, pruned_at: Option<i64>) -> Value {
    let big = "fn parse(input: &str) -> Result<Ast, Error> { todo!() }\n".repeat(400);
    let mut time = json!({"start": at + 1000, "end": at + 2000});
    if let Some(t) = pruned_at {
        time["compacted"] = json!(t);
    }
    json!({"info": {"id": id, "sessionID": "ses_test", "role": "assistant", "providerID": "anthropic",
                    "modelID": "claude-sonnet-4-5", "time": {"created": at, "completed": at + 3000},
                    "tokens": {"input": 10, "output": 50, "reasoning": 0, "cache": {"read": 9000, "write": 100}}},
           "parts": [{"id": format!("prt_{id}"), "type": "tool", "callID": format!("call_{id}"), "tool": "read",
                      "state": {"status": "completed", "input": {"filePath": file}, "output": big,
                                "title": file, "time": time}}]})
}

fn reply(id: &str, at: i64, text: &str, summary: bool) -> Value {
    json!({"info": {"id": id, "sessionID": "ses_test", "role": "assistant", "providerID": "anthropic",
                    "modelID": "claude-sonnet-4-5", "summary": summary,
                    "time": {"created": at, "completed": at + 3000},
                    "tokens": {"input": 10, "output": 50, "reasoning": 0, "cache": {"read": 9000, "write": 100}}},
           "parts": [{"id": format!("prt_{id}"), "type": "text", "text": text}]})
}

/// Turn `i`, a minute after the one before: a prompt, a step that read a large file, a reply.
fn read_turn(i: i64, pruned_at: Option<i64>) -> [Value; 3] {
    let at = START + i * MINUTE;
    [
        user(&format!("msg_u{i}"), at, &format!("read file {i}")),
        read_step(
            &format!("msg_a{i}"),
            at + 100,
            &format!("f{i}.rs"),
            pruned_at,
        ),
        reply(&format!("msg_b{i}"), at + 5000, "Read it.", false),
    ]
}

fn export(dir: &std::path::Path, name: &str, messages: Vec<Value>) -> std::path::PathBuf {
    let doc = json!({"info": {"id": "ses_test", "title": name, "directory": "/project", "version": "1.14.0",
                              "time": {"created": START, "updated": START}},
                     "messages": messages});
    let f = dir.join(format!("{name}.json"));
    std::fs::write(&f, doc.to_string()).unwrap();
    f
}

/// Imports `f` into a store of its own: the import's notes, what `cairn context` says the model sees now, and how
/// many tool outputs the store holds in full.
fn context_of(
    f: std::path::PathBuf,
) -> (Vec<String>, cairn::reclaim::report::ContextReport, usize) {
    let dir = f
        .parent()
        .unwrap()
        .join(format!("{}.db", f.file_stem().unwrap().to_string_lossy()));
    let mut s = Store::open(dir).unwrap();
    let file = helpers::import_one(&mut s, f);
    let conv = file.conversations[0].clone();
    let outputs = s
        .messages(&conv)
        .unwrap()
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| matches!(b, cairn::model::Block::ToolResult { content, .. } if content.text().len() > 10_000))
        .count();
    let r = helpers::context_now(&mut s, &conv);
    (file.report.notes, r, outputs)
}

/// Three turns that each read a large file, then a question; opencode's prune after the third turn cleared the
/// first two outputs (or did not).
fn pruned_session(dir: &std::path::Path, prune: bool) -> std::path::PathBuf {
    let mut messages = Vec::new();
    let pruned_at = START + 3 * MINUTE + 10_000;
    for i in 0..3 {
        messages.extend(read_turn(i, (prune && i < 2).then_some(pruned_at)));
    }
    messages.push(user("msg_u9", START + 10 * MINUTE, "and now?"));
    export(dir, if prune { "pruned" } else { "plain" }, messages)
}

#[test]
fn the_outputs_opencode_s_prune_cleared_leave_the_context_and_stay_in_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let (plain_notes, plain, _) = context_of(pruned_session(dir.path(), false));
    let (notes, pruned, kept) = context_of(pruned_session(dir.path(), true));
    assert_eq!(kept, 3, "the session keeps every output");
    assert!(!plain_notes.iter().any(|n| n.contains("prune")));
    assert!(
        notes
            .iter()
            .any(|n| n.contains("prune cleared the old tool outputs of 2 step(s)")),
        "{notes:?}"
    );
    // two of the three outputs cleared: what the model sees of tool output falls by about two thirds
    let (before, after) = (plain.messages.tool_results, pruned.messages.tool_results);
    assert!(after * 2 < before, "{before} -> {after}");
    assert!(after > 0, "the third output stays");
}

/// Two turns that read a large file each and one that did not, then a compaction that keeps the turns from
/// `tail` on (none: only the summary), and a prompt after it.
fn compacted_session(dir: &std::path::Path, tail: Option<&str>) -> std::path::PathBuf {
    let mut messages = Vec::new();
    for i in 0..2 {
        messages.extend(read_turn(i, None));
    }
    messages.push(user("msg_u2", START + 2 * MINUTE, "what do they share?"));
    messages.push(reply(
        "msg_b2",
        START + 2 * MINUTE + 100,
        "A parser.",
        false,
    ));
    let mut part = json!({"id": "prt_c", "type": "compaction", "auto": true});
    if let Some(t) = tail {
        part["tail_start_id"] = json!(t);
    }
    messages.push(
        json!({"info": {"id": "msg_c", "sessionID": "ses_test", "role": "user",
                                  "time": {"created": START + 3 * MINUTE}},
                         "parts": [part]}),
    );
    messages.push(reply(
        "msg_s",
        START + 3 * MINUTE + 100,
        "Summary: two files read, both hold a parser.",
        true,
    ));
    messages.push(user("msg_u3", START + 4 * MINUTE, "go on"));
    export(
        dir,
        &format!("compacted-{}", tail.unwrap_or("none")),
        messages,
    )
}

#[test]
fn a_compaction_keeps_the_turns_from_its_tail_start_after_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (_, summary_only, _) = context_of(compacted_session(dir.path(), None));
    // the second read's turn on: its output is what the model still sees of the tools
    let (notes, kept, _) = context_of(compacted_session(dir.path(), Some("msg_u1")));
    assert!(
        notes
            .iter()
            .any(|n| n.contains("its summary and the 6 newest message(s)")),
        "{notes:?}"
    );
    assert_eq!(summary_only.messages.tool_results, 0);
    let one = kept.messages.tool_results;
    // both reads kept: twice as much
    let (_, both, _) = context_of(compacted_session(dir.path(), Some("msg_u0")));
    assert!(
        one > 0 && both.messages.tool_results > one * 3 / 2,
        "{one} {}",
        both.messages.tool_results
    );
    let kept_of =
        |r: &cairn::reclaim::report::ContextReport| r.harness_compaction.as_ref().map(|h| h.kept);
    assert_eq!((kept_of(&summary_only), kept_of(&kept)), (Some(0), Some(6)));
    assert_eq!(kept.messages_sent, summary_only.messages_sent + 6);
}

/// A PNG of `w`×`h` pixels, as a `data:` URL (how opencode keeps an image it read into a part).
fn png_url(w: u32, h: u32) -> String {
    use base64::Engine as _;
    let mut bytes = Vec::new();
    image::RgbImage::new(w, h)
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[test]
fn images_opencode_read_into_a_prompt_or_a_result_are_sent_as_images_and_unfinished_calls_as_interrupted()
 {
    let dir = tempfile::tempdir().unwrap();
    let step = |id: &str, at: i64, parts: Vec<Value>| {
        json!({"info": {"id": id, "sessionID": "ses_test", "role": "assistant", "providerID": "anthropic",
                        "modelID": "claude-sonnet-4-5", "time": {"created": at, "completed": at + 3000},
                        "tokens": {"input": 10, "output": 50, "reasoning": 0, "cache": {"read": 9000, "write": 100}}},
               "parts": parts})
    };
    let tool = |call: &str, state: Value| json!({"id": format!("prt_{call}"), "type": "tool", "callID": call, "tool": "read", "state": state});
    let time = json!({"start": START, "end": START + 1});
    let messages = vec![
        // `@shot.png` in a prompt: opencode reads the file into the part, beside the line it adds for it
        json!({"info": {"id": "msg_u0", "sessionID": "ses_test", "role": "user", "time": {"created": START}},
               "parts": [{"id": "prt_t", "type": "text", "text": "what is on this screen?"},
                         {"id": "prt_s", "type": "text", "synthetic": true,
                          "text": "Called the Read tool with the following input: {\"filePath\":\"/p/shot.png\"}"},
                         {"id": "prt_f", "type": "file", "mime": "image/png", "filename": "shot.png",
                          "url": png_url(560, 280)},
                         {"id": "prt_p", "type": "file", "mime": "application/pdf", "filename": "spec.pdf",
                          "url": "file:///p/spec.pdf"}]}),
        step(
            "msg_a0",
            START + 100,
            vec![
                // a read of an image: its output and the image attached to it
                tool(
                    "call_img",
                    json!({"status": "completed", "input": {"filePath": "/p/b.png"}, "output": "Image read successfully",
                       "title": "b.png", "metadata": {}, "time": time,
                       "attachments": [{"id": "prt_att", "type": "file", "mime": "image/png",
                                        "url": png_url(280, 280)}]}),
                ),
                // cut short by the user: what it had printed is its output
                tool(
                    "call_cut",
                    json!({"status": "error", "input": {"filePath": "/p/c"}, "error": "Tool execution aborted",
                       "metadata": {"interrupted": true, "output": "partial listing"}, "time": time}),
                ),
                // never finished
                tool(
                    "call_run",
                    json!({"status": "running", "input": {"filePath": "/p/d"}, "time": {"start": START}}),
                ),
            ],
        ),
        user("msg_u1", START + MINUTE, "and now?"),
    ];
    let f = export(dir.path(), "images", messages);
    let mut s = Store::open(dir.path().join("images.db")).unwrap();
    let conv = helpers::import_one(&mut s, f).conversations[0].clone();
    let msgs = s.messages(&conv).unwrap();
    use cairn::model::{Block, ToolResultContent};
    let prompt = &msgs[0].content;
    assert!(
        prompt.iter().any(|b| matches!(b, Block::Image { .. })),
        "{prompt:?}"
    );
    assert!(
        cairn::model::plain_text(prompt).contains("[file: spec.pdf]"),
        "{prompt:?}"
    );
    let results: Vec<(&ToolResultContent, bool)> = msgs
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::ToolResult {
                content, is_error, ..
            } => Some((content, *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3);
    match results[0] {
        (ToolResultContent::Blocks(b), false) => {
            assert!(matches!(&b[0], Block::Text { text } if text == "Image read successfully"));
            assert!(matches!(&b[1], Block::Image { .. }), "{b:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        (results[1].0.text(), results[1].1),
        ("partial listing".to_string(), false)
    );
    assert_eq!(
        (results[2].0.text(), results[2].1),
        ("[Tool execution was interrupted]".to_string(), true)
    );
    // both images count in what the model sees, by their pixel size (Claude's 28-pixel patches: 20×10 and 10×10)
    let r = helpers::context_now(&mut s, &conv);
    assert_eq!(r.messages.images, 200 + 100, "{:?}", r.messages);
}
