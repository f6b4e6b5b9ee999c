//! One rank's part of a field split over ranks: the commands rank 0 sends every rank (see
//! [`super::split`]), how each rank carries them out on its band, and the loop the other ranks
//! run ([`serve`]).
//!
//! A command goes out from rank 0 to every rank (a broadcast), with each rank's own part when it
//! has one (its rows of a new field or of a problem's map, scattered); every rank, rank 0 too,
//! carries it out on its band and answers rank 0 (a gather). What the ranks compute together
//! (the halos of a step) they exchange among themselves inside the command.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::compute::{
    create_backend, Backend, BackendChoice, BackendKind, KernelChoice, Layer, ProblemUpload,
    StepParams,
};
use crate::error::{HeatlabError, Result};
use crate::grid::{Boundary, Grid, GridSize};
use crate::problem::{EnergyExchange, StepTables};

use super::band_field::{BandField, DeviceExchange};
use super::bands::Bands;
use super::link::RankLink;
use super::overlap::OverlapChoice;

/// What rank 0 asks of every rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum BandCommand {
    /// Open this rank's backend (the first command).
    Open(OpenRequest),
    /// Join the ranks' GPUs so that halos go device to device (NCCL), once every rank opened a
    /// CUDA backend.
    StartDeviceHalos,
    /// A new field of `size` split with halos `depth` rows deep, wrapping when `wraps`; each
    /// rank's own rows come with it.
    Upload {
        /// The whole field's size.
        size: GridSize,
        /// The halo depth, rows.
        depth: usize,
        /// Whether the rows wrap around (a periodic field).
        wraps: bool,
    },
    /// The same field split again, wrapping or not (the own rows stay).
    Reband {
        /// Whether the rows wrap around from now on.
        wraps: bool,
    },
    /// `steps` steps of the plate's stencil, or of the held problem.
    Advance {
        /// Steps to take.
        steps: u64,
        /// The plate's coefficient and boundary.
        params: StepParams,
    },
    /// Each rank's own rows.
    Download,
    /// Each rank's own rows of the Laplacian.
    Laplacian {
        /// The boundary it is computed under.
        boundary: Boundary,
    },
    /// Each rank's own rows' statistics.
    Statistics,
    /// A heat problem stepped from now on; each rank's held rows of the map come with it.
    SetProblem {
        /// The problem's tables.
        tables: StepTables,
        /// Whether its energy is booked.
        book_energy: bool,
    },
    /// Back to the plate's stencil.
    DropProblem,
    /// New tables for the held problem (a heater switched).
    Retable {
        /// The new tables.
        tables: StepTables,
    },
    /// The energy each rank booked since the last take.
    TakeEnergy,
    /// Each own row's stored energy.
    StoredEnergyByRow,
    /// The values of the cells each rank owns, of these (row-major indices).
    Gather {
        /// The cells, in the whole field.
        cells: Vec<u32>,
    },
    /// New values for the cells each rank owns, of these.
    Scatter {
        /// The cells, in the whole field.
        cells: Vec<u32>,
        /// Their values.
        values: Vec<f32>,
    },
    /// A new field of `size` split as by `Upload`, each rank reading its own rows of the
    /// `.npy` array at `path` (whose header rank 0 read): no rank holds the whole field.
    ReadNpy {
        /// The array.
        path: PathBuf,
        /// The whole field's size.
        size: GridSize,
        /// The halo depth, rows.
        depth: usize,
        /// Whether the rows wrap around.
        wraps: bool,
    },
    /// Each rank writes its own rows of the field, or of its Laplacian under `boundary`, into
    /// one `.npy` at `path` ([`write_npy_by_ranks`]).
    WriteNpy {
        /// The file.
        path: PathBuf,
        /// The field or its Laplacian.
        layer: Layer,
        /// The Laplacian's boundary.
        boundary: Boundary,
    },
    /// Each rank exchanges its halos now unless they are whole.
    RefreshHalos,
    /// Each rank keeps a copy of its own rows: the run's initial field.
    KeepInitial,
    /// Each rank's kept rows become its field again.
    RestoreInitial,
    /// Each rank's kept rows.
    DownloadInitial,
    /// Each rank lets its kept rows go.
    ForgetInitial,
    /// The run is over: every rank ends.
    Finish,
}

impl BandCommand {
    /// Whether each rank's own part follows the command.
    pub fn has_parts(&self) -> bool {
        match self {
            Self::Upload { .. } | Self::SetProblem { .. } => true,
            Self::Open(_)
            | Self::StartDeviceHalos
            | Self::Reband { .. }
            | Self::Advance { .. }
            | Self::Download
            | Self::Laplacian { .. }
            | Self::Statistics
            | Self::DropProblem
            | Self::Retable { .. }
            | Self::TakeEnergy
            | Self::StoredEnergyByRow
            | Self::Gather { .. }
            | Self::Scatter { .. }
            | Self::ReadNpy { .. }
            | Self::WriteNpy { .. }
            | Self::RefreshHalos
            | Self::KeepInitial
            | Self::RestoreInitial
            | Self::DownloadInitial
            | Self::ForgetInitial
            | Self::Finish => false,
        }
    }

    /// Whether the ranks talk among themselves while carrying it out: a rank failing in it
    /// may leave the others waiting for it.
    pub fn talks_among_ranks(&self) -> bool {
        match self {
            Self::StartDeviceHalos
            | Self::Advance { .. }
            | Self::Laplacian { .. }
            | Self::RefreshHalos => true,
            Self::Open(_)
            | Self::Upload { .. }
            | Self::Reband { .. }
            | Self::Download
            | Self::Statistics
            | Self::SetProblem { .. }
            | Self::DropProblem
            | Self::Retable { .. }
            | Self::TakeEnergy
            | Self::StoredEnergyByRow
            | Self::Gather { .. }
            | Self::Scatter { .. }
            // Both agree on every rank's success before they part ways.
            | Self::ReadNpy { .. }
            | Self::WriteNpy { .. }
            | Self::KeepInitial
            | Self::RestoreInitial
            | Self::DownloadInitial
            | Self::ForgetInitial
            | Self::Finish => false,
        }
    }
}

/// How every rank opens its backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenRequest {
    /// The backend asked for.
    pub backend: BackendChoice,
    /// The GPU kernel asked for.
    pub kernel: KernelChoice,
    /// Whether whole rounds overlap the halo exchange with the interior, where every rank
    /// steps on a GPU (see [`super::overlap`]).
    pub overlap: OverlapChoice,
}

/// What a rank's backend is, answered to [`BandCommand::Open`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenedBackend {
    /// CPU or CUDA.
    pub kind: BackendKind,
    /// Its device.
    pub device: String,
    /// How it steps.
    pub method: String,
    /// Why `--backend auto` fell back to the CPU, if it did.
    pub fallback: Option<String>,
    /// The GPU's UUID, on a CUDA backend (ranks sharing a GPU cannot join NCCL).
    pub gpu: Option<String>,
}

/// Encodes a command or an answer (every float's exact bits).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    bincode::serialize(value)
        .map_err(|error| HeatlabError::Internal(format!("encoding a rank's message: {error}")))
}

/// Decodes what [`encode`] made.
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T> {
    bincode::deserialize(bytes)
        .map_err(|error| HeatlabError::Internal(format!("decoding a rank's message: {error}")))
}

/// `f32` values as bytes, and back.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// See [`f32_bytes`].
pub fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// What a rank holds: its link, and once opened its backend, and once a field came its band.
enum Holding {
    Unopened(Box<dyn RankLink>),
    Opened {
        link: Box<dyn RankLink>,
        backend: Box<dyn Backend>,
        device: Option<Box<dyn DeviceExchange>>,
    },
    Split(Box<BandField>),
    /// Only while one of the others is being made.
    Moving,
}

/// One rank's band of a split field and what it needs to carry out the commands.
pub struct RankBand {
    holding: Holding,
    /// This rank's own rows of the run's initial field, when kept ([`BandCommand::KeepInitial`]).
    pub(super) initial: Option<Grid>,
    /// Whether bands overlap their exchange (as opened).
    overlap: OverlapChoice,
}

impl RankBand {
    /// A rank with only its link so far.
    pub fn new(link: Box<dyn RankLink>) -> Self {
        Self {
            holding: Holding::Unopened(link),
            initial: None,
            overlap: OverlapChoice::Auto,
        }
    }

    /// The link to the other ranks.
    pub fn link(&mut self) -> Result<&mut dyn RankLink> {
        match &mut self.holding {
            Holding::Unopened(link) | Holding::Opened { link, .. } => Ok(link.as_mut()),
            Holding::Split(field) => Ok(field.link()),
            Holding::Moving => Err(moving()),
        }
    }

    /// This rank's backend, once opened.
    pub fn backend(&self) -> Option<&dyn Backend> {
        match &self.holding {
            Holding::Opened { backend, .. } => Some(backend.as_ref()),
            Holding::Split(field) => Some(field.backend()),
            Holding::Unopened(_) | Holding::Moving => None,
        }
    }

    /// This rank's backend (the whole field's on rank 0 while it generates one).
    pub fn backend_mut(&mut self) -> Result<&mut dyn Backend> {
        match &mut self.holding {
            Holding::Opened { backend, .. } => Ok(backend.as_mut()),
            Holding::Split(field) => Ok(field.backend_mut()),
            Holding::Unopened(_) => Err(HeatlabError::Internal(
                "a rank's backend is used before it was opened".into(),
            )),
            Holding::Moving => Err(moving()),
        }
    }

    /// Splits the field anew: this rank's `own` rows of `bands` (see [`RankBand::split`]).
    pub(super) fn split_own(&mut self, bands: Bands, own: &Grid) -> Result<()> {
        self.split(bands, own)
    }

    /// The band, once a field was split.
    pub fn field(&mut self) -> Result<&mut BandField> {
        match &mut self.holding {
            Holding::Split(field) => Ok(field.as_mut()),
            Holding::Unopened(_) | Holding::Opened { .. } => Err(HeatlabError::NoField),
            Holding::Moving => Err(moving()),
        }
    }

    /// Carries out `command` on this rank, `part` its own part of it; the answer for rank 0.
    pub fn execute(&mut self, command: &BandCommand, part: &[u8]) -> Result<Vec<u8>> {
        match command {
            BandCommand::Open(request) => self.open(*request),
            BandCommand::StartDeviceHalos => self.start_device_halos().map(|()| Vec::new()),
            BandCommand::Upload { size, depth, wraps } => {
                let ranks = self.link()?.ranks();
                let bands = Bands::with_wrap(*size, ranks, *depth, *wraps)?;
                let band = bands.band(self.link()?.rank());
                let own = Grid::from_vec(GridSize::new(band.rows, band.cols)?, f32_values(part))?;
                self.split(bands, &own).map(|()| Vec::new())
            }
            BandCommand::Reband { wraps } => {
                let field = self.field()?;
                let old = *field.bands();
                let bands = Bands::with_wrap(old.size(), old.ranks(), old.depth(), *wraps)?;
                let own = field.own_rows()?;
                self.split(bands, &own).map(|()| Vec::new())
            }
            BandCommand::Advance { steps, params } => {
                let field = self.field()?;
                field.advance(*steps, params)?;
                Ok(Vec::new())
            }
            BandCommand::Download => Ok(f32_bytes(self.field()?.own_rows()?.as_slice())),
            BandCommand::Laplacian { boundary } => self.own_laplacian_bytes(*boundary),
            BandCommand::Statistics => {
                let field = self.field()?;
                let span = field.own_span();
                encode(&field.backend_mut().statistics_of_rows(span)?)
            }
            BandCommand::SetProblem {
                tables,
                book_energy,
            } => {
                let field = self.field()?;
                let upload = ProblemUpload {
                    tables,
                    map: part,
                    book_energy: *book_energy,
                    booked_rows: Some(field.own_span()),
                };
                field.backend_mut().set_problem(Some(upload))?;
                Ok(Vec::new())
            }
            BandCommand::DropProblem => {
                self.backend_mut()?.set_problem(None)?;
                Ok(Vec::new())
            }
            BandCommand::Retable { tables } => {
                self.backend_mut()?.set_problem_tables(tables)?;
                Ok(Vec::new())
            }
            BandCommand::TakeEnergy => encode(&self.backend_mut()?.take_energy_exchange()?),
            BandCommand::StoredEnergyByRow => {
                let field = self.field()?;
                let span = field.own_span();
                let rows = field.backend_mut().stored_energy_by_row()?;
                encode(&rows[span.first..span.first + span.count].to_vec())
            }
            BandCommand::Gather { cells } => self.gather_owned(cells),
            BandCommand::Scatter { cells, values } => self.scatter_owned(cells, values),
            BandCommand::ReadNpy {
                path,
                size,
                depth,
                wraps,
            } => self.read_npy(path, *size, *depth, *wraps),
            BandCommand::WriteNpy {
                path,
                layer,
                boundary,
            } => self.write_npy(path, *layer, *boundary),
            BandCommand::RefreshHalos => self.field()?.refresh_halos().map(|()| Vec::new()),
            BandCommand::KeepInitial => self.keep_initial(),
            BandCommand::RestoreInitial => self.restore_initial(),
            BandCommand::DownloadInitial => self.initial_bytes(),
            BandCommand::ForgetInitial => Ok(self.forget_initial()),
            BandCommand::Finish => Ok(Vec::new()),
        }
    }

    /// This rank's own rows of the Laplacian under `boundary`.
    fn own_laplacian_bytes(&mut self, boundary: Boundary) -> Result<Vec<u8>> {
        Ok(f32_bytes(&self.field()?.own_laplacian(boundary)?))
    }

    /// The values of the cells of `cells` (the whole field's) this rank owns.
    fn gather_owned(&mut self, cells: &[u32]) -> Result<Vec<u8>> {
        let field = self.field()?;
        let owned = owned_cells(field, cells);
        let held: Vec<u32> = owned.iter().map(|&(_, held)| held).collect();
        Ok(f32_bytes(&field.backend_mut().gather(&held)?))
    }

    /// New values for the cells of `cells` (the whole field's) this rank owns.
    fn scatter_owned(&mut self, cells: &[u32], values: &[f32]) -> Result<Vec<u8>> {
        let field = self.field()?;
        let owned = owned_cells(field, cells);
        let held: Vec<u32> = owned.iter().map(|&(_, held)| held).collect();
        let mine: Vec<f32> = owned.iter().map(|&(at, _)| values[at]).collect();
        field.backend_mut().scatter(&held, &mine)?;
        field.halos_stale();
        Ok(Vec::new())
    }

    fn open(&mut self, request: OpenRequest) -> Result<Vec<u8>> {
        let Holding::Unopened(link) = std::mem::replace(&mut self.holding, Holding::Moving) else {
            return Err(HeatlabError::Internal(
                "a rank's backend was opened twice".into(),
            ));
        };
        self.overlap = request.overlap;
        let opened = create_backend(request.backend).and_then(|(mut backend, fallback)| {
            if let Some(cuda) = backend.cuda_mut() {
                cuda.set_kernel_choice(request.kernel)?;
            }
            Ok((backend, fallback))
        });
        let (backend, fallback) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                self.holding = Holding::Unopened(link);
                return Err(error);
            }
        };
        let answer = OpenedBackend {
            kind: backend.kind(),
            device: backend.device_name(),
            method: backend.step_method(),
            fallback: fallback.map(|f| f.to_string()),
            gpu: backend.cuda().and_then(|cuda| cuda.device().uuid_hex()),
        };
        self.holding = Holding::Opened {
            link,
            backend,
            device: None,
        };
        encode(&answer)
    }

    #[cfg(feature = "distributed")]
    fn start_device_halos(&mut self) -> Result<()> {
        let Holding::Opened {
            link,
            backend,
            device,
        } = &mut self.holding
        else {
            return Err(HeatlabError::Internal(
                "device halos are started before a field, once".into(),
            ));
        };
        *device = Some(Box::new(super::NcclHalos::start(
            link.as_mut(),
            backend.as_mut(),
        )?));
        Ok(())
    }

    #[cfg(not(feature = "distributed"))]
    fn start_device_halos(&mut self) -> Result<()> {
        Err(HeatlabError::Unsupported(
            "halos go GPU to GPU only in a build with the `distributed` feature".into(),
        ))
    }

    /// Splits the field anew: this rank's `own` rows of `bands`, its halos to be exchanged.
    fn split(&mut self, bands: Bands, own: &Grid) -> Result<()> {
        let (link, backend, device) = match std::mem::replace(&mut self.holding, Holding::Moving) {
            Holding::Opened {
                link,
                backend,
                device,
            } => (link, backend, device),
            Holding::Split(field) => {
                let parts = field.into_parts();
                (parts.link, parts.backend, parts.device_exchange)
            }
            Holding::Unopened(link) => {
                self.holding = Holding::Unopened(link);
                return Err(HeatlabError::Internal(
                    "a field came before the rank's backend was opened".into(),
                ));
            }
            Holding::Moving => return Err(moving()),
        };
        // A band that cannot be held (no room for it, say) gives its parts back: the rank
        // holds no field but still answers, and rank 0 says why.
        match BandField::try_from_own(bands, link, backend, own) {
            Ok(mut field) => {
                if let Some(device) = device {
                    field.exchange_on_device(device);
                }
                let on_device = field.exchanges_on_device();
                field.set_overlap(self.overlap.overlaps(on_device));
                self.holding = Holding::Split(Box::new(field));
                Ok(())
            }
            Err(unheld) => {
                let (error, parts) = *unheld;
                self.holding = Holding::Opened {
                    link: parts.link,
                    backend: parts.backend,
                    device,
                };
                Err(error)
            }
        }
    }
}

fn moving() -> HeatlabError {
    HeatlabError::Internal("a rank's band was used while it was being split".into())
}

/// Of `cells` (row-major, the whole field), those in this band's own rows: their place in
/// `cells` and their index among the band's held cells.
fn owned_cells(field: &BandField, cells: &[u32]) -> Vec<(usize, u32)> {
    let band = *field.band();
    let cols = band.cols;
    let first = band.first_row * cols;
    let end = (band.first_row + band.rows) * cols;
    let offset = band.own_offset() * cols;
    cells
        .iter()
        .enumerate()
        .filter(|&(_, &cell)| (first..end).contains(&(cell as usize)))
        // Below the field's cell count, which fits the u32 indices given.
        .map(|(at, &cell)| (at, (cell as usize - first + offset) as u32))
        .collect()
}

/// What a rank answers: its result, or why it failed.
pub type Answer = std::result::Result<Vec<u8>, String>;

/// Carries out the commands of rank 0 on this rank (not rank 0) until [`BandCommand::Finish`].
/// An error here is this rank's own: every rank's failures inside a command go back to rank 0,
/// which says them; an error returned means the ranks can no longer talk (the caller ends
/// every rank).
pub fn serve(link: Box<dyn RankLink>) -> Result<()> {
    let mut rank = RankBand::new(link);
    loop {
        let bytes = rank.link()?.broadcast_bytes(&[], 0)?;
        let command: BandCommand = decode(&bytes)?;
        let part = match command.has_parts() {
            true => rank.link()?.scatter_bytes(&[], 0)?,
            false => Vec::new(),
        };
        let result = rank.execute(&command, &part);
        if let (Err(error), true) = (&result, command.talks_among_ranks()) {
            // The other ranks may be waiting for this one inside the command.
            return Err(HeatlabError::OnRank {
                rank: rank.link()?.rank(),
                reason: error.to_string(),
            });
        }
        let answer: Answer = result.map_err(|error| error.to_string());
        rank.link()?.gather_bytes(&encode(&answer)?, 0)?;
        if command == BandCommand::Finish {
            return Ok(());
        }
    }
}

/// The energy the ranks booked, added in rank order.
pub fn energy_in_rank_order(answers: &[Vec<u8>]) -> Result<EnergyExchange> {
    let mut total = EnergyExchange::default();
    for answer in answers {
        total.add(&decode::<EnergyExchange>(answer)?);
    }
    Ok(total)
}
