//! Reading a file from where its last import stopped. A live session's file only grows: what the store read of it
//! is still there, byte for byte, and the new lines follow. So the import checks that (the file is no shorter,
//! the hashes of its first and last bytes read match, the files read with it are as they were), then reads only
//! from a little before the old end: enough lines back that a message whose lines straddle the old end, or a new
//! message's parent, is read whole. A 50 MB session that grew by one turn is read as a few hundred lines.
//!
//! Whatever does not fit (the file was rewritten, shortened or replaced, the window cannot be read alone, the
//! store cannot place the window's messages exactly) is read whole, as the first import was: this path is only
//! ever a shortcut to the same result.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::formats::Format;
use crate::store::SourceRead;

/// Bytes hashed at the start and at the end of what was read.
const HASHED: u64 = 4096;
/// Lines read before the old end.
const WINDOW_LINES: usize = 128;
/// At most this far back for them (a line can be a megabyte of pasted image).
const WINDOW_BYTES: u64 = 8 << 20;

/// What a file that was read before holds now.
#[derive(Debug)]
pub enum Since {
    /// What was read, and nothing more (a line being written is not read until it ends).
    Unchanged,
    /// It grew: `bytes` are its lines from `first_line` on (a window before the old end `from`, then what is
    /// new); `read` is how far the file is read once they are.
    Grew {
        bytes: Vec<u8>,
        first_line: usize,
        from: u64,
        read: SourceRead,
    },
    /// Read it whole, for this reason.
    Whole(String),
}

/// The read position of a file read whole (`bytes`, listed with the files `linked`).
pub fn position(path: &str, format: Format, bytes: &[u8], linked: String) -> SourceRead {
    let n = bytes.len();
    SourceRead {
        path: path.to_string(),
        format: format.name().to_string(),
        read_to: n as u64,
        lines: memchr::memchr_iter(b'\n', bytes).count() as u64,
        head_hash: hash(&bytes[..n.min(HASHED as usize)]),
        tail_hash: hash(&bytes[n.saturating_sub(HASHED as usize)..]),
        linked,
    }
}

fn hash(b: &[u8]) -> String {
    format!("{:x}", Sha256::digest(b))
}

fn read_at(f: &mut std::fs::File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    f.seek(SeekFrom::Start(at))?;
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.take(len).read_to_end(&mut out)?;
    Ok(out)
}

/// Why a file is read whole for what its listing (`linked` now, `known` when it was read) says: it is read otherwise
/// now, or the files read with it changed.
fn listing_differs(linked: &str, known: &str) -> Option<&'static str> {
    use crate::formats::appended::reading_of;
    if reading_of(linked) != reading_of(known) {
        Some("this cairn reads it otherwise than the one that read it (a newer reader)")
    } else if linked != known {
        Some("the files read with it (subagents) changed")
    } else {
        None
    }
}

/// What `file` holds since it was read as `known`; `linked` lists the files read with it as they are now.
pub fn since(file: &Path, known: &SourceRead, linked: &str) -> std::io::Result<Since> {
    let meta = std::fs::metadata(file)?;
    if !meta.is_file() {
        return Ok(Since::Whole("not a regular file".into()));
    }
    let len = meta.len();
    let old = known.read_to;
    if len < old {
        return Ok(Since::Whole(format!(
            "it is shorter than when it was read ({len} < {old} bytes)"
        )));
    }
    let mut f = std::fs::File::open(file)?;
    let head = read_at(&mut f, 0, len.min(HASHED))?;
    let tail_at = old.saturating_sub(HASHED);
    if hash(&head[..head.len().min(old as usize)]) != known.head_hash
        || hash(&read_at(&mut f, tail_at, old - tail_at)?) != known.tail_hash
    {
        return Ok(Since::Whole(
            "it was rewritten since it was read (its first or last bytes read differ)".into(),
        ));
    }
    if let Some(why) = listing_differs(linked, &known.linked) {
        return Ok(Since::Whole(why.into()));
    }
    if len == old {
        return Ok(Since::Unchanged);
    }
    // the window's start: just after the line break WINDOW_LINES lines before the old end
    let mut back = 64 * 1024;
    let start = loop {
        let from = old.saturating_sub(back);
        let region = read_at(&mut f, from, old - from)?;
        // a break that ends the last line read is not one before it
        let body = region.strip_suffix(b"\n").unwrap_or(&region);
        if let Some(i) = memchr::memrchr_iter(b'\n', body).nth(WINDOW_LINES) {
            break from + i as u64 + 1;
        }
        if from == 0 {
            break 0;
        }
        if back >= WINDOW_BYTES {
            match memchr::memchr(b'\n', body) {
                Some(i) => break from + i as u64 + 1,
                None => {
                    return Ok(Since::Whole(
                        "its last line read is longer than a window".into(),
                    ));
                }
            }
        }
        back *= 4;
    };
    let mut bytes = read_at(&mut f, start, len - start)?;
    // only whole lines: a line still being written is read next time (unless it is complete JSON already)
    let window_old = (old - start) as usize;
    let end = match memchr::memrchr(b'\n', &bytes[window_old..]) {
        Some(i) => {
            let after = window_old + i + 1;
            let rest = &bytes[after..];
            if rest.iter().all(u8::is_ascii_whitespace)
                || serde_json::from_slice::<serde_json::Value>(rest).is_err()
            {
                after
            } else {
                bytes.len()
            }
        }
        None if serde_json::from_slice::<serde_json::Value>(&bytes[window_old..]).is_ok() => {
            bytes.len()
        }
        None => window_old,
    };
    bytes.truncate(end);
    let new_end = start + end as u64;
    if new_end == old {
        return Ok(Since::Unchanged);
    }
    let before = memchr::memchr_iter(b'\n', &bytes[..window_old]).count() as u64;
    let added = memchr::memchr_iter(b'\n', &bytes[window_old..]).count() as u64;
    let tail_at = new_end.saturating_sub(HASHED);
    let tail = if tail_at >= start {
        hash(&bytes[(tail_at - start) as usize..])
    } else {
        hash(&read_at(&mut f, tail_at, new_end - tail_at)?)
    };
    Ok(Since::Grew {
        first_line: usize::try_from(known.lines.saturating_sub(before) + 1).unwrap_or(usize::MAX),
        from: old,
        read: SourceRead {
            path: known.path.clone(),
            format: known.format.clone(),
            read_to: new_end,
            lines: known.lines + added,
            head_hash: hash(&head[..head.len().min(new_end as usize)]),
            tail_hash: tail,
            linked: known.linked.clone(),
        },
        bytes,
    })
}
