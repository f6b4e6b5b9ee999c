//! The ffmpeg processes heatlab starts: the `ffmpeg -version` probe, with a time limit, and
//! the encoders of MP4 videos. Each is listed while it runs, so that a command that must stop
//! (a second signal, or an ffmpeg that does not finish after the first) can stop it instead
//! of leaving it behind ([`stop_live_encoders`]). A process is reaped under its own lock, so
//! that no kill can reach another process that took its number afterwards.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

/// How long `ffmpeg -version` may take (it takes milliseconds; one that hangs would hang
/// heatlab).
pub const FFMPEG_PROBE_LIMIT: Duration = Duration::from_secs(5);

/// Whether `ffmpeg` can be started here and answers `ffmpeg -version` within
/// [`FFMPEG_PROBE_LIMIT`].
pub fn ffmpeg_available() -> bool {
    let mut command = Command::new("ffmpeg");
    command
        .arg("-version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let Ok(child) = spawn_listed(command) else {
        return false;
    };
    let deadline = Instant::now() + FFMPEG_PROBE_LIMIT;
    loop {
        match try_reap(&child) {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                log::warn!(
                    "ffmpeg -version did not answer within {} s: stopped it",
                    FFMPEG_PROBE_LIMIT.as_secs()
                );
                stop_and_reap(&child);
                return false;
            }
        }
    }
}

/// The ffmpeg processes running now (see the module's documentation).
static LIVE_ENCODERS: Mutex<Vec<Weak<Mutex<Child>>>> = Mutex::new(Vec::new());

pub(super) fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while it was held leaves a list of processes or a process handle: still usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts `command` and lists the process.
pub(super) fn spawn_listed(mut command: Command) -> std::io::Result<Arc<Mutex<Child>>> {
    let child = Arc::new(Mutex::new(command.spawn()?));
    let mut live = locked(&LIVE_ENCODERS);
    live.retain(|weak| weak.strong_count() > 0);
    live.push(Arc::downgrade(&child));
    Ok(child)
}

/// The process's exit status once it has ended (reaped under its lock, so that no kill can
/// reach another process that takes its number afterwards).
fn try_reap(child: &Mutex<Child>) -> std::io::Result<Option<std::process::ExitStatus>> {
    locked(child).try_wait()
}

/// Waits for the process to end, polling, so that [`stop_live_encoders`] can stop it meanwhile.
pub(super) fn wait_reaped(child: &Mutex<Child>) -> std::io::Result<std::process::ExitStatus> {
    loop {
        if let Some(status) = try_reap(child)? {
            return Ok(status);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills the process (if it still runs) and reaps it.
pub(super) fn stop_and_reap(child: &Mutex<Child>) {
    let mut child = locked(child);
    let _ = child.kill();
    let _ = child.wait();
}

/// Stops every ffmpeg process still running (a command that must end now, or whose ffmpeg
/// does not finish); returns how many it stopped. The writes to them then fail.
pub fn stop_live_encoders() -> usize {
    let live: Vec<Arc<Mutex<Child>>> = locked(&LIVE_ENCODERS)
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    live.iter()
        .filter(|child| {
            let mut child = locked(child);
            // A reaped process is not killed again (its number may be another's now).
            matches!(child.try_wait(), Ok(None)) && child.kill().is_ok()
        })
        .count()
}
