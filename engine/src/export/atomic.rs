//! Writing output files without damaging what is there.
//!
//! Where an output path leads decides how it is written:
//! - a regular file, or nothing yet: a temporary `.heatlab-*.part` file beside it, then a rename,
//!   so that a reader never sees half a file and a failed write leaves the old file untouched;
//! - a symbolic link: followed to its target, which is then written as above (the link stays);
//! - standard output or error (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/2`, ...): the process's
//!   own stream, written directly;
//! - a character device (`/dev/null`, `/dev/full`, a terminal) or a FIFO: opened and written in
//!   place, never renamed over (a FIFO waits for its reader);
//! - a folder, a block device or a socket: refused with a message.
//!
//! Temporary files are listed in a registry while they exist, so that the command line's signal
//! handling can delete them when it must exit at once ([`remove_live_temp_files`]); on every
//! other path (errors and panics included) the temporary file's own guard deletes it.
//!
//! Test hook: when the environment variable `HEATLAB_TEST_FAIL_WRITE` holds a comma-separated
//! list of file names, writes to files of those names fail with "No space left on device" after
//! their first bytes, as on a full disk. It exists for the integration tests (a full file system
//! cannot be made on every test machine) and changes nothing when it is unset.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::live_run;
use crate::error::{HeatlabError, Result};

/// The environment variable of the full-disk test hook (see the module's documentation).
pub const FAIL_WRITE_HOOK: &str = "HEATLAB_TEST_FAIL_WRITE";

/// Symbolic links followed at most before a path is called a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Where an output path leads, and so how it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    /// A regular file at this path (after following links), or none yet: temporary file + rename.
    File(PathBuf),
    /// The process's standard output.
    Stdout,
    /// The process's standard error.
    Stderr,
    /// A character device, FIFO or open file descriptor: written in place.
    Direct(PathBuf),
}

/// Works out where `path` leads, refusing folders, block devices, sockets and link loops.
pub fn resolve_output(path: &Path) -> Result<OutputTarget> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Some(stream) = standard_stream(&current) {
            return Ok(stream);
        }
        let metadata = match fs::symlink_metadata(&current) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(OutputTarget::File(current))
            }
            Err(e) => return Err(HeatlabError::io("checking", path, e)),
        };
        let file_type = metadata.file_type();
        if file_type.is_symlink() {
            let link = fs::read_link(&current).map_err(|e| HeatlabError::io("reading", path, e))?;
            current = match current.parent() {
                Some(parent) if link.is_relative() => parent.join(link),
                _ => link,
            };
            continue;
        }
        if file_type.is_file() {
            return Ok(OutputTarget::File(current));
        }
        if file_type.is_dir() {
            return Err(refusal(path, "is a folder; give a file name"));
        }
        return if is_char_device_or_fifo(&file_type) {
            Ok(OutputTarget::Direct(current))
        } else {
            Err(refusal(
                path,
                "is a block device or socket; heatlab writes only to files, FIFOs and character devices",
            ))
        };
    }
    Err(refusal(path, "is a loop of symbolic links"))
}

fn refusal(path: &Path, why: &str) -> HeatlabError {
    HeatlabError::InvalidInput(format!("cannot write {}: it {why}", path.display()))
}

#[cfg(unix)]
fn is_char_device_or_fifo(file_type: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    file_type.is_char_device() || file_type.is_fifo()
}

#[cfg(not(unix))]
fn is_char_device_or_fifo(_file_type: &fs::FileType) -> bool {
    false
}

/// `/dev/stdout`, `/dev/stderr`, and descriptors 1 and 2 under `/dev/fd`, `/proc/self/fd` or
/// this process's own `/proc/PID/fd`; other descriptors there are written in place. Their links
/// lead to names such as `pipe:[1234]`, so they are recognised before any link is followed.
fn standard_stream(path: &Path) -> Option<OutputTarget> {
    let text = path.to_str()?;
    match text {
        "/dev/stdout" => return Some(OutputTarget::Stdout),
        "/dev/stderr" => return Some(OutputTarget::Stderr),
        _ => {}
    }
    let own = format!("/proc/{}/fd/", std::process::id());
    let descriptor = ["/dev/fd/", "/proc/self/fd/", own.as_str()]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))?;
    Some(match descriptor {
        "1" => OutputTarget::Stdout,
        "2" => OutputTarget::Stderr,
        _ => OutputTarget::Direct(path.to_path_buf()),
    })
}

/// Checks, before any work, that `path` can be written: refuses what [`resolve_output`]
/// refuses and, for a file, creates its folder and proves it writable. A run's lock file, and a
/// file in the folder of another process's live run, are refused before anything is created.
pub fn check_output(path: &Path) -> Result<()> {
    if let OutputTarget::File(target) = resolve_output(path)? {
        ensure_writable_target(path, &target)?;
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            ensure_writable_dir(parent)?;
        }
    }
    Ok(())
}

/// Writes `path` by calling `write` on what the path leads to ([`resolve_output`]): for a
/// regular file, a temporary file beside it renamed into place (on any failure the temporary
/// file is removed and the old file is untouched); for standard output, a character device or
/// a FIFO, the stream itself.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let write = |writer: &mut dyn Write| match failure_hook(path) {
        Some(bytes_before_failure) => write(&mut FullDisk::new(writer, bytes_before_failure)),
        None => write(writer),
    };
    match resolve_output(path)? {
        OutputTarget::File(target) => replace_file(path, &target, write),
        OutputTarget::Stdout => match super::stdout::closed_at_start() {
            Some(closed) => Err(HeatlabError::io("writing", path, closed)),
            None => write_stream(path, &mut std::io::stdout().lock(), write),
        },
        OutputTarget::Stderr => write_stream(path, &mut std::io::stderr().lock(), write),
        OutputTarget::Direct(target) => {
            let file = fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|e| HeatlabError::io("opening", path, e))?;
            write_stream(path, &mut BufWriter::new(file), write)
        }
    }
}

/// A file written over time (a video's frames), with the guarantees of [`write_atomically`]:
/// a regular file is written to a listed temporary file beside it and renamed into place by
/// [`AtomicFile::commit`]; dropped without a commit (an error, a panic), the temporary file is
/// deleted and the old file is untouched. Standard streams, devices and FIFOs are written in
/// place. The full-disk test hook applies as for [`write_atomically`].
pub struct AtomicFile {
    path: PathBuf,
    sink: Sink,
    /// Bytes left before the full-disk test hook fails a write.
    room: Option<usize>,
}

enum Sink {
    Temp {
        writer: BufWriter<fs::File>,
        temp: LiveTempFile,
        target: PathBuf,
    },
    Stream(Box<dyn Write + Send>),
}

impl AtomicFile {
    /// Opens `path` for writing ([`resolve_output`] decides how).
    pub fn create(path: &Path) -> Result<Self> {
        let sink = match resolve_output(path)? {
            OutputTarget::File(target) => {
                let dir = match target.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => parent,
                    _ => Path::new("."),
                };
                ensure_writable_target(path, &target)?;
                let temp = LiveTempFile::create_in(dir)?;
                let file = temp
                    .file
                    .as_file()
                    .try_clone()
                    .map_err(|e| HeatlabError::io("opening", path, e))?;
                Sink::Temp {
                    writer: BufWriter::new(file),
                    temp,
                    target,
                }
            }
            OutputTarget::Stdout => Sink::Stream(Box::new(std::io::stdout())),
            OutputTarget::Stderr => Sink::Stream(Box::new(std::io::stderr())),
            OutputTarget::Direct(target) => {
                let file = fs::OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(|e| HeatlabError::io("opening", path, e))?;
                Sink::Stream(Box::new(BufWriter::new(file)))
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            sink,
            room: failure_hook(path),
        })
    }

    /// The path of the temporary file being written, when there is one (for a program that
    /// writes the file itself, such as ffmpeg).
    pub fn temporary_path(&self) -> Option<&Path> {
        match &self.sink {
            Sink::Temp { temp, .. } => Some(temp.file.path()),
            Sink::Stream(_) => None,
        }
    }

    /// Finishes the file: flushes it and, for a regular file, renames it into place.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        match self.sink {
            Sink::Temp {
                mut writer,
                temp,
                target,
            } => {
                writer
                    .flush()
                    .map_err(|e| HeatlabError::io("writing", &path, e))?;
                drop(writer);
                finish_temp(&path, &target, temp)
            }
            Sink::Stream(mut stream) => stream
                .flush()
                .map_err(|e| HeatlabError::io("writing", &path, e)),
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let buf = match self.room {
            Some(0) => return Err(no_space_left()),
            Some(room) => &buf[..buf.len().min(room)],
            None => buf,
        };
        let written = match &mut self.sink {
            Sink::Temp { writer, .. } => writer.write(buf)?,
            Sink::Stream(stream) => stream.write(buf)?,
        };
        if let Some(room) = self.room.as_mut() {
            *room -= written;
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Temp { writer, .. } => writer.flush(),
            Sink::Stream(stream) => stream.flush(),
        }
    }
}

/// Writes `value` as pretty-printed JSON to `path`, through [`write_atomically`].
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| HeatlabError::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    // A text file ends with a newline (and output written to a terminal or a pipe does not
    // run into what follows).
    write_atomically(path, |writer| {
        writer.write_all(text.as_bytes())?;
        writer.write_all(b"\n")
    })
}

fn write_stream(
    path: &Path,
    stream: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    write(stream)
        .and_then(|()| stream.flush())
        .map_err(|e| HeatlabError::io("writing", path, e))
}

/// The temporary file + rename path of [`write_atomically`], for a regular file `target`
/// (`path` is what the user named, for messages).
fn replace_file(
    path: &Path,
    target: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    ensure_writable_target(path, target)?;
    let temp = LiveTempFile::create_in(dir)?;
    {
        let mut writer = BufWriter::new(temp.file.as_file());
        write(&mut writer).map_err(|e| HeatlabError::io("writing", path, e))?;
        writer
            .flush()
            .map_err(|e| HeatlabError::io("writing", path, e))?;
    }
    finish_temp(path, target, temp)
}

/// Syncs a written temporary file, gives it the permissions of the file it replaces (or an
/// ordinary file's), and renames it over `target` (`path` is what the user named).
fn finish_temp(path: &Path, target: &Path, temp: LiveTempFile) -> Result<()> {
    temp.file
        .as_file()
        .sync_all()
        .map_err(|e| HeatlabError::io("writing", path, e))?;
    // Temporary files are created private (0600); a replaced file keeps its permissions and a
    // new one is an ordinary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let permissions = fs::metadata(target)
            .map(|m| m.permissions())
            .unwrap_or_else(|_| fs::Permissions::from_mode(0o644));
        fs::set_permissions(temp.file.path(), permissions)
            .map_err(|e| HeatlabError::io("writing", path, e))?;
    }
    temp.persist(target)
        .map_err(|e| HeatlabError::io("renaming into place", path, e))
}

/// The paths of temporary files that exist now.
static LIVE_TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live_temp_files() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it usable: it is only a list of paths.
    LIVE_TEMP_FILES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Set (under the registry's lock) once the process is exiting at once: no temporary file is
/// created after its list was taken, so none outlives the exit.
static EXITING: AtomicBool = AtomicBool::new(false);

/// Deletes every temporary file that a write in progress holds; returns how many it deleted.
/// For a process that must exit at once (a second Ctrl-C): the writes it cuts short fail, and
/// writes that start afterwards fail before they create a file.
pub fn remove_live_temp_files() -> usize {
    {
        let _listed = live_temp_files();
        EXITING.store(true, Ordering::SeqCst);
    }
    remove_listed(|_| true)
}

/// Deletes the listed temporary files that `chosen` picks and takes them off the list.
fn remove_listed(chosen: impl Fn(&Path) -> bool) -> usize {
    let paths: Vec<PathBuf> = {
        let mut listed = live_temp_files();
        let (picked, kept) = std::mem::take(&mut *listed)
            .into_iter()
            .partition(|path| chosen(path));
        *listed = kept;
        picked
    };
    paths
        .iter()
        .filter(|path| fs::remove_file(path).is_ok())
        .count()
}

/// A temporary file, listed in the registry while it exists; deleted when dropped (on errors
/// and panics too) unless it was persisted.
struct LiveTempFile {
    // Declared first so that it is dropped (and the file deleted) before it is unlisted.
    file: tempfile::NamedTempFile,
    _listed: Listed,
}

/// Keeps a path in the registry of files to delete on an immediate exit
/// ([`remove_live_temp_files`]) while it lives; takes it off when dropped.
#[derive(Debug)]
pub struct Listed(PathBuf);

/// Lists `path` beside the temporary files, so that an immediate exit (a second Ctrl-C)
/// deletes it too, until the returned guard is dropped (a run's lock file).
pub fn list_for_removal_on_exit(path: &Path) -> Listed {
    live_temp_files().push(path.to_path_buf());
    Listed(path.to_path_buf())
}

impl Drop for Listed {
    fn drop(&mut self) {
        unlist(&self.0);
    }
}

impl LiveTempFile {
    fn create_in(dir: &Path) -> Result<Self> {
        // The file is created and listed under the registry's lock, so that an immediate exit
        // either finds it listed or stops it from being created.
        let mut listed = live_temp_files();
        if EXITING.load(Ordering::SeqCst) {
            return Err(HeatlabError::io(
                "creating a temporary file in",
                dir,
                std::io::Error::new(std::io::ErrorKind::Interrupted, "the process is exiting"),
            ));
        }
        let file = tempfile::Builder::new()
            .prefix(".heatlab-")
            .suffix(".part")
            .tempfile_in(dir)
            .map_err(|e| HeatlabError::io("creating a temporary file in", dir, e))?;
        let path = file.path().to_path_buf();
        listed.push(path.clone());
        drop(listed);
        Ok(Self {
            file,
            _listed: Listed(path),
        })
    }

    fn persist(self, target: &Path) -> std::io::Result<()> {
        let Self { file, _listed } = self;
        file.persist(target).map(drop).map_err(|e| e.error)
    }
}

fn unlist(path: &Path) {
    live_temp_files().retain(|p| p != path);
}

/// Bytes a hooked write may take before it fails (see the module's documentation).
fn failure_hook(path: &Path) -> Option<usize> {
    let names = std::env::var(FAIL_WRITE_HOOK).ok()?;
    let name = path.file_name()?.to_str()?;
    names.split(',').any(|n| n.trim() == name).then_some(16)
}

/// A writer that fails as a full disk does once `room` bytes have passed.
struct FullDisk<'a> {
    inner: &'a mut dyn Write,
    room: usize,
}

impl<'a> FullDisk<'a> {
    fn new(inner: &'a mut dyn Write, room: usize) -> Self {
        Self { inner, room }
    }
}

impl Write for FullDisk<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(no_space_left());
        }
        let n = buf.len().min(self.room);
        let written = self.inner.write(&buf[..n])?;
        self.room -= written;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The operating system's own "No space left on device" error.
fn no_space_left() -> std::io::Error {
    if cfg!(target_os = "linux") {
        // ENOSPC on Linux.
        std::io::Error::from_raw_os_error(28)
    } else {
        std::io::Error::from(std::io::ErrorKind::StorageFull)
    }
}

/// Refuses to replace a run's lock file, or to write in the folder of another process's live
/// run ([`live_run::ensure_not_live`]); `path` is what the user named, `target` the regular
/// file it leads to.
fn ensure_writable_target(path: &Path, target: &Path) -> Result<()> {
    live_run::ensure_not_live(target.parent().unwrap_or(Path::new(".")))?;
    if target.file_name() == Some(std::ffi::OsStr::new(live_run::LOCK_FILE)) {
        return Err(HeatlabError::OutputCollision {
            path: path.to_path_buf(),
            why: "it is the lock file of a heatlab run's output folder".into(),
        });
    }
    Ok(())
}

/// Creates `dir` (and its parents) and proves that files can be written in it; refuses the
/// folder of another process's live run ([`live_run::ensure_not_live`]).
pub fn ensure_writable_dir(dir: &Path) -> Result<()> {
    live_run::ensure_not_live(dir)?;
    fs::create_dir_all(dir).map_err(|e| HeatlabError::io("creating folder", dir, e))?;
    tempfile::Builder::new()
        .prefix(".heatlab-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| HeatlabError::io("cannot write in folder", dir, e))
}

#[cfg(test)]
mod tests;
