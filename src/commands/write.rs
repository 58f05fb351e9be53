//! Files written whole or not at all: into a temporary file beside the target, synced, then renamed, so a full disk
//! or a kill leaves what was there before, never a truncated file. What `export` and `continue` write.

use std::path::Path;

use super::CommandError;

/// Writes a new file whole or not at all, never over one that exists (its folders made as needed).
pub(super) fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes what `fill` writes to `path` whole or not at all (see [`write`]).
pub(super) fn write_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), CommandError>,
) -> Result<(), CommandError> {
    use std::io::Write as _;
    let io = |e: std::io::Error| CommandError::Io {
        path: path.to_path_buf(),
        reason: format!("cannot write: {e}"),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp);
    fill(&mut w)?;
    w.flush().map_err(io)?;
    let tmp = w.into_inner().map_err(|e| io(e.into_error()))?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Writes `text` to `path` whole or not at all: into a temporary file beside it, synced, then renamed over it, so
/// a full disk or a kill leaves the previous file as it was, never a truncated one.
pub(super) fn write(path: &Path, text: &str) -> Result<(), CommandError> {
    write_with(path, &mut |w| {
        w.write_all(text.as_bytes()).map_err(|e| CommandError::Io {
            path: path.to_path_buf(),
            reason: format!("cannot write: {e}"),
        })
    })
}
