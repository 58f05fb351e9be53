//! Messages counted by a public tokenizer, kept beside them. A stored message is measured once, by cairn's
//! estimate, when it is written; a model that counts with another tokenizer (OpenAI's o200k, or the one a model's
//! measurements chose: `crate::reclaim::replay::counted_with`) has its path counted again, which decodes every
//! body and runs the tokenizer over it: seconds on a long session. Stored messages never change, so what a
//! tokenizer made of one is kept here and read back as numbers the next time (`/context`, `send`, the timeline,
//! replay). A count made under other counting rules ([`RECOUNT_VERSION`]) is made again.

use std::collections::HashMap;

use super::{Result, Store};
use crate::tokens::{Measure, Tokenizer};

const FIELDS: usize = Measure::FIELDS;

/// The counting rules recounts are made under: raised when a tokenizer's measure of a message would change, so
/// what was kept before is made again.
pub const RECOUNT_VERSION: i64 = 1;

/// A measure as kept: its numbers alone, as a JSON array (a tenth of its JSON with names, on a path of 100k
/// messages).
fn packed(m: &Measure) -> String {
    serde_json::Value::from(m.numbers().to_vec()).to_string()
}

/// A kept measure read back, a byte at a time (a path's worth of JSON parses cost more than the scan that reads
/// them); one of another length (kept under other fields) is refused.
fn unpacked(text: &str) -> Option<Measure> {
    let v = super::measures::unpack::<{ FIELDS + 1 }>(text);
    if v[FIELDS].is_some() || v[..FIELDS].iter().any(Option::is_none) {
        return None;
    }
    Some(Measure::from_numbers(std::array::from_fn(|i| {
        v[i].unwrap_or(0).max(0) as u64
    })))
}

fn name(tk: Tokenizer) -> &'static str {
    match tk {
        Tokenizer::Estimate => "estimate",
        Tokenizer::O200k => "o200k",
    }
}

impl Store {
    /// What `tk` made of the stored messages `seqs` before (those it counted under these rules), in the order of
    /// `seqs`. A path's messages are mostly written in a row: their seqs' range is read in one scan when it holds
    /// few others.
    pub(crate) fn recounts(&self, seqs: &[i64], tk: Tokenizer) -> Result<Vec<Option<Measure>>> {
        let mut out = vec![None; seqs.len()];
        let (Some(&lo), Some(&hi)) = (seqs.iter().min(), seqs.iter().max()) else {
            return Ok(out);
        };
        let params = (name(tk), RECOUNT_VERSION);
        let dense = ((hi - lo) as u64) < 4 * seqs.len() as u64;
        // where each seq goes (by its offset from the lowest, where they lie close); a cell that is no kept measure
        // (not text, other fields) is counted again
        let mut by_offset: Vec<Option<usize>> =
            vec![None; if dense { (hi - lo) as usize + 1 } else { 0 }];
        let mut by_seq: HashMap<i64, usize> = HashMap::new();
        for (i, &s) in seqs.iter().enumerate() {
            match by_offset.get_mut((s - lo) as usize) {
                Some(slot) => *slot = Some(i),
                None => {
                    by_seq.insert(s, i);
                }
            }
        }
        let mut keep = |seq: i64, m: Option<&str>| {
            let i = match by_offset.get((seq - lo) as usize) {
                Some(&i) => i,
                None => by_seq.get(&seq).copied(),
            };
            if let (Some(i), Some(m)) = (i, m.and_then(unpacked)) {
                out[i] = Some(m);
            }
        };
        if dense {
            let mut stmt = self.conn.prepare_cached(
                "SELECT seq, measure FROM recounts
                 WHERE seq BETWEEN ?1 AND ?2 AND tokenizer = ?3 AND version = ?4",
            )?;
            let mut rows = stmt.query(rusqlite::params![lo, hi, params.0, params.1])?;
            while let Some(r) = rows.next()? {
                keep(r.get(0)?, r.get_ref(1)?.as_str().ok());
            }
        } else {
            let mut stmt = self.conn.prepare_cached(
                "SELECT r.value, t.measure FROM json_each(?1) r
                 JOIN recounts t ON t.seq = r.value AND t.tokenizer = ?2 AND t.version = ?3",
            )?;
            let list = serde_json::Value::from(seqs.to_vec()).to_string();
            let mut rows = stmt.query(rusqlite::params![list, params.0, params.1])?;
            while let Some(r) = rows.next()? {
                keep(r.get(0)?, r.get_ref(1)?.as_str().ok());
            }
        }
        Ok(out)
    }

    /// Keeps what `tk` made of the stored messages `counted` ((seq, measure)), in one transaction.
    pub(crate) fn keep_recounts(&self, counted: &[(i64, Measure)], tk: Tokenizer) -> Result<()> {
        if counted.is_empty() {
            return Ok(());
        }
        self.keep_derived(|conn| {
            let tx = conn.unchecked_transaction()?;
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT OR REPLACE INTO recounts (seq, tokenizer, version, measure) VALUES (?1, ?2, ?3, ?4)",
                )?;
                for (seq, m) in counted {
                    stmt.execute(rusqlite::params![seq, name(tk), RECOUNT_VERSION, packed(m)])?;
                }
            }
            tx.commit()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_kept_measure_reads_back_as_it_was_made() {
        let mut m = Measure::default();
        let mut v = serde_json::to_value(m).unwrap();
        for (n, (_, x)) in v.as_object_mut().unwrap().iter_mut().enumerate() {
            *x = serde_json::Value::from(n as u64 * 7 + 1);
        }
        m = serde_json::from_value(v).unwrap();
        let kept = packed(&m);
        assert!(kept.starts_with('[') && kept.len() < 80, "{kept}");
        assert_eq!(unpacked(&kept), Some(m));
        // the order is serde's: what was kept before the numbers were listed by hand reads back the same
        let Value::Object(o) = serde_json::to_value(m).unwrap() else {
            panic!("a measure is an object")
        };
        let by_serde = Value::Array(o.into_iter().map(|(_, v)| v).collect()).to_string();
        assert_eq!(by_serde, kept);
        // a measure kept with other fields (older rules) is not read as this one, shorter or longer
        assert_eq!(unpacked("[1,2,3]"), None);
        let longer = format!("{},1]", kept.trim_end_matches(']'));
        assert_eq!(unpacked(&longer), None);
    }
}
