//! A field split over ranks, seen from rank 0 as one [`Backend`]: the simulation, the run loop,
//! heat problems, thermostats, the energy balance and every output run on rank 0 exactly as on
//! one rank, while each command goes to every rank's band ([`super::rank_band`]).
//!
//! Every answer is the single-rank backend's, bit for bit: the bands step their own rows as
//! the whole field steps them ([`super::band_field`]); the field, its Laplacian and gathered
//! cells are each rank's own rows joined in order; the stored energy is every row's sum added
//! in row order, as one rank adds them. The energy booked and the field's total are added in
//! rank order: the same on every run, within rounding of one rank's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::compute::brush::check_cells;
use crate::compute::{
    Backend, BackendKind, CpuBackend, DeviceFieldUnavailable, FieldStats, Layer, ProblemUpload,
    StepParams,
};
use crate::error::{HeatlabError, Result};
use crate::field::JaggedParams;
use crate::grid::{Boundary, Grid, GridSize};
use crate::problem::energy::total_of_rows;
use crate::problem::{EnergyExchange, StepTables};
use crate::solve::{ProblemSolver, SolveOptions, SolveReport, SolveRequest};

use super::band_field::rows_of;
use super::bands::Bands;
use super::link::RankLink;
use super::rank_band::{
    decode, encode, energy_in_rank_order, f32_bytes, f32_values, Answer, BandCommand, OpenRequest,
    OpenedBackend, RankBand,
};

/// Halo rows (steps between exchanges) on the CPU unless asked otherwise.
pub const CPU_HALO_DEPTH: usize = 4;
/// Halo rows on a GPU: an exchange every 64 steps costs little beside 64 steps of a band.
pub const CUDA_HALO_DEPTH: usize = 64;

/// How a split backend is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitOptions {
    /// Each rank's backend and kernel.
    pub open: OpenRequest,
    /// The halo depth asked for (`None`: the deepest up to the backend's default that the
    /// thinnest band allows).
    pub halo_depth: Option<usize>,
    /// Halos through the host even between GPUs.
    pub host_halos: bool,
}

/// A field split over the ranks of `link`, driven from rank 0.
pub struct SplitBackend {
    rank: RankBand,
    ranks: usize,
    opened: Vec<OpenedBackend>,
    options: SplitOptions,
    device_halos: bool,
    /// Two ranks on one GPU, if any (NCCL refuses them: halos then go through the host).
    sharing_gpus: Option<(usize, usize)>,
    /// The field's size, once one was uploaded.
    size: Option<GridSize>,
    /// The halo depth of the split.
    depth: usize,
    /// Whether the bands wrap around now.
    wraps: bool,
    /// Whether the held heat problem's rows wrap (`None`: no problem held).
    problem_wraps: Option<bool>,
    /// Set when a command failed while the ranks talked among themselves: the others may be
    /// waiting for this rank, and only ending every rank ends the run.
    stranded: Arc<AtomicBool>,
    /// The ranks were told to end.
    finished: bool,
}

impl SplitBackend {
    /// Opens every rank's backend (rank 0 calls it; the others [`super::rank_band::serve`]),
    /// and joins their GPUs for halos when every rank has one.
    ///
    /// `stranded` is set when a command fails while the ranks talk among themselves (this
    /// opening's included): the others may be waiting for this rank, and only ending every
    /// rank ends the run.
    pub fn open(
        link: Box<dyn RankLink>,
        options: SplitOptions,
        stranded: Arc<AtomicBool>,
    ) -> Result<Self> {
        if link.rank() != 0 {
            return Err(HeatlabError::Internal(
                "a split field is driven from rank 0".into(),
            ));
        }
        let ranks = link.ranks();
        let mut split = Self {
            rank: RankBand::new(link),
            ranks,
            opened: Vec::new(),
            options,
            device_halos: false,
            sharing_gpus: None,
            size: None,
            depth: options.halo_depth.unwrap_or(CPU_HALO_DEPTH),
            wraps: false,
            problem_wraps: None,
            stranded,
            finished: false,
        };
        // Which rank cannot open its backend (no GPU there) is said, rank 0 too.
        let answers = split
            .command(&BandCommand::Open(options.open), None)
            .map_err(|error| match error {
                HeatlabError::OnRank { .. } => error,
                error => HeatlabError::OnRank {
                    rank: 0,
                    reason: error.to_string(),
                },
            })?;
        split.opened = answers
            .iter()
            .map(|answer| decode(answer))
            .collect::<Result<_>>()?;
        let all_cuda = split.opened.iter().all(|o| o.kind == BackendKind::Cuda);
        let gpus: Vec<Option<&str>> = split.opened.iter().map(|o| o.gpu.as_deref()).collect();
        split.sharing_gpus = ranks_sharing_a_gpu(&gpus);
        if all_cuda && !options.host_halos && ranks > 1 && split.sharing_gpus.is_none() {
            split.command(&BandCommand::StartDeviceHalos, None)?;
            split.device_halos = true;
        }
        Ok(split)
    }

    /// Why rank 0's `--backend auto` fell back to the CPU, if it did.
    pub fn fallback(&self) -> Option<&str> {
        self.opened.first().and_then(|o| o.fallback.as_deref())
    }

    /// Sends `command` (with each rank's part from `parts`) to every rank, carries it out on
    /// rank 0's band and returns every rank's answer in rank order.
    fn command(
        &mut self,
        command: &BandCommand,
        parts: Option<Vec<Vec<u8>>>,
    ) -> Result<Vec<Vec<u8>>> {
        if self.stranded.load(Ordering::SeqCst) || self.finished {
            return Err(HeatlabError::Internal(
                "the ranks are no longer listening (an earlier failure, or the run's end)".into(),
            ));
        }
        let link = self.rank.link()?;
        link.broadcast_bytes(&encode(command)?, 0)?;
        let part = match parts {
            Some(parts) => link.scatter_bytes(&parts, 0)?,
            None => Vec::new(),
        };
        let result = self.rank.execute(command, &part);
        if let (Err(_), true) = (&result, command.talks_among_ranks()) {
            // The others may wait for rank 0 inside the command: no answer can be gathered.
            self.stranded.store(true, Ordering::SeqCst);
            return result.map(|_| Vec::new());
        }
        let own = match &result {
            Ok(_) => Ok(Vec::new()),
            Err(error) => Err(error.to_string()),
        };
        let all = self
            .rank
            .link()?
            .gather_bytes(&encode::<Answer>(&own)?, 0)?
            .ok_or_else(|| HeatlabError::Internal("rank 0 gathered nothing".into()))?;
        // Rank 0's own failure, as it is (after every answer came, so the ranks stay in step).
        let result = result?;
        let mut answers = Vec::with_capacity(all.len());
        for (rank, bytes) in all.iter().enumerate() {
            match decode::<Answer>(bytes)? {
                Ok(_) if rank == 0 => answers.push(result.clone()),
                Ok(answer) => answers.push(answer),
                Err(reason) => return Err(HeatlabError::OnRank { rank, reason }),
            }
        }
        Ok(answers)
    }

    /// The halo depth for a field of `size`.
    fn depth_for(&self, size: GridSize) -> usize {
        if let Some(asked) = self.options.halo_depth {
            return asked;
        }
        let any_cpu = self.opened.iter().any(|o| o.kind == BackendKind::Cpu);
        let wanted = if any_cpu {
            CPU_HALO_DEPTH
        } else {
            CUDA_HALO_DEPTH
        };
        Bands::deepest_halo(size, self.ranks, wanted)
    }

    fn size(&self) -> Result<GridSize> {
        self.size.ok_or(HeatlabError::NoField)
    }

    fn bands(&self) -> Result<Bands> {
        Bands::with_wrap(self.size()?, self.ranks, self.depth, self.wraps)
    }

    /// Splits the field again with rows wrapping or not (its own rows stay where they are).
    fn wrap(&mut self, wraps: bool) -> Result<()> {
        if self.size.is_some() && wraps != self.wraps {
            self.command(&BandCommand::Reband { wraps }, None)?;
        }
        self.wraps = wraps;
        Ok(())
    }

    /// Every rank's own rows of `command`'s answers (`f32`), joined into the whole field.
    fn joined(&mut self, command: &BandCommand) -> Result<Grid> {
        let size = self.size()?;
        let mut values = Vec::with_capacity(size.cells());
        for answer in self.command(command, None)? {
            values.extend(f32_values(&answer));
        }
        Grid::from_vec(size, values)
    }

    /// Ends the ranks' service (the others return from `serve`), unless they are stranded
    /// (done when the backend drops).
    fn finish_ranks(&mut self) -> Result<()> {
        if self.stranded.load(Ordering::SeqCst) || self.finished {
            return Ok(());
        }
        let finished = self.command(&BandCommand::Finish, None).map(|_| ());
        // Nothing more may be sent, whatever the answer.
        self.finished = true;
        finished
    }

    fn devices(&self) -> String {
        let mut names: Vec<(String, usize)> = Vec::new();
        for opened in &self.opened {
            match names.iter_mut().find(|(name, _)| *name == opened.device) {
                Some((_, count)) => *count += 1,
                None => names.push((opened.device.clone(), 1)),
            }
        }
        names
            .iter()
            .map(|(name, count)| match count {
                1 => name.clone(),
                n => format!("{n} x {name}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Drop for SplitBackend {
    fn drop(&mut self) {
        if let Err(error) = self.finish_ranks() {
            log::warn!("ending the other ranks: {error}");
        }
    }
}

/// The first two ranks on the same GPU, of the ranks' GPUs in rank order (`None`: a rank
/// without one), if any: NCCL refuses them, so their halos go through the host.
pub fn ranks_sharing_a_gpu<T: PartialEq>(gpus: &[Option<T>]) -> Option<(usize, usize)> {
    gpus.iter().enumerate().find_map(|(b, later)| {
        let gpu = later.as_ref()?;
        let a = gpus[..b]
            .iter()
            .position(|earlier| earlier.as_ref() == Some(gpu))?;
        Some((a, b))
    })
}

/// `path` as every rank finds it wherever it runs (ranks started elsewhere than rank 0's
/// folder share its file system, not its working folder).
fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| HeatlabError::io("finding", path, e))
}

/// Ends the ranks' service from rank 0 when no backend was opened (a refusal before it).
pub fn finish_unopened(link: Box<dyn RankLink>) -> Result<()> {
    let mut rank = RankBand::new(link);
    let link = rank.link()?;
    link.broadcast_bytes(&encode(&BandCommand::Finish)?, 0)?;
    link.gather_bytes(&encode::<Answer>(&Ok(Vec::new()))?, 0)?;
    Ok(())
}

impl Backend for SplitBackend {
    fn kind(&self) -> BackendKind {
        self.opened.first().map_or(BackendKind::Cpu, |o| o.kind)
    }

    fn device_name(&self) -> String {
        format!("{} ranks: {}", self.ranks, self.devices())
    }

    fn step_method(&self) -> String {
        let method = self
            .rank
            .backend()
            .map_or_else(|| "-".to_string(), |backend| backend.step_method());
        let halos = match (self.device_halos, self.sharing_gpus) {
            (true, _) => "GPU to GPU".to_string(),
            (false, None) => "through the host".to_string(),
            (false, Some((a, b))) => {
                format!("through the host: ranks {a} and {b} share a GPU")
            }
        };
        let depth = match self.depth {
            1 => "1 row".to_string(),
            depth => format!("{depth} rows"),
        };
        // Rounds overlap their exchange where every rank steps the plate on a GPU.
        let all_cuda = self.opened.iter().all(|o| o.kind == BackendKind::Cuda);
        let overlaps = self.options.open.overlap.overlaps(self.device_halos);
        let overlapped = match overlaps && all_cuda && self.problem_wraps.is_none() {
            true => ", overlapped with the interior",
            false => "",
        };
        format!(
            "{method}, split over {} ranks (halos {depth} deep, {halos}{overlapped})",
            self.ranks
        )
    }

    fn upload(&mut self, field: &Grid) -> Result<()> {
        let size = field.size();
        let depth = self.depth_for(size);
        let wraps = self.problem_wraps.unwrap_or(self.wraps);
        let bands = Bands::with_wrap(size, self.ranks, depth, wraps)?;
        let parts = bands
            .all()
            .map(|band| f32_bytes(&rows_of(field.as_slice(), size, &band, false)))
            .collect();
        self.command(&BandCommand::Upload { size, depth, wraps }, Some(parts))?;
        self.size = Some(size);
        self.depth = depth;
        self.wraps = wraps;
        Ok(())
    }

    fn advance(&mut self, steps: u64, params: &StepParams) -> Result<Duration> {
        let wraps = self
            .problem_wraps
            .unwrap_or(params.boundary == Boundary::Periodic);
        self.wrap(wraps)?;
        let started = Instant::now();
        self.command(
            &BandCommand::Advance {
                steps,
                params: *params,
            },
            None,
        )?;
        Ok(started.elapsed())
    }

    fn download(&mut self) -> Result<Grid> {
        self.joined(&BandCommand::Download)
    }

    fn laplacian(&mut self, boundary: Boundary) -> Result<Grid> {
        if self.wraps == (boundary == Boundary::Periodic) {
            return self.joined(&BandCommand::Laplacian { boundary });
        }
        // The bands wrap as the held problem does, not as this boundary: the whole field's
        // Laplacian on the CPU (the reference every backend equals).
        let whole = self.download()?;
        let mut cpu = CpuBackend::new();
        cpu.upload(&whole)?;
        cpu.laplacian(boundary)
    }

    fn generate_jagged(
        &mut self,
        params: &JaggedParams,
    ) -> std::result::Result<Duration, DeviceFieldUnavailable> {
        let failed = |error: HeatlabError| DeviceFieldUnavailable::Failed(error.to_string());
        // Rank 0's device makes the whole field; the ranks then take their rows of it.
        let backend = self.rank.backend_mut().map_err(failed)?;
        let made = backend.generate_jagged(params)?;
        let whole = backend.download().map_err(failed)?;
        self.upload(&whole).map_err(failed)?;
        Ok(made)
    }

    fn keep_initial(&mut self) -> Result<bool> {
        self.command(&BandCommand::KeepInitial, None)?;
        Ok(true)
    }

    fn restore_initial(&mut self) -> Result<()> {
        self.command(&BandCommand::RestoreInitial, None).map(|_| ())
    }

    fn download_initial(&mut self) -> Result<Grid> {
        self.joined(&BandCommand::DownloadInitial)
    }

    fn forget_initial(&mut self) {
        if self.size.is_none() || self.finished {
            return;
        }
        if let Err(error) = self.command(&BandCommand::ForgetInitial, None) {
            log::debug!("the ranks could not let their initial rows go: {error}");
        }
    }

    fn write_npy_where_held(
        &mut self,
        layer: Layer,
        boundary: Boundary,
        path: &Path,
    ) -> Result<bool> {
        if layer == Layer::Laplacian {
            let wraps = boundary == Boundary::Periodic;
            match self.problem_wraps {
                // The bands wrap as the held problem does, not as this boundary: the caller
                // writes the whole field's Laplacian.
                Some(problem_wraps) if problem_wraps != wraps => return Ok(false),
                Some(_) => {}
                // The plate's bands wrap as its boundary does (a field just read wraps only
                // once it steps).
                None => self.wrap(wraps)?,
            }
            // The halos are exchanged in a command of their own: a rank failing in the
            // exchange strands the others, one failing to write does not.
            self.command(&BandCommand::RefreshHalos, None)?;
        }
        let command = BandCommand::WriteNpy {
            path: absolute(path)?,
            layer,
            boundary,
        };
        self.command(&command, None)?;
        Ok(true)
    }

    fn load_npy_where_held(&mut self, path: &Path, size: GridSize) -> Result<bool> {
        let depth = self.depth_for(size);
        let wraps = self.problem_wraps.unwrap_or(self.wraps);
        // A band thinner than its halo is refused here, before any rank reads.
        Bands::with_wrap(size, self.ranks, depth, wraps)?;
        let command = BandCommand::ReadNpy {
            path: absolute(path)?,
            size,
            depth,
            wraps,
        };
        self.command(&command, None)?;
        self.size = Some(size);
        self.depth = depth;
        self.wraps = wraps;
        Ok(true)
    }

    fn statistics(&mut self) -> Result<FieldStats> {
        let mut total = FieldStats {
            total: 0.0,
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
        };
        for answer in self.command(&BandCommand::Statistics, None)? {
            let band: FieldStats = decode(&answer)?;
            total.total += band.total;
            total.min = total.min.min(band.min);
            total.max = total.max.max(band.max);
        }
        Ok(total)
    }

    fn gather(&mut self, cells: &[u32]) -> Result<Vec<f32>> {
        let size = self.size()?;
        check_cells(size, cells, None)?;
        let bands = self.bands()?;
        let answers = self.command(
            &BandCommand::Gather {
                cells: cells.to_vec(),
            },
            None,
        )?;
        let mut from_rank: Vec<std::vec::IntoIter<f32>> = answers
            .iter()
            .map(|answer| f32_values(answer).into_iter())
            .collect();
        let owner = |cell: u32| {
            let row = cell as usize / size.cols.max(1);
            bands
                .all()
                .position(|band| (band.first_row..band.first_row + band.rows).contains(&row))
        };
        cells
            .iter()
            .map(|&cell| {
                owner(cell)
                    .and_then(|rank| from_rank[rank].next())
                    .ok_or_else(|| HeatlabError::Internal(format!("no rank owns cell {cell}")))
            })
            .collect()
    }

    fn scatter(&mut self, cells: &[u32], values: &[f32]) -> Result<()> {
        check_cells(self.size()?, cells, Some(values))?;
        let command = BandCommand::Scatter {
            cells: cells.to_vec(),
            values: values.to_vec(),
        };
        self.command(&command, None).map(|_| ())
    }

    fn set_problem(&mut self, problem: Option<ProblemUpload<'_>>) -> Result<()> {
        let Some(upload) = problem else {
            self.command(&BandCommand::DropProblem, None)?;
            self.problem_wraps = None;
            return Ok(());
        };
        upload.check(self.size()?.cells())?;
        if upload.booked_rows.is_some() {
            return Err(HeatlabError::Internal(
                "a split field books every row of its problem".into(),
            ));
        }
        let wraps = upload.tables.periodic_rows;
        self.wrap(wraps)?;
        let bands = self.bands()?;
        let parts = bands
            .all()
            .map(|band| rows_of(upload.map, bands.size(), &band, true))
            .collect();
        let command = BandCommand::SetProblem {
            tables: upload.tables.clone(),
            book_energy: upload.book_energy,
        };
        self.command(&command, Some(parts))?;
        self.problem_wraps = Some(wraps);
        Ok(())
    }

    fn set_problem_tables(&mut self, tables: &StepTables) -> Result<()> {
        let command = BandCommand::Retable {
            tables: tables.clone(),
        };
        self.command(&command, None).map(|_| ())
    }

    fn take_energy_exchange(&mut self) -> Result<EnergyExchange> {
        energy_in_rank_order(&self.command(&BandCommand::TakeEnergy, None)?)
    }

    fn stored_energy_by_row(&mut self) -> Result<Vec<f64>> {
        let mut rows = Vec::new();
        for answer in self.command(&BandCommand::StoredEnergyByRow, None)? {
            rows.extend(decode::<Vec<f64>>(&answer)?);
        }
        Ok(rows)
    }

    fn stored_energy(&mut self) -> Result<f64> {
        Ok(total_of_rows(&self.stored_energy_by_row()?))
    }

    fn solve_problem(
        &mut self,
        solver: &Arc<ProblemSolver>,
        request: SolveRequest,
        options: &SolveOptions,
    ) -> Result<SolveReport> {
        let _ = (solver, request, options);
        Err(HeatlabError::Unsupported(
            "the steady state and implicit steps do not run across ranks yet: run them on one \
             rank"
                .into(),
        ))
    }
}
