//! Ctrl-C and SIGTERM for the headless commands.
//!
//! The first SIGINT or SIGTERM asks the command to stop at its next chunk: `run` then writes
//! `run.json` (status "interrupted") and `timings.csv`, `kernel` and `bench` stop before their
//! next measurement; an ffmpeg still encoding is given [`ENCODER_GRACE`] to finish the video,
//! then stopped. While the command waits for its input (a FIFO with no writer yet) or for the
//! reader of its last output (`kernel --timings FIFO`), where there is nothing to finish, the
//! first signal exits at once. A second signal exits at once,
//! after stopping ffmpeg and deleting the temporary files of the writes in progress. Either
//! way the exit status is the shell's for a death by that signal: 130 for SIGINT, 143 for
//! SIGTERM.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::output;

/// A signal that asks heatlab to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (`kill`, a service manager).
    Terminate,
}

impl StopSignal {
    fn from_number(number: i32) -> Option<Self> {
        match number {
            SIGINT => Some(Self::Interrupt),
            SIGTERM => Some(Self::Terminate),
            _ => None,
        }
    }

    fn number(self) -> i32 {
        match self {
            Self::Interrupt => SIGINT,
            Self::Terminate => SIGTERM,
        }
    }

    /// 128 + the signal's number, as a shell reports a process killed by it.
    pub fn exit_status(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
        }
    }
}

impl fmt::Display for StopSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
        })
    }
}

/// The error a command returns when it stopped because of a signal; `main` turns it into the
/// signal's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted by {0}")]
pub struct Interrupted(pub StopSignal);

/// How long an ffmpeg still encoding after the first signal may take to finish the video
/// before it is stopped (one that hangs would otherwise hold the command forever).
pub const ENCODER_GRACE: Duration = Duration::from_secs(10);

/// Ends the process at once after `signal`: stops the video encoders and deletes the
/// temporary files of the writes in progress (and a run's lock file) first.
pub fn stop_now(signal: StopSignal, why: &str) -> ! {
    let stopped = heatlab_engine::export::ffmpeg::stop_live_encoders();
    let removed = heatlab_engine::export::atomic::remove_live_temp_files();
    let encoders = if stopped > 0 {
        format!("{stopped} ffmpeg stopped, ")
    } else {
        String::new()
    };
    output::note(&format!(
        "{signal} {why}: stopping now ({encoders}{removed} temporary files removed)"
    ));
    std::process::exit(i32::from(signal.exit_status()));
}

/// How long after the first signal a command that may be stranded (rank 0 waiting for ranks
/// that `mpirun` is ending) has to end by itself before its last words are said for it:
/// `mpirun` kills what still runs about a second after its SIGTERM.
pub const STRANDED_GRACE: Duration = Duration::from_millis(400);

/// What a command that may be stranded leaves if it does not end by itself after a signal.
pub type LastWords = Box<dyn FnOnce(StopSignal) + Send>;

/// The last words of a command that may be stranded, and whether they were said.
enum StrandedWatch {
    /// None given.
    Unarmed,
    /// Said [`STRANDED_GRACE`] after the first signal unless the command takes them back.
    Armed(LastWords),
    /// Taken by the watch: they are being said.
    Said,
    /// Taken back by the command, ending by itself.
    TakenBack,
}

impl fmt::Debug for StrandedWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unarmed => "Unarmed",
            Self::Armed(_) => "Armed",
            Self::Said => "Said",
            Self::TakenBack => "TakenBack",
        })
    }
}

/// The shared state of the signal watcher: whether, and by which signal, a stop was asked for.
#[derive(Debug, Clone)]
pub struct Interrupt {
    requested: Arc<AtomicBool>,
    signal: Arc<AtomicI32>,
    /// Set while the command waits for input: a signal then exits at once.
    at_once: Arc<AtomicBool>,
    /// A stop asked for is not said (one of several ranks: rank 0 says it).
    quiet: bool,
    stranded: Arc<Mutex<StrandedWatch>>,
}

impl Interrupt {
    /// Starts watching SIGINT and SIGTERM on a thread of its own.
    pub fn install() -> anyhow::Result<Self> {
        Self::install_saying(true)
    }

    /// [`Interrupt::install`], saying the first signal only when `says` (one rank of several
    /// says it for all).
    pub fn install_saying(says: bool) -> anyhow::Result<Self> {
        let interrupt = Self {
            quiet: !says,
            ..Self::unwatched()
        };
        let mut signals = Signals::new([SIGINT, SIGTERM])?;
        let shared = interrupt.clone();
        std::thread::Builder::new()
            .name("heatlab-signals".into())
            .spawn(move || {
                for number in signals.forever() {
                    shared.on_signal(number);
                }
            })?;
        Ok(interrupt)
    }

    /// An interrupt that no signal sets (for tests and for callers without signals).
    pub fn unwatched() -> Self {
        Self {
            requested: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicI32::new(0)),
            at_once: Arc::new(AtomicBool::new(false)),
            quiet: false,
            stranded: Arc::new(Mutex::new(StrandedWatch::Unarmed)),
        }
    }

    /// Gives the last words of a command that may be stranded by the first signal (rank 0,
    /// waiting in MPI for ranks that `mpirun` is ending): unless taken back
    /// ([`Interrupt::take_back_last_words`]) within [`STRANDED_GRACE`] of the first signal,
    /// they are said on the signal watcher's side (they should end the process).
    pub fn when_stranded(&self, last_words: LastWords) {
        *self.watch() = StrandedWatch::Armed(last_words);
    }

    /// Takes back the last words: the command ends by itself. `false` when they are already
    /// being said (the process is about to end: the command must not write what they write).
    pub fn take_back_last_words(&self) -> bool {
        let mut watch = self.watch();
        match *watch {
            StrandedWatch::Said => false,
            StrandedWatch::Unarmed | StrandedWatch::Armed(_) | StrandedWatch::TakenBack => {
                *watch = StrandedWatch::TakenBack;
                true
            }
        }
    }

    fn watch(&self) -> std::sync::MutexGuard<'_, StrandedWatch> {
        self.stranded.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// After the first signal: says the last words if the command has not taken them back
    /// within [`STRANDED_GRACE`].
    fn watch_stranding(&self, signal: StopSignal) {
        if !matches!(*self.watch(), StrandedWatch::Armed(_)) {
            return;
        }
        let stranded = Arc::clone(&self.stranded);
        let watch = std::thread::Builder::new()
            .name("heatlab-stranded".into())
            .spawn(move || {
                std::thread::sleep(STRANDED_GRACE);
                let mut watch = stranded.lock().unwrap_or_else(PoisonError::into_inner);
                match std::mem::replace(&mut *watch, StrandedWatch::Said) {
                    StrandedWatch::Armed(last_words) => {
                        drop(watch);
                        last_words(signal);
                    }
                    // Taken back: the command ends by itself.
                    other => *watch = other,
                }
            });
        if let Err(error) = watch {
            output::note(&format!(
                "cannot watch for ranks that do not answer: {error}"
            ));
        }
    }

    fn on_signal(&self, number: i32) {
        let Some(signal) = StopSignal::from_number(number) else {
            return;
        };
        // One thread handles the signals, one at a time: this test and the stores below race
        // with nothing but the command's reads.
        if self.requested.load(Ordering::SeqCst) {
            stop_now(signal, "again");
        }
        if self.at_once.load(Ordering::SeqCst) {
            stop_now(signal, "while waiting for input or output");
        }
        self.request(signal);
        if !self.quiet {
            output::note(&format!(
                "{signal}: stopping after the current chunk (send it again to stop at once)"
            ));
        }
        self.watch_stranding(signal);
        let watchdog = std::thread::Builder::new()
            .name("heatlab-encoder-grace".into())
            .spawn(|| {
                std::thread::sleep(ENCODER_GRACE);
                let stopped = heatlab_engine::export::ffmpeg::stop_live_encoders();
                if stopped > 0 {
                    output::note(&format!(
                        "ffmpeg did not finish the video within {} s of the signal: stopped it",
                        ENCODER_GRACE.as_secs()
                    ));
                }
            });
        if let Err(error) = watchdog {
            output::note(&format!("cannot watch ffmpeg after the signal: {error}"));
        }
    }

    /// Runs `wait` (reading input that may never come, such as a FIFO with no writer, or
    /// opening an output FIFO that no reader has opened) with signals exiting at once: there
    /// is nothing to finish yet, or nothing left but that.
    pub fn at_once_while<T>(&self, wait: impl FnOnce() -> T) -> T {
        self.at_once.store(true, Ordering::SeqCst);
        let result = wait();
        self.at_once.store(false, Ordering::SeqCst);
        result
    }

    /// The signal that asked for a stop, if one did.
    pub fn requested(&self) -> Option<StopSignal> {
        if !self.requested.load(Ordering::SeqCst) {
            return None;
        }
        // The number is stored before the flag is set; a flag set through `flag()` by other code
        // counts as Ctrl-C.
        let number = self.signal.load(Ordering::SeqCst);
        Some(StopSignal::from_number(number).unwrap_or(StopSignal::Interrupt))
    }

    /// `Err(Interrupted)` once a stop was asked for.
    pub fn check(&self) -> Result<(), Interrupted> {
        self.requested()
            .map_or(Ok(()), |signal| Err(Interrupted(signal)))
    }

    /// The flag itself, for code that takes a cancel flag (the tutorial kernels).
    pub fn flag(&self) -> &AtomicBool {
        &self.requested
    }

    /// Asks for a stop as `signal` would (for tests).
    pub fn request(&self, signal: StopSignal) {
        self.signal.store(signal.number(), Ordering::SeqCst);
        self.requested.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stranded watch on `interrupt` whose last words set the returned flag.
    fn armed(interrupt: &Interrupt) -> Arc<AtomicBool> {
        let said = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&said);
        interrupt.when_stranded(Box::new(move |_| flag.store(true, Ordering::SeqCst)));
        said
    }

    #[test]
    fn last_words_are_said_after_the_grace_unless_taken_back_in_time() {
        let after_grace = STRANDED_GRACE + Duration::from_millis(400);
        let stranded = Interrupt::unwatched();
        let said = armed(&stranded);
        stranded.watch_stranding(StopSignal::Terminate);
        assert!(!said.load(Ordering::SeqCst), "not before the grace");
        std::thread::sleep(after_grace);
        assert!(said.load(Ordering::SeqCst));
        assert!(!stranded.take_back_last_words(), "already said");

        let ending = Interrupt::unwatched();
        let said = armed(&ending);
        ending.watch_stranding(StopSignal::Interrupt);
        assert!(ending.take_back_last_words());
        std::thread::sleep(after_grace);
        assert!(!said.load(Ordering::SeqCst), "taken back in time");

        // Without a signal nothing is said; a command without last words takes back nothing.
        let quiet = Interrupt::unwatched();
        let said = armed(&quiet);
        std::thread::sleep(after_grace);
        assert!(!said.load(Ordering::SeqCst));
        assert!(Interrupt::unwatched().take_back_last_words());
    }

    #[test]
    fn a_request_names_its_signal_and_exit_status() {
        let interrupt = Interrupt::unwatched();
        assert!(interrupt.check().is_ok());
        interrupt.request(StopSignal::Terminate);
        assert_eq!(interrupt.check(), Err(Interrupted(StopSignal::Terminate)));
        assert_eq!(StopSignal::Terminate.exit_status(), 143);
        assert_eq!(StopSignal::Interrupt.exit_status(), 130);
        assert_eq!(
            Interrupted(StopSignal::Interrupt).to_string(),
            "interrupted by SIGINT"
        );
    }
}
