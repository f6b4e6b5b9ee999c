//! Atomic file writes.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::error::{HeatlabError, Result};

/// Writes `path` by calling `write` on a temporary file beside it and renaming it into place.
/// On any failure the temporary file is removed and `path` is untouched.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let temp = tempfile::Builder::new()
        .prefix(".heatlab-")
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(|e| HeatlabError::io("creating a temporary file in", dir, e))?;
    {
        let mut writer = BufWriter::new(temp.as_file());
        write(&mut writer).map_err(|e| HeatlabError::io("writing", path, e))?;
        writer
            .flush()
            .map_err(|e| HeatlabError::io("writing", path, e))?;
    }
    temp.as_file()
        .sync_all()
        .map_err(|e| HeatlabError::io("writing", path, e))?;
    // Temporary files are created private (0600); what the user exports is an ordinary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o644))
            .map_err(|e| HeatlabError::io("writing", path, e))?;
    }
    temp.persist(path)
        .map_err(|e| HeatlabError::io("renaming into place", path, e.error))?;
    Ok(())
}

/// Creates `dir` (and its parents) and proves that files can be written in it.
pub fn ensure_writable_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| HeatlabError::io("creating folder", dir, e))?;
    tempfile::Builder::new()
        .prefix(".heatlab-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| HeatlabError::io("cannot write in folder", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write_atomically(&path, |w| w.write_all(b"first")).unwrap();
        let failed = write_atomically(&path, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("interrupted"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"first");
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "the temporary file must be removed");
    }
}
