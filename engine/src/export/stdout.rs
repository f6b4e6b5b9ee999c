//! Whether standard output was closed when the process started (`heatlab ... >&-`).
//!
//! Rust's runtime reopens a closed standard descriptor on `/dev/null` before `main`, where
//! every write then succeeds unread, so a command printing its result would exit 0 with
//! nothing written. Whether descriptor 1 was open is recorded before that, while the C
//! runtime runs the ELF initialisers, and a write to standard output is then an error.

use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// "Bad file descriptor", what a write to a closed descriptor fails with (9 on Linux).
const EBADF: i32 = 9;

/// Runs [`record`] before Rust's runtime starts.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static RECORD: extern "C" fn() = record;

#[cfg(target_os = "linux")]
extern "C" fn record() {
    // SAFETY: fcntl(2) with F_GETFD only reads the flags of a descriptor number (failing with
    // EBADF when it is closed); it touches no memory of ours.
    if unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1 {
        CLOSED_AT_START.store(true, Ordering::SeqCst);
    }
}

/// The error of a write to standard output when it was closed at the start (EBADF, as the
/// write itself would have failed), else `None`.
pub fn closed_at_start() -> Option<std::io::Error> {
    // Naming the initialiser keeps its object, and so its section, in the binary.
    #[cfg(target_os = "linux")]
    std::hint::black_box(&RECORD);
    CLOSED_AT_START
        .load(Ordering::SeqCst)
        .then(|| std::io::Error::from_raw_os_error(EBADF))
}
