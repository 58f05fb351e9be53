//! Nothing enters that lies, nothing is written that is not cairn's: folder walks through symlink loops and FIFOs
//! end, usage no model could have measured is not counted, cairn's own format refuses a duplicate id, a foreign
//! SQLite file is left byte for byte as it was, `--out` replaces a file whole or not at all.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn cairn(db: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn session(path: &Path, usage: Value) {
    let lines = [
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s1",
               "timestamp": "2026-11-02T10:00:00Z", "message": {"role": "user", "content": "hi"}}),
        json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1",
               "timestamp": "2026-11-02T10:00:05Z",
               "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                           "content": [{"type": "text", "text": "hello"}], "usage": usage}}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n") + "\n").unwrap();
}

#[cfg(unix)]
#[test]
fn a_folder_with_symlink_loops_and_a_fifo_imports_what_is_real_and_ends() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    session(
        &root.join("a/b/real.jsonl"),
        json!({"input_tokens": 5, "output_tokens": 2}),
    );
    std::os::unix::fs::symlink("..", root.join("a/up")).unwrap();
    std::os::unix::fs::symlink("../..", root.join("a/b/upup")).unwrap();
    std::os::unix::fs::symlink("/", root.join("a/outside")).unwrap();
    let fifo = root.join("a/pipe.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let files = cairn::import::collect(std::slice::from_ref(&root)).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with("a/b/real.jsonl"));
    // a FIFO named on the command line is refused, not read
    let db = dir.path().join("s.db");
    let o = cairn(&db, &["import", fifo.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a regular file")
            || String::from_utf8_lossy(&o.stdout).contains("not a regular file"),
        "{o:?}"
    );
}

#[test]
fn usage_no_model_could_measure_is_kept_as_metadata_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.jsonl");
    session(&f, json!({"input_tokens": i64::MAX, "output_tokens": 3}));
    let db = dir.path().join("s.db");
    let o = cairn(&db, &["import", f.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("beyond any model's window"),
        "{o:?}"
    );
    let o = cairn(&db, &["stats", "--by", "conversation", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"][0]["input_tokens"], 0);
    assert!(v["rows"][0]["cost_usd"].is_null());
}

#[test]
fn cairns_own_format_refuses_a_duplicate_id() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dup.jsonl");
    let lines = [
        json!({"type": "cairn", "version": 1, "id": "c1", "title": "t"}),
        json!({"type": "message", "id": "m1", "parent": null, "role": "user", "content": "a"}),
        json!({"type": "message", "id": "m1", "parent": null, "role": "user", "content": "b"}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&f, text.join("\n") + "\n").unwrap();
    let db = dir.path().join("s.db");
    let o = cairn(&db, &["import", f.to_str().unwrap()]);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(all.contains(":3: message id m1 appears twice"), "{all}");
}

#[test]
fn a_foreign_sqlite_file_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x'); PRAGMA user_version = 3;")
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let o = cairn(&db, &["list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a cairn store"),
        "{o:?}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert!(!dir.path().join("other.db-wal").exists());
}

#[cfg(unix)]
#[test]
fn export_out_replaces_the_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.jsonl");
    session(&f, json!({"input_tokens": 5, "output_tokens": 2}));
    let db = dir.path().join("s.db");
    let o = cairn(&db, &["import", f.to_str().unwrap()]);
    let conv = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let page = dir.path().join("page.html");
    std::fs::write(&page, "the previous page").unwrap();
    let o = cairn(
        &db,
        &[
            "export",
            &conv,
            "--format",
            "html",
            "--out",
            page.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    // no temporary file is left beside it
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // a folder that cannot be written: the error names the file, and the old page is untouched
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let kept = ro.join("page.html");
    std::fs::write(&kept, "keep me").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let o = cairn(
        &db,
        &[
            "export",
            &conv,
            "--format",
            "html",
            "--out",
            kept.to_str().unwrap(),
        ],
    );
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    // (root writes anywhere: there the export simply succeeds, whole)
    let now = std::fs::read_to_string(&kept).unwrap();
    if o.status.success() {
        assert!(now.starts_with("<!DOCTYPE html>"));
    } else {
        assert_eq!(now, "keep me");
        assert!(String::from_utf8_lossy(&o.stderr).contains("page.html"));
    }
}

#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_reported_in_json() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(std::ffi::OsStr::from_bytes(b"s\xff.jsonl"));
    session(&f, json!({"input_tokens": 5, "output_tokens": 2}));
    let db = dir.path().join("s.db");
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&f)
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["status"], "new");
    assert!(v[0]["file"].as_str().unwrap().contains('\u{fffd}'));
}

/// Every file of a folder with its size and a hash of its bytes.
fn snapshot(dir: &Path) -> Vec<(String, usize, u64)> {
    use std::hash::{Hash, Hasher};
    let mut v: Vec<(String, usize, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                bytes.len(),
                h.finish(),
            )
        })
        .collect();
    v.sort();
    v
}

#[cfg(unix)]
#[test]
fn a_read_only_store_is_read_and_never_written() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("store");
    std::fs::create_dir(&store_dir).unwrap();
    let db = store_dir.join("cairn.db");
    let src = dir.path().join("s.jsonl");
    session(&src, json!({"input_tokens": 5, "output_tokens": 2}));
    assert!(
        cairn(&db, &["import", src.to_str().unwrap()])
            .status
            .success()
    );
    let before = snapshot(&store_dir);
    let list = |s: &cairn::store::Store| s.conversations().unwrap();
    // opened read-only by name: it reads, refuses a write in one line, and leaves the folder byte for byte
    let mut s = cairn::store::Store::open_read_only(&db).unwrap();
    assert!(s.is_read_only());
    let convs = list(&s);
    assert_eq!(convs.len(), 1);
    assert_eq!(s.active_path(&convs[0].id).unwrap().len(), 2);
    let e = s.create_conversation(Some("x")).unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    drop(s);
    assert_eq!(snapshot(&store_dir), before);
    // a read-only file and folder are opened so by `open` (and by every command)
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&store_dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let binds = std::fs::OpenOptions::new().write(true).open(&db).is_err();
    if binds {
        let s = cairn::store::Store::open(&db).unwrap();
        assert!(s.is_read_only());
    }
    // the commands, run by a user the modes bind: this process's own, or (as root, who may write anything) nobody,
    // through util-linux's setpriv
    let run = |args: &[&str]| -> std::process::Output {
        if binds {
            return cairn(&db, args);
        }
        // nobody may not reach the build folder (a checkout under root's home): the binary is run from a copy
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = dir.path().join("cairn-bin");
        if !bin.exists() {
            std::fs::copy(env!("CARGO_BIN_EXE_cairn"), &bin).unwrap();
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&bin)
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .expect("setpriv (util-linux) runs the check as an unprivileged user where this test runs as root")
    };
    let out = run(&["list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("MESSAGES"));
    let out = run(&["new"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"));
    std::fs::set_permissions(&store_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(snapshot(&store_dir), before);
}

#[test]
fn many_first_opens_of_a_new_store_at_once_all_succeed() {
    // 40 processes open (create, switch to WAL, migrate) one new store at the same moment: none fails "locked"
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    let children: Vec<_> = (0..40)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_cairn"))
                .arg("--db")
                .arg(&db)
                .arg("list")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let s = cairn::store::Store::open(&db).unwrap();
    assert!(s.conversations().unwrap().is_empty());
}
