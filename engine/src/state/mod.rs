//! Saved states: the whole of a diffusion run in one file, so that it can be resumed later,
//! on any backend, and continue bit for bit as if it had never stopped.
//!
//! A state holds the current field, the step count, the step parameters (coefficient and
//! boundary), the initial field (what Reset goes back to) and where that initial field came
//! from (the jagged field's parameters, or the imported file). Stepping is deterministic and
//! every backend agrees with the CPU to the last bit, so nothing else is needed to continue.
//!
//! # The file format (version 1)
//!
//! All integers and floats are little-endian.
//!
//! | offset | bytes | what |
//! |---|---|---|
//! | 0 | 8 | magic: `\x89HLSTATE` |
//! | 8 | 4 | format version, `u32` (1) |
//! | 12 | 4 | header length `H` in bytes, `u32` |
//! | 16 | `H` | header: UTF-8 JSON, [`StateHeader`] |
//! | 16 + `H` | 4·rows·cols | the current field, `f32`, row-major |
//! | … | 4·rows·cols | the initial field, `f32`, row-major |
//! | … | rows·cols | version 2 with a heat problem: the kind of every cell, `u8`, row-major |
//! | end − 4 | 4 | CRC-32 (IEEE) of every byte before it, `u32` |
//!
//! Version 2 adds `problem` to the header (the heat problem's kinds, sides, spacing, time-step
//! rule and simulated seconds; see [`crate::problem`]) and its cell map after the fields. A
//! state without a problem is still written as version 1.
//!
//! A reader refuses a file with another magic, a newer version, a version that does not match
//! whether the header has a problem, a length that does not match the header (truncated or
//! with bytes appended), a header that does not parse, a checksum that does not match (checked
//! before the problem, so that any changed byte is a mismatch), or a problem whose time step
//! is above its stability limit, each with its own [`StateFileError`].

use std::io::{Read, Write};
use std::path::Path;

use crate::compute::{Boundary, StepParams};
pub use crate::error::StateFileError;
use crate::error::{HeatlabError, Result};
use crate::export::write_atomically;
use crate::field::JaggedParams;
use crate::grid::{Grid, GridSize};
use crate::sim::Simulation;
mod binary;

use binary::{
    cut_short, read_grid, read_header, read_problem_map, write_f32s, ChecksumReader,
    ChecksumWriter, GridReadError,
};

/// The first eight bytes of every state file (the high first byte keeps text files out).
pub const MAGIC: [u8; 8] = *b"\x89HLSTATE";

/// The newest format version this heatlab writes and reads (2: with a heat problem).
pub const FORMAT_VERSION: u32 = 2;

/// The version of a state without a heat problem (readable by older heatlabs).
const UNIFORM_FORMAT_VERSION: u32 = 1;

/// Bytes before the header: magic, version and header length.
const PREAMBLE_BYTES: usize = 16;

/// Bytes of the trailing checksum.
const CHECKSUM_BYTES: usize = 4;

/// The longest header a reader accepts (a real one is a few hundred bytes).
const MAX_HEADER_BYTES: u32 = 1 << 20;

/// Copies of the field a loaded state holds: the current and the initial field.
const STATE_COPIES: usize = 2;

/// Bytes after a state's end that a reader counts before it stops (a stream may never end).
const TRAILING_BYTES_READ: u64 = 1 << 20;

/// Where the initial field came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FieldOrigin {
    /// The jagged field of the tutorial, with these parameters.
    Jagged(JaggedParams),
    /// A file the user imported (`.npy` or an image); `file` is its name as given.
    Imported {
        /// The file's name or path as the user gave it.
        file: String,
    },
    /// A scenario file's initial temperature.
    Scenario {
        /// The scenario file's name or path as the user gave it.
        file: String,
        /// Its title.
        title: String,
        /// What to look for in it.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        description: String,
        /// The name of the gallery problem it is, if one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gallery: Option<String>,
    },
}

impl std::fmt::Display for FieldOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Jagged(params) => write!(f, "jagged field, seed {}", params.seed),
            Self::Imported { file } => write!(f, "imported from {}", printable(file)),
            Self::Scenario {
                title,
                gallery: Some(name),
                ..
            } => write!(
                f,
                "scenario \"{}\" (gallery: {})",
                printable(title),
                printable(name)
            ),
            Self::Scenario { file, title, .. } => {
                write!(f, "scenario \"{}\" ({})", printable(title), printable(file))
            }
        }
    }
}

/// `text` with its control characters escaped (`\u{1b}`): a name read from a file must not
/// move the cursor, recolour or retitle the terminal it is printed to.
fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    std::borrow::Cow::Owned(escaped)
}

/// The JSON header of a state file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StateHeader {
    /// The heatlab version that wrote the file (for people; the format version decides).
    pub heatlab_version: String,
    /// Rows of both fields.
    pub rows: usize,
    /// Columns of both fields.
    pub cols: usize,
    /// Steps taken from the initial field to the current one.
    pub step: u64,
    /// The diffusion coefficient (JSON numbers round-trip `f32` exactly).
    pub coeff: f32,
    /// The boundary condition.
    pub boundary: Boundary,
    /// Where the initial field came from.
    pub origin: FieldOrigin,
    /// The heat problem stepped (version 2), its map stored after the fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<SavedProblem>,
}

/// A heat problem in a saved state, and how far it has run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedProblem {
    /// The problem (its map travels as bytes after the fields).
    pub problem: crate::problem::HeatProblem,
    /// Seconds simulated since the initial field.
    pub simulated_seconds: f64,
}

impl SavedProblem {
    /// Checks a problem read from a file of fields of `size` and an intact checksum: what is
    /// wrong with it, or why it cannot be stepped.
    fn check(&self, size: GridSize) -> std::result::Result<(), StateFileError> {
        let damaged = |why: String| StateFileError::BadHeader(why);
        if self.problem.size != size {
            return Err(damaged("the heat problem's size is not the field's".into()));
        }
        if !(self.simulated_seconds.is_finite() && self.simulated_seconds >= 0.0) {
            return Err(damaged("the simulated time is not a time".into()));
        }
        self.problem.check().map_err(|e| damaged(e.to_string()))?;
        // Its time step against its stability limit: refused here, before a run writes
        // anything, rather than when the simulation starts.
        self.problem
            .tables()
            .map(|_| ())
            .map_err(|e| StateFileError::Unsteppable(e.to_string()))
    }
}

/// Everything a resumed run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedState {
    /// The field at `step`.
    pub current: Grid,
    /// The field at step 0 (what Reset goes back to).
    pub initial: Grid,
    /// Steps taken.
    pub step: u64,
    /// Coefficient and boundary.
    pub params: StepParams,
    /// Where the initial field came from.
    pub origin: FieldOrigin,
    /// The heat problem stepped, if any.
    pub problem: Option<Box<SavedProblem>>,
}

impl SavedState {
    /// The state of `sim` now (downloads its field).
    pub fn of(sim: &mut Simulation, origin: FieldOrigin) -> Result<Self> {
        Ok(Self {
            current: sim.field()?,
            initial: sim.initial()?.clone(),
            step: sim.step_count(),
            params: sim.params(),
            origin,
            problem: sim.problem().cloned().map(|problem| {
                Box::new(SavedProblem {
                    problem,
                    simulated_seconds: sim.simulated_seconds().unwrap_or(0.0),
                })
            }),
        })
    }

    fn header(&self) -> StateHeader {
        StateHeader {
            heatlab_version: env!("CARGO_PKG_VERSION").to_string(),
            rows: self.current.rows(),
            cols: self.current.cols(),
            step: self.step,
            coeff: self.params.coeff,
            boundary: self.params.boundary,
            origin: self.origin.clone(),
            problem: self.problem.as_deref().cloned(),
        }
    }

    /// Writes the state to `path` atomically (a symbolic link is written through).
    pub fn save(&self, path: &Path) -> Result<()> {
        if self.initial.size() != self.current.size() {
            return Err(HeatlabError::Internal(format!(
                "the initial field ({}) and the current one ({}) differ in size",
                self.initial.size(),
                self.current.size()
            )));
        }
        let header = serde_json::to_vec(&self.header()).map_err(|e| HeatlabError::Encode {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let header_len = u32::try_from(header.len()).map_err(|_| HeatlabError::Encode {
            path: path.to_path_buf(),
            message: "header too long".into(),
        })?;
        let map = self.problem.as_ref().map(|p| p.problem.map.as_slice());
        if map.is_some_and(|m| m.len() != self.current.size().cells()) {
            return Err(HeatlabError::Internal(
                "the heat problem's map does not fit the field".into(),
            ));
        }
        let version = if map.is_some() {
            FORMAT_VERSION
        } else {
            UNIFORM_FORMAT_VERSION
        };
        write_atomically(path, |writer| {
            let mut writer = ChecksumWriter::new(writer);
            writer.write_all(&MAGIC)?;
            writer.write_all(&version.to_le_bytes())?;
            writer.write_all(&header_len.to_le_bytes())?;
            writer.write_all(&header)?;
            write_f32s(&mut writer, self.current.as_slice())?;
            write_f32s(&mut writer, self.initial.as_slice())?;
            if let Some(map) = map {
                writer.write_all(map)?;
            }
            let checksum = writer.hasher.clone().finalize();
            writer.inner.write_all(&checksum.to_le_bytes())
        })
    }

    /// Reads a state file, refusing anything that is not a whole state of a version this
    /// heatlab knows ([`HeatlabError::StateFile`] says why).
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_for(path, STATE_COPIES)
    }

    /// As [`SavedState::load`], for a caller that will hold `held_copies` copies of the field
    /// at once (a run): the size in the header is checked against the memory they need, or
    /// the state's own two if more, before the fields are read. A pipe or a FIFO
    /// (`--resume <(cat state)`) is read to its end; its reported length is not trusted.
    pub fn load_for(path: &Path, held_copies: usize) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| HeatlabError::io("opening", path, e))?;
        let metadata = file
            .metadata()
            .map_err(|e| HeatlabError::io("reading", path, e))?;
        let length = metadata.is_file().then_some(metadata.len());
        Self::read_checked(std::io::BufReader::new(file), length, path, held_copies)
    }

    /// Reads a state of `length` bytes from `reader`; `path` names it in messages.
    pub fn read(reader: impl Read, length: u64, path: &Path) -> Result<Self> {
        Self::read_checked(reader, Some(length), path, STATE_COPIES)
    }

    /// Reads a state from `reader`. A known `length` (a regular file's) refuses a truncated
    /// or a longer file before its fields are read; either way the data itself must end
    /// where the header says.
    fn read_checked(
        reader: impl Read,
        length: Option<u64>,
        path: &Path,
        held_copies: usize,
    ) -> Result<Self> {
        let refuse = |reason| HeatlabError::StateFile {
            path: path.to_path_buf(),
            reason,
        };
        let mut reader = ChecksumReader::new(reader);
        let (header, size, params, expected) = read_header(&mut reader, length, path)?;
        // A read that ends early: the bytes read so far against those expected.
        let cut = |expected: u64, reader: &ChecksumReader<_>, e: std::io::Error| {
            cut_short(path, length, expected, reader.consumed, e)
        };
        let copies = held_copies.max(STATE_COPIES);
        crate::memory::ensure_host_memory(
            &format!("{size} saved state ({copies} copies of the field)"),
            copies.saturating_mul(size.bytes()),
        )?;
        let read_field = |reader: &mut ChecksumReader<_>| {
            read_grid(reader, size).map_err(|e| match e {
                GridReadError::Memory(error) => error,
                GridReadError::Io(error) => cut(expected, reader, error),
            })
        };
        let current = read_field(&mut reader)?;
        let initial = read_field(&mut reader)?;
        let mut problem = header.problem;
        if let Some(saved) = problem.as_mut() {
            saved.problem.map =
                read_problem_map(&mut reader, size).map_err(|e| cut(expected, &reader, e))?;
        }
        let computed = reader.hasher.clone().finalize();
        let mut stored = [0u8; CHECKSUM_BYTES];
        reader
            .read_exact(&mut stored)
            .map_err(|e| cut(expected, &reader, e))?;
        // A stream's length is known only now: bytes after the checksum are refused.
        let extra = std::io::copy(
            &mut (&mut reader.inner).take(TRAILING_BYTES_READ),
            &mut std::io::sink(),
        )
        .map_err(|e| HeatlabError::io("reading", path, e))?;
        if extra > 0 {
            return Err(refuse(StateFileError::TrailingBytes { extra }));
        }
        if u32::from_le_bytes(stored) != computed {
            return Err(refuse(StateFileError::ChecksumMismatch));
        }
        // Only now, with every byte known to be as written: a flipped byte in the map is a
        // checksum mismatch, not a kind the map names.
        if let Some(saved) = &problem {
            saved.check(size).map_err(refuse)?;
        }
        for (field, grid) in [("field", &current), ("initial field", &initial)] {
            let cells = grid.non_finite_count();
            if cells > 0 {
                let total = size.cells();
                return Err(refuse(StateFileError::NonFinite {
                    field,
                    cells,
                    total,
                }));
            }
        }
        Ok(Self {
            current,
            initial,
            step: header.step,
            params,
            origin: header.origin,
            problem: problem.map(Box::new),
        })
    }

    /// A simulation on `backend` standing where this state stands (stepping its heat problem,
    /// if it has one).
    pub fn into_simulation(self, backend: Box<dyn crate::compute::Backend>) -> Result<Simulation> {
        let mut sim =
            Simulation::resume(backend, self.initial, &self.current, self.step, self.params)?;
        if let Some(saved) = self.problem {
            sim.set_problem(Some(saved.problem), true)?;
            sim.set_simulated_seconds(saved.simulated_seconds);
        }
        Ok(sim)
    }
}

#[cfg(test)]
mod tests;
