//! pi's format 4 (`{"v":4,"kind":"header"}`), read as the entries of format 3 it carries.
//!
//! Format 4 is a replay log: one physical line per commit, a single write as an object or several as a JSON array.
//! Writes are `entry` (the tree entries of format 3: `message`, `compaction`, `model_change`, `context_edit`, ...,
//! with numeric timestamps and a `seq`), `value` (`op` `set`/`delete` of a `namespace`/`key`: the session's name in
//! `pi.session.name`, a lane's leaf in `lane.leaf`), older `register` writes of the same shape, and `usage` rows
//! (requests outside the conversation, such as cache warming: cost, never context). A compaction may hold the
//! messages it keeps inline (`retainedTail`, with `firstKeptEntryId` null): they are what the model saw after the
//! summary, so they become messages after it, and what followed the compaction follows them.
//!
//! Flattening keeps each entry's line number, so an error still names the line at fault.

use std::collections::HashMap;

use serde_json::{Value, json};

/// What a format 4 file holds besides its entries.
#[derive(Debug, Default)]
pub(super) struct Flat {
    /// The header as a format 3 `session` line (the original kept in `header`), then the entries in order.
    pub entries: Vec<(usize, Value)>,
    /// The session's name, as the last `pi.session.name` write left it.
    pub title: Option<String>,
    /// The main lane's leaf entry, as the last `lane.leaf` write left it.
    pub leaf: Option<String>,
    /// `usage` rows: requests the harness made outside the conversation.
    pub usage: Vec<Value>,
    /// Writes of other kinds (settings, operation state), kept as the conversation's records.
    pub records: Vec<Value>,
}

/// Whether a value is a format 4 header.
pub(crate) fn is_header(v: &Value) -> bool {
    v.get("kind").and_then(Value::as_str) == Some("header")
        && v.get("v").and_then(Value::as_u64).is_some_and(|n| n >= 4)
}

/// The file's writes flattened, if its first line is a format 4 header; None for the older formats.
pub(super) fn flatten(input: &[(usize, Value)]) -> Option<Flat> {
    // oh-my-pi may put its padded title line first
    let skip = usize::from(input.first()?.1.get("type").and_then(Value::as_str) == Some("title"));
    let (first, rest) = input.get(skip..)?.split_first()?;
    if !is_header(&first.1) {
        return None;
    }
    let mut flat = Flat::default();
    flat.entries.extend(input[..skip].iter().cloned());
    let h = &first.1;
    let mut session =
        json!({"type": "session", "version": h.get("v").cloned().unwrap_or(json!(4)), "header": h});
    for k in ["id", "cwd", "parentSessionId"] {
        if let Some(x) = h.get(k) {
            session[k] = x.clone();
        }
    }
    if let Some(t) = h.get("createdAt") {
        session["timestamp"] = t.clone();
    }
    flat.entries.push((first.0, session));
    // the entries a self-retaining compaction's children now hang from: the last message it retained
    let mut reparent: HashMap<String, String> = HashMap::new();
    for (no, line) in rest {
        let writes: Vec<&Value> = match line {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        for w in writes {
            match w.get("kind").and_then(Value::as_str).unwrap_or("") {
                "entry" => entry(&mut flat, &mut reparent, *no, w),
                "value" | "register" => value(&mut flat, w),
                "usage" => flat.usage.push(w.clone()),
                _ => flat.records.push(w.clone()),
            }
        }
    }
    Some(flat)
}

fn entry(flat: &mut Flat, reparent: &mut HashMap<String, String>, no: usize, w: &Value) {
    let mut e = w.get("entry").cloned().unwrap_or_else(|| w.clone());
    if let Some(o) = e.as_object_mut() {
        o.remove("kind");
        if let Some(p) = o.get("parentId").and_then(Value::as_str)
            && let Some(to) = reparent.get(p)
        {
            o.insert("parentId".into(), json!(to));
        }
    }
    let retained = (e.get("type").and_then(Value::as_str) == Some("compaction")
        && e.get("firstKeptEntryId").is_none_or(Value::is_null))
    .then(|| e.get("retainedTail").and_then(Value::as_array).cloned())
    .flatten()
    .filter(|t| !t.is_empty());
    let Some(tail) = retained else {
        flat.entries.push((no, e));
        return;
    };
    let id = e
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let at = e.get("timestamp").cloned().unwrap_or(Value::Null);
    if let Some(o) = e.as_object_mut() {
        o.remove("retainedTail");
        o.insert("retainedMessages".into(), json!(tail.len()));
    }
    flat.entries.push((no, e));
    let mut parent = id.clone();
    for (k, m) in tail.into_iter().enumerate() {
        let rid = format!("{id}#retained{k}");
        flat.entries.push((
            no,
            json!({"type": "message", "id": rid, "parentId": parent, "timestamp": at, "message": m,
                   "retainedBy": id}),
        ));
        parent = rid;
    }
    reparent.insert(id, parent);
}

fn value(flat: &mut Flat, w: &Value) {
    let ns = w.get("namespace").and_then(Value::as_str).unwrap_or("");
    let set = w.get("op").and_then(Value::as_str) != Some("delete");
    let text = || w.get("value").and_then(Value::as_str).map(str::to_string);
    match ns {
        "pi.session.name" => {
            flat.title = if set {
                text().filter(|t| !t.trim().is_empty())
            } else {
                None
            }
        }
        "lane.leaf" if w.get("key").and_then(Value::as_str).unwrap_or("main") == "main" => {
            flat.leaf = if set { text() } else { None }
        }
        _ => flat.records.push(w.clone()),
    }
}
