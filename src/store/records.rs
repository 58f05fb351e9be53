//! The records a conversation keeps beside its messages (`records` in its meta: what its reader kept of the lines
//! that are not messages, such as Claude Code's `cost-state`), taken again when the session is read again: a leaf
//! both writers of a session read again share (`merge.rs`, read whole; `sources.rs`, read from where it stopped).

use super::Result;

/// Adds to a stored conversation's kept records (`records` in its meta: what its reader kept of the lines that are
/// not messages) those of `read`, the same session read from where the last reading stopped ([`take_records`]),
/// in one statement. Returns how many were added.
pub(super) fn add_records(
    tx: &rusqlite::Transaction<'_>,
    seq: i64,
    read: &serde_json::Value,
) -> Result<usize> {
    if read
        .get("records")
        .and_then(serde_json::Value::as_array)
        .is_none_or(|r| r.is_empty())
    {
        return Ok(0);
    }
    let mut meta = stored_meta(tx, seq)?;
    let added = take_records(&mut meta, read);
    if added > 0 {
        write_meta(tx, seq, &meta)?;
    }
    Ok(added)
}

/// Adds to a stored conversation's `meta` the records of `read`, the same session read again, that it does not
/// hold: a session that grew wrote more of them (Claude Code 2.1.33x what the session cost so far, after each
/// request, which prices a model no catalog knows). A record is added as often as `read` holds it more than the
/// store does; the held ones keep their places, so the meta's pointers into them stay true. Returns how many were
/// added.
pub(super) fn take_records(meta: &mut serde_json::Value, read: &serde_json::Value) -> usize {
    let Some(new) = read
        .get("records")
        .and_then(serde_json::Value::as_array)
        .filter(|r| !r.is_empty())
    else {
        return 0;
    };
    let Some(held) = meta
        .as_object_mut()
        .map(|o| o.entry("records").or_insert_with(|| serde_json::json!([])))
        .and_then(serde_json::Value::as_array_mut)
    else {
        return 0;
    };
    let mut have: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for r in held.iter() {
        *have.entry(r.to_string()).or_default() += 1;
    }
    let mut added = 0;
    for r in new {
        match have.get_mut(&r.to_string()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                held.push(r.clone());
                added += 1;
            }
        }
    }
    added
}

/// Replaces a stored conversation's tallies (`tallies` in its `meta`: figures its reader summed over the whole
/// file, such as what GitHub Copilot billed run by run) with those of `read`, the same session read whole again: a
/// file that grew changes them (a run cut off at one reading is billed to its checkpoint, and at the next its
/// shutdown's totals cover it), so they are never added to. Records of a tally's type that an older reader kept
/// among the records are dropped with them. A reading whose last tally is older than the stored ones' last (an
/// older copy of the file, read after the grown one) leaves them. Returns whether anything changed. Not for a
/// reading from where the last stopped (`sources.rs`): its tallies are of the new lines only.
pub(super) fn take_tallies(meta: &mut serde_json::Value, read: &serde_json::Value) -> bool {
    let Some(new) = read.get("tallies").and_then(serde_json::Value::as_array) else {
        return false;
    };
    let Some(o) = meta.as_object_mut() else {
        return false;
    };
    let type_of = |r: &serde_json::Value| {
        r.get("type")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    };
    let stored = o.get("tallies").and_then(serde_json::Value::as_array);
    // an older copy of the file (a backup, another machine's) read after the grown one: its tallies stop earlier,
    // and the stored ones cover what it billed
    if stored.and_then(|t| latest(t)) > latest(new) {
        return false;
    }
    let types: std::collections::HashSet<String> = new.iter().filter_map(type_of).collect();
    let mut changed = stored != Some(new);
    if let Some(records) = o
        .get_mut("records")
        .and_then(serde_json::Value::as_array_mut)
    {
        let before = records.len();
        records.retain(|r| type_of(r).is_none_or(|t| !types.contains(&t)));
        changed |= records.len() != before;
    }
    if changed {
        o.insert("tallies".into(), serde_json::Value::Array(new.clone()));
    }
    changed
}

/// When the last of `tallies` was billed (`at`, epoch ms), where they say.
fn latest(tallies: &[serde_json::Value]) -> Option<i64> {
    tallies
        .iter()
        .filter_map(|t| t.get("at").and_then(serde_json::Value::as_i64))
        .max()
}

/// Writes a conversation's meta back.
pub(super) fn write_meta(
    tx: &rusqlite::Transaction<'_>,
    seq: i64,
    meta: &serde_json::Value,
) -> Result<()> {
    tx.execute(
        "UPDATE conversations SET meta = ?1 WHERE seq = ?2",
        rusqlite::params![meta.to_string(), seq],
    )?;
    Ok(())
}

/// A stored conversation's meta as an object (an empty one where it holds none, or none readable).
pub(super) fn stored_meta(tx: &rusqlite::Transaction<'_>, seq: i64) -> Result<serde_json::Value> {
    let stored: Option<String> = tx.query_row(
        "SELECT meta FROM conversations WHERE seq = ?1",
        [seq],
        |r| r.get(0),
    )?;
    Ok(stored
        .as_deref()
        .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| serde_json::json!({})))
}
