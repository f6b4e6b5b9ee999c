//! The parent's side of a validation: hand the kernel and the field to a child process, read
//! its lines with a time limit for each stage, kill it when a limit passes, and make a
//! [`Verdict`] of what came back. Nothing of the kernel ever runs in the parent.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::verdict::{CaseOutcome, CaseResult, ChildEnding, ChildLine, Verdict};
use crate::compute::StepParams;
use crate::error::{HeatlabError, Result};
use crate::grid::Grid;

/// Steps on the current field (the small fields take [`super::check::SMALL_STEPS`]).
pub const CURRENT_FIELD_STEPS: u64 = 8;

/// What to validate.
#[derive(Debug, Clone)]
pub struct ValidationJob {
    /// The kernel's source.
    pub source: String,
    /// The app's current field, when it has one.
    pub current: Option<Grid>,
    /// The coefficient and the boundary in use.
    pub params: StepParams,
}

/// How long each stage of the child may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChildLimits {
    /// From the start to the first line (opening the GPU, NVRTC, loading the module).
    pub startup: Duration,
    /// Between a case's end and the next line.
    pub between: Duration,
    /// For the child to exit once it gave its last line.
    pub exit: Duration,
}

impl Default for ChildLimits {
    fn default() -> Self {
        Self {
            startup: Duration::from_secs(20),
            between: Duration::from_secs(5),
            exit: Duration::from_secs(5),
        }
    }
}

/// Validates `job` in a child process of `program` (the heatlab binary itself: its hidden
/// `lab-check` subcommand). The field and the source go through files in a temporary folder.
pub fn validate_in_child(program: &Path, job: &ValidationJob, limits: ChildLimits) -> Verdict {
    match prepare(program, job) {
        Ok((folder, command)) => {
            let verdict = validate_with_command(command, limits);
            drop(folder);
            verdict
        }
        Err(error) => Verdict::Failed(error.to_string()),
    }
}

fn prepare(program: &Path, job: &ValidationJob) -> Result<(tempfile::TempDir, Command)> {
    let folder = tempfile::Builder::new()
        .prefix("heatlab-lab-")
        .tempdir()
        .map_err(|e| {
            HeatlabError::io("creating a temporary folder", Path::new("heatlab-lab"), e)
        })?;
    let source = folder.path().join("user_step.cu");
    crate::export::write_atomically(&source, |out| out.write_all(job.source.as_bytes()))?;
    let mut command = Command::new(program);
    command
        .arg("lab-check")
        .arg("--source")
        .arg(&source)
        .arg("--coeff")
        .arg(job.params.coeff.to_string())
        .arg("--boundary")
        .arg(job.params.boundary.to_string());
    if let Some(field) = &job.current {
        let path = folder.path().join("field.npy");
        crate::export::write_npy(&path, field)?;
        command
            .arg("--field")
            .arg(&path)
            .arg("--steps")
            .arg(CURRENT_FIELD_STEPS.to_string());
    }
    Ok((folder, command))
}

/// Runs `command` as the child and reads its [`ChildLine`]s (one JSON object per line) under
/// `limits`; a stage that takes longer kills the child.
pub fn validate_with_command(mut command: Command, limits: ChildLimits) -> Verdict {
    let started = Instant::now();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            return Verdict::Failed(format!("cannot start the check's process: {error}"));
        }
    };
    let lines = stdout_lines(&mut child);
    let stderr = child.stderr.take().map(|mut stderr| {
        std::thread::spawn(move || {
            let mut text = String::new();
            // Whatever could be read is kept; a read error only shortens it.
            stderr.read_to_string(&mut text).ok();
            text
        })
    });
    let mut progress = Progress::new(&limits, started);
    let ending = loop {
        let wait = progress.deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(wait) {
            Ok(text) => {
                // Anything but the protocol on stdout (a driver's message) is skipped.
                if let Ok(line) = serde_json::from_str::<ChildLine>(&text) {
                    if let Some(ending) = progress.read(line, &limits) {
                        break Some(ending);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                kill(&mut child);
                return Verdict::Timeout {
                    case: progress.stage,
                    limit: progress.limit,
                    elapsed: started.elapsed(),
                };
            }
            Err(RecvTimeoutError::Disconnected) => break None,
        }
    };
    let status = wait_or_kill(&mut child, limits.exit);
    let elapsed = started.elapsed();
    match ending {
        Some(ending) => verdict_of(ending, progress.cases, progress.device, elapsed),
        None => {
            let status = status.map_or_else(|| "killed".to_string(), |s| s.to_string());
            let tail = stderr_tail(stderr);
            Verdict::Failed(format!(
                "the check's process ended without a verdict during {} ({status}){}",
                progress.stage,
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {tail}")
                }
            ))
        }
    }
}

/// The lines the child writes to its stdout, read on a thread of their own.
fn stdout_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (lines_tx, lines) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    lines
}

/// The last 600 characters of what the child wrote to its stderr.
fn stderr_tail(handle: Option<std::thread::JoinHandle<String>>) -> String {
    let text = handle.and_then(|h| h.join().ok()).unwrap_or_default();
    let trimmed = text.trim();
    let start = trimmed
        .char_indices()
        .rev()
        .nth(600)
        .map_or(0, |(index, _)| index);
    trimmed[start..].to_string()
}

/// Where the child is in the protocol: its stage, the time it has for it, what it reported.
struct Progress {
    stage: String,
    limit: Duration,
    deadline: Instant,
    device: String,
    cases: Vec<CaseResult>,
}

impl Progress {
    fn new(limits: &ChildLimits, started: Instant) -> Self {
        Self {
            stage: "opening the GPU and compiling".to_string(),
            limit: limits.startup,
            deadline: started + limits.startup,
            device: String::new(),
            cases: Vec::new(),
        }
    }

    /// Takes one line of the protocol; the child's ending when it is one.
    fn read(&mut self, line: ChildLine, limits: &ChildLimits) -> Option<ChildEnding> {
        match line {
            ChildLine::Ready { device } => {
                self.device = device;
                self.stage = "preparing the first case".into();
                self.limit = limits.between;
            }
            ChildLine::Start {
                case,
                limit_seconds,
            } => {
                self.stage = format!("case {case}");
                self.limit = Duration::from_secs_f64(limit_seconds.clamp(0.1, 3600.0));
            }
            ChildLine::Case(result) => {
                self.cases.push(result);
                self.stage = "preparing the next case".into();
                self.limit = limits.between;
            }
            ChildLine::End(ending) => return Some(ending),
        }
        self.deadline = Instant::now() + self.limit;
        None
    }
}

/// The verdict of a child that ended with `ending` after reporting `cases`.
fn verdict_of(
    ending: ChildEnding,
    cases: Vec<CaseResult>,
    device: String,
    elapsed: Duration,
) -> Verdict {
    match ending {
        ChildEnding::Completed => {
            if cases.iter().all(|c| c.outcome == CaseOutcome::Identical) && !cases.is_empty() {
                Verdict::Identical {
                    cases,
                    device,
                    elapsed,
                }
            } else {
                Verdict::Differs { cases, elapsed }
            }
        }
        ChildEnding::Contract { message } => Verdict::Contract(message),
        ChildEnding::Compile { log } => Verdict::Compile(log),
        ChildEnding::Fault { case, message } => Verdict::Fault {
            case,
            message,
            elapsed,
        },
        ChildEnding::Failed { message } => Verdict::Failed(message),
    }
}

/// Kills the child and reaps it.
fn kill(child: &mut Child) {
    // It may have exited on its own meanwhile: then there is nothing to kill.
    child.kill().ok();
    child.wait().ok();
}

/// The child's exit status within `limit`, or `None` after killing it.
fn wait_or_kill(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                kill(child);
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::verdict::CaseResult;

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    }

    fn line(line: &ChildLine) -> String {
        serde_json::to_string(line).unwrap().replace('\'', "'\\''")
    }

    fn quick() -> ChildLimits {
        ChildLimits {
            startup: Duration::from_secs(5),
            between: Duration::from_secs(5),
            exit: Duration::from_secs(2),
        }
    }

    #[test]
    fn a_child_that_reports_identical_cases_gives_identical() {
        let case = ChildLine::Case(CaseResult {
            case: "7x5 dirichlet, 4 steps".into(),
            outcome: CaseOutcome::Identical,
        });
        let script = format!(
            "echo '{}'; echo 'not protocol'; echo '{}'; echo '{}'",
            line(&ChildLine::Ready {
                device: "Fake GPU".into()
            }),
            line(&case),
            line(&ChildLine::End(ChildEnding::Completed))
        );
        let verdict = validate_with_command(shell(&script), quick());
        assert!(verdict.is_identical(), "{verdict:?}");
        assert!(verdict.summary().contains("all 1 cases on Fake GPU"));
    }

    #[test]
    fn a_differing_case_is_not_identical_and_says_where() {
        let case = ChildLine::Case(CaseResult {
            case: "7x5 neumann, 4 steps".into(),
            outcome: CaseOutcome::Differs {
                array: "field".into(),
                step: 1,
                row: 0,
                col: 4,
                expected: 0.5,
                got: 0.25,
                max_abs_difference: 0.25,
                cells_differing: 7,
            },
        });
        let script = format!(
            "echo '{}'; echo '{}'",
            line(&case),
            line(&ChildLine::End(ChildEnding::Completed))
        );
        let verdict = validate_with_command(shell(&script), quick());
        assert!(!verdict.is_identical());
        let summary = verdict.summary();
        assert!(summary.contains("1 of 1 cases differ"), "{summary}");
        assert!(summary.contains("row 0, column 4"), "{summary}");
    }

    #[test]
    fn a_silent_child_is_killed_at_its_cases_limit() {
        let script = format!(
            "echo '{}'; echo '{}'; exec sleep 60",
            line(&ChildLine::Ready {
                device: "Fake GPU".into()
            }),
            line(&ChildLine::Start {
                case: "endless".into(),
                limit_seconds: 0.5
            }),
        );
        let started = Instant::now();
        let verdict = validate_with_command(shell(&script), quick());
        assert!(started.elapsed() < Duration::from_secs(4), "{verdict:?}");
        let Verdict::Timeout { case, limit, .. } = &verdict else {
            panic!("{verdict:?}");
        };
        assert_eq!(case, "case endless");
        assert_eq!(*limit, Duration::from_millis(500));
        assert!(verdict.summary().contains("killed"));
    }

    #[test]
    fn faults_compile_errors_and_crashes_are_told_apart() {
        let fault = ChildLine::End(ChildEnding::Fault {
            case: "7x5 dirichlet".into(),
            message: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
        });
        let verdict =
            validate_with_command(shell(&format!("echo '{}'; exit 1", line(&fault))), quick());
        assert!(matches!(verdict, Verdict::Fault { .. }), "{verdict:?}");
        assert!(verdict.summary().contains("ILLEGAL_ADDRESS"));
        let compile = ChildLine::End(ChildEnding::Compile {
            log: "user_step.cu(3): error: expected a \";\"".into(),
        });
        let verdict = validate_with_command(shell(&format!("echo '{}'", line(&compile))), quick());
        assert!(matches!(verdict, Verdict::Compile(ref log) if log.contains("(3)")));
        let verdict = validate_with_command(shell("echo oops >&2; kill -SEGV $$"), quick());
        let Verdict::Failed(message) = &verdict else {
            panic!("{verdict:?}");
        };
        assert!(message.contains("without a verdict"), "{message}");
        assert!(message.contains("oops"), "{message}");
    }
}
