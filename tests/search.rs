//! Full-text search across conversations and branches: ranking, filters, phrases, prefixes, side branches, bad
//! queries, and the index kept in step with every write (import, append, fork) and built for a migrated store.

use std::sync::atomic::AtomicBool;

use cairn::commands::{self, Action, Outcome, Quiet};
use cairn::model::{Block, NewMessage, Role, ToolResultContent};
use cairn::reclaim::Settings;
use cairn::search::Results;
use cairn::store::{SearchQuery, Store};
use serde_json::json;

fn run(s: &mut Store, a: Action) -> Result<Outcome, commands::CommandError> {
    commands::run(s, &Settings::default(), a, &Quiet, &AtomicBool::new(false))
}

fn search(s: &mut Store, q: SearchQuery) -> Results {
    match run(s, Action::Search(SearchQuery { limit: 50, ..q })).unwrap() {
        Outcome::Searched(r) => r,
        o => panic!("{o:?}"),
    }
}

fn q(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.into(),
        ..Default::default()
    }
}

fn call(id: &str, name: &str, input: serde_json::Value) -> NewMessage {
    NewMessage::new(
        Role::Assistant,
        vec![Block::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        }],
    )
}

fn result(id: &str, text: &str, is_error: bool) -> NewMessage {
    NewMessage::new(
        Role::User,
        vec![Block::ToolResult {
            tool_use_id: id.into(),
            content: ToolResultContent::Text(text.into()),
            is_error,
        }],
    )
}

/// Two conversations: one with a tool error and a side branch, one unrelated.
fn corpus(s: &mut Store) -> (String, String, String) {
    let a = s.create_conversation(Some("deploy")).unwrap();
    s.append_turn(
        &a,
        &[
            NewMessage::text(Role::User, "Deploy the service to staging"),
            call(
                "c1",
                "Bash",
                json!({"command": "kubectl apply -f deploy.yaml"}),
            ),
            result(
                "c1",
                "error: connection refused by the staging cluster",
                true,
            ),
            NewMessage::text(
                Role::Assistant,
                "The cluster refused the connection; retrying with the VPN.",
            ),
        ],
    )
    .unwrap();
    let branch_point = s.active_path(&a).unwrap()[0].id.clone();
    let tip = s.conversation(&a).unwrap().tip.unwrap();
    s.append_turn(
        &a,
        &[
            NewMessage::text(Role::User, "Now check the pods"),
            NewMessage::text(Role::Assistant, "All pods are running."),
        ],
    )
    .unwrap();
    // the tip moves back to the end of the first turn: the second turn is a side branch now
    let tip2 = s.conversation(&a).unwrap().tip.unwrap();
    s.branch(&a, &tip, None).unwrap();
    let _ = branch_point;
    let b = s.create_conversation(Some("parser")).unwrap();
    s.append_turn(
        &b,
        &[
            NewMessage::text(Role::User, "Why does the parser reject trailing commas?"),
            NewMessage::text(
                Role::Assistant,
                "The grammar forbids a comma before the closing brace.",
            ),
        ],
    )
    .unwrap();
    (a, b, tip2)
}

#[test]
fn search_ranks_filters_and_marks_side_branches() {
    let mut s = Store::open_in_memory().unwrap();
    let (a, b, _) = corpus(&mut s);
    // a word in a tool result, a reply and a prompt; the result marked
    let r = search(&mut s, q("refused"));
    assert_eq!(r.total, 2, "{r:?}");
    assert!(r.hits.iter().all(|h| h.conversation == a));
    assert!(
        r.hits
            .iter()
            .any(|h| h.role == "tool" && h.snippet.contains("connection «refused»"))
    );
    // the rarer, denser hit ranks first
    let r = search(&mut s, q("cluster"));
    assert_eq!(r.total, 2);
    assert!(r.hits[0].rank <= r.hits[1].rank);
    // phrases, prefixes, AND / OR / NOT
    assert_eq!(search(&mut s, q("\"connection refused\"")).total, 1);
    assert_eq!(search(&mut s, q("pars*")).total, 1);
    assert_eq!(search(&mut s, q("pods OR commas")).total, 3);
    assert_eq!(search(&mut s, q("cluster NOT vpn")).total, 1);
    // filters: role, tool, errors, conversation, since
    let only = |s: &mut Store, f: fn(&mut SearchQuery)| {
        let mut query = q("refused OR pods OR parser OR deploy");
        f(&mut query);
        search(s, query)
    };
    assert!(
        only(&mut s, |q| q.role = Some("tool".into()))
            .hits
            .iter()
            .all(|h| h.role == "tool")
    );
    assert!(
        only(&mut s, |q| q.role = Some("user".into()))
            .hits
            .iter()
            .all(|h| h.role == "user")
    );
    let bash = only(&mut s, |q| q.tool = Some("Bash".into()));
    assert_eq!(bash.total, 2, "the call and its result: {bash:?}");
    let errors = only(&mut s, |q| q.errors = true);
    assert_eq!(errors.total, 1);
    assert_eq!(errors.hits[0].role, "tool");
    let mut in_b = q("parser OR refused");
    in_b.conversation = Some(b.clone());
    assert!(
        search(&mut s, in_b)
            .hits
            .iter()
            .all(|h| h.conversation == b)
    );
    let mut future = q("refused");
    future.since = cairn::search::parse_since("2999-01-01");
    assert_eq!(search(&mut s, future).total, 0);
    // the second turn is off the active path now (the tip moved back): found, and marked a side branch
    let pods = search(&mut s, q("pods"));
    assert_eq!(pods.total, 2);
    assert!(pods.hits.iter().all(|h| !h.on_active_path), "{pods:?}");
    assert!(
        search(&mut s, q("parser"))
            .hits
            .iter()
            .all(|h| h.on_active_path)
    );
}

#[test]
fn a_bad_query_is_one_line_naming_the_problem() {
    let mut s = Store::open_in_memory().unwrap();
    corpus(&mut s);
    for bad in ["foo AND (", "\"unclosed", "", "AND"] {
        let e = run(&mut s, Action::Search(q(bad))).unwrap_err().to_string();
        assert!(e.starts_with("search query:"), "{bad:?}: {e}");
        assert!(!e.contains('\n'));
    }
    let mut role = q("x");
    role.role = Some("robot".into());
    let e = run(&mut s, Action::Search(role)).unwrap_err().to_string();
    assert!(
        e.contains("robot") && e.contains("user, assistant, tool"),
        "{e}"
    );
}

#[test]
fn the_index_follows_import_append_and_fork() {
    let mut s = Store::open_in_memory().unwrap();
    let (a, _, _) = corpus(&mut s);
    let fork = match run(
        &mut s,
        Action::Fork {
            conversation: a.clone(),
            at: None,
        },
    )
    .unwrap()
    {
        Outcome::Forked(conversation) => conversation,
        o => panic!("{o:?}"),
    };
    // a fork's copies are found in the fork too (they share the original's body)
    let r = search(&mut s, q("kubectl"));
    let convs: std::collections::HashSet<&str> =
        r.hits.iter().map(|h| h.conversation.as_str()).collect();
    assert!(
        convs.contains(a.as_str()) && convs.contains(fork.as_str()),
        "{r:?}"
    );
    // an append to the fork is found only there
    s.append_turn(
        &fork,
        &[
            NewMessage::text(Role::User, "summarise the zeppelin incident"),
            NewMessage::text(Role::Assistant, "ok"),
        ],
    )
    .unwrap();
    let r = search(&mut s, q("zeppelin"));
    assert_eq!(r.total, 1);
    assert_eq!(r.hits[0].conversation, fork);
    // an import of a real sample: its tool output is searchable
    let dir = tempfile::tempdir().unwrap();
    let mut d = Store::open(dir.path().join("i.db")).unwrap();
    let o = cairn::import::import_file(
        &mut d,
        std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/claude-code/cc-2.0.5-image-paste.jsonl"
        )),
        None,
    );
    assert!(o.error.is_none());
    let r = search(&mut d, q("submodule"));
    assert!(r.total > 10, "{}", r.total);
    let mut bash = q("submodule");
    bash.tool = Some("Bash".into());
    assert!(
        search(&mut d, bash)
            .hits
            .iter()
            .all(|h| h.role == "assistant" || h.role == "tool")
    );
}

#[test]
fn a_store_from_before_the_index_is_indexed_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let demo = {
        let mut s = Store::open(&path).unwrap();
        cairn::demo::install(&mut s).unwrap()
    };
    let before = {
        let mut s = Store::open(&path).unwrap();
        search(&mut s, q("drain"))
    };
    assert!(before.total > 0);
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "DROP INDEX measures_unrecorded_prompts; DROP TABLE search; DROP TABLE tool_calls; DROP INDEX messages_by_body; DROP INDEX measures_by_time; DROP TABLE usage_days;
             ALTER TABLE measures DROP COLUMN packed; ALTER TABLE measures DROP COLUMN flags; ALTER TABLE measures DROP COLUMN compaction;
             ALTER TABLE measures DROP COLUMN copy; ALTER TABLE conversations DROP COLUMN project;
             PRAGMA user_version = 4;",
        )
        .unwrap();
    }
    let mut s = Store::open(&path).unwrap();
    let after = search(&mut s, q("drain"));
    assert_eq!(
        after, before,
        "the migrated index finds what a fresh one does"
    );
    assert!(after.hits.iter().any(|h| h.conversation == demo.fork));
}
