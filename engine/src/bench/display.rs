//! `heatlab bench --display`: the app's display path, call by call. A frame of the diffusion
//! view draws two previews (the field, min-max; its Laplacian, 5-95 percentile) and, a few times
//! a second, the field's statistics. On the GPU each call is timed on its own (the GPU is idle
//! before it; host timer from its start until the GPU finished it, and events around it); on the
//! CPU the reduction is one host call. The host's part (range, colours) is the same on every
//! backend, so it can be measured without a GPU. Whole frames are timed the way the app draws
//! them, one after another with no waits between. The statistics are timed both ways, the field
//! downloaded and reduced on the host (the baseline) and reduced by the backend (what the app
//! does). Colouring is timed both into the preview's reused buffer (what the app does) and into
//! a new buffer per call (the baseline). Whole frames run the session's own frame pipeline
//! ([`crate::render::frame`]): the backend reduces both layers, the host colours
//! them (both at once, as in the app) into the buffers of the frame before.

use std::time::{Duration, Instant};

use crate::compute::preview::{map_through_table, rgba_through_table_into};
use crate::compute::{Backend, Layer, StepParams};
use crate::error::Result;
use crate::grid::{Grid, GridSize};
use crate::measure::MeanStd;
use crate::render::contour::Window;
use crate::render::flux::Conductivity;
use crate::render::frame::{
    colour_frame, preview_requests, reduce_frame_by, statistics_cost, FramePart, FramePath,
    FramePictures, SpareBuffers, ViewRequests,
};
use crate::render::overlay::{self, OverlayRequest};
use crate::render::Preview;
use crate::sim::{FieldStats, Simulation};

/// Preview values between heat-flux arrows in the timed overlays: the app's 24 points apart
/// with a preview the size of the picture.
const BENCH_ARROW_STEP: usize = 24;

/// One call of the display path, over the repeats.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DisplayRow {
    /// Field size.
    pub size: String,
    /// Preview size in pixels.
    pub preview: String,
    /// `field`, `laplacian` or `frame`.
    pub layer: String,
    /// What the call does.
    pub stage: String,
    /// Host microseconds, from the call's start until the GPU finished it.
    pub host_us: MeanStd,
    /// GPU microseconds between events around the call (None for host-only work).
    pub device_us: Option<MeanStd>,
    /// For a frame path beside its baseline: whether its pictures (pixels, values and ranges)
    /// equal the baseline's.
    pub same_pictures: Option<bool>,
}

fn elapsed_us(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e6
}

/// The views the app asks for by default, at `max_size`.
fn views(max_size: (usize, usize)) -> ViewRequests {
    let mut views = ViewRequests::default();
    views.field.max_size = max_size;
    views.laplacian.max_size = max_size;
    views
}

/// Times the display path on `backend` for fields of `sizes`, previews of at most `max_size`.
pub fn bench_display(
    backend: Box<dyn Backend>,
    sizes: &[GridSize],
    max_size: (usize, usize),
    repeats: usize,
) -> Result<Vec<DisplayRow>> {
    let Some((&first, rest)) = sizes.split_first() else {
        return Ok(Vec::new());
    };
    let params = StepParams {
        coeff: 0.2,
        ..StepParams::default()
    };
    let mut sim = Simulation::new(backend, super::bench_field(first)?, params)?;
    let mut rows = bench_display_size(&mut sim, max_size, repeats)?;
    for &size in rest {
        sim.replace_initial(super::bench_field(size)?)?;
        rows.extend(bench_display_size(&mut sim, max_size, repeats)?);
    }
    Ok(rows)
}

/// Rows of one field size: the field held by `sim`, stepped 100 steps first.
fn bench_display_size(
    sim: &mut Simulation,
    max_size: (usize, usize),
    repeats: usize,
) -> Result<Vec<DisplayRow>> {
    sim.advance(100)?;
    let size = sim.initial_size();
    let preview = format!("{}x{}", max_size.0, max_size.1);
    let mut rows = Vec::new();
    let mut push = |layer: &str, stage: &str, host: &[f64], device: Option<&[f64]>| {
        rows.push(DisplayRow {
            size: size.to_string(),
            preview: preview.clone(),
            layer: layer.to_string(),
            stage: stage.to_string(),
            host_us: MeanStd::of(host),
            device_us: device.map(MeanStd::of),
            same_pictures: None,
        });
    };
    let views = views(max_size);
    let (device_stages, host_stages) = time_calls(sim, views, repeats)?;
    for (layer, stage, hosts, devices) in &device_stages {
        push(layer.file_stem(), stage, hosts, Some(devices.as_slice()));
    }
    for layer in Layer::ALL {
        for stage in HOST_STAGES {
            let times: Vec<f64> = host_stages
                .iter()
                .filter(|(l, s, _)| *l == layer && *s == stage)
                .map(|(_, _, t)| *t)
                .collect();
            push(layer.file_stem(), stage, &times, None);
        }
    }
    let backend = sim.backend_mut();
    let mut download = Vec::new();
    let mut statistics = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        let grid = backend.download()?;
        download.push(elapsed_us(start));
        let start = Instant::now();
        std::hint::black_box(FieldStats::of(&grid));
        statistics.push(elapsed_us(start));
    }
    push("statistics", "download field", &download, None);
    push("statistics", "total, min, max (host)", &statistics, None);
    let mut on_device = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        std::hint::black_box(backend.statistics()?);
        on_device.push(elapsed_us(start));
    }
    push("statistics", "total, min, max (backend)", &on_device, None);
    let baseline = time_frames(FramePath::OneByOne, sim, views, repeats)?;
    let batched = time_frames(FramePath::Batched, sim, views, repeats)?;
    let same = same_pictures(sim, views)?;
    for (timed, path) in [(&baseline, "one by one"), (&batched, BATCHED_FRAME)] {
        push("frame", &format!("both previews, {path}"), &timed.0, None);
        push("frame", &format!("+ statistics, {path}"), &timed.1, None);
    }
    push("frame", "overlays (host)", &batched.2, None);
    for row in rows
        .iter_mut()
        .filter(|row| row.stage.ends_with(BATCHED_FRAME))
    {
        row.same_pictures = Some(same);
    }
    Ok(rows)
}

/// The frame rows of the app's path.
const BATCHED_FRAME: &str = "batched";

/// The host's stages of one layer's preview, in the order they run.
const HOST_STAGES: [&str; 4] = [
    "reduce (backend)",
    "range (host)",
    "colours (host)",
    "colours, new buffer (host)",
];

/// Times per call of a device stage: its layer, its name, host and GPU microseconds.
type DeviceStages = Vec<(Layer, &'static str, Vec<f64>, Vec<f64>)>;

/// Host microseconds of one call of a host stage, with its layer and name.
type HostStages = Vec<(Layer, &'static str, f64)>;

/// The display path call by call: each layer's reduction, range and colouring on the host, and
/// on CUDA each kernel and copy with events around it.
fn time_calls(
    sim: &mut Simulation,
    views: ViewRequests,
    repeats: usize,
) -> Result<(DeviceStages, HostStages)> {
    let specs = preview_requests(sim.params().boundary, views).map(|request| request.spec());
    let backend = sim.backend_mut();
    if let Some(cuda) = backend.cuda_mut() {
        cuda.profile_display(true)?;
    }
    let mut stages: DeviceStages = Vec::new();
    let mut host_stages: HostStages = Vec::new();
    // The app reduces and colours into the buffers of a preview it has shown before.
    let mut reused: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut reused_values: [Vec<f32>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..repeats {
        for ((spec, buffer), values) in specs.iter().zip(&mut reused).zip(&mut reused_values) {
            let start = Instant::now();
            let reduced = backend.reduce_preview_into(spec, std::mem::take(values))?;
            host_stages.push((spec.layer, HOST_STAGES[0], elapsed_us(start)));
            let start = Instant::now();
            let range = spec.range.resolve(&reduced.values);
            host_stages.push((spec.layer, HOST_STAGES[1], elapsed_us(start)));
            let start = Instant::now();
            rgba_through_table_into(reduced.values.as_slice(), spec.table, range, buffer);
            std::hint::black_box(&buffer);
            host_stages.push((spec.layer, HOST_STAGES[2], elapsed_us(start)));
            let start = Instant::now();
            std::hint::black_box(map_through_table(
                reduced.values.as_slice(),
                spec.table,
                range,
                4,
            ));
            host_stages.push((spec.layer, HOST_STAGES[3], elapsed_us(start)));
            *values = reduced.values.into_vec();
        }
        let Some(cuda) = backend.cuda_mut() else {
            continue;
        };
        for timing in cuda.take_display_profile() {
            let host = timing.host.as_secs_f64() * 1e6;
            let device = timing.device.as_secs_f64() * 1e6;
            match stages
                .iter_mut()
                .find(|(layer, stage, _, _)| *layer == timing.layer && *stage == timing.stage)
            {
                Some((_, _, hosts, devices)) => {
                    hosts.push(host);
                    devices.push(device);
                }
                None => stages.push((timing.layer, timing.stage, vec![host], vec![device])),
            }
        }
    }
    if let Some(cuda) = backend.cuda_mut() {
        cuda.profile_display(false)?;
    }
    Ok((stages, host_stages))
}

/// Whole frames through the session's frame pipeline, one after another with no waits between,
/// each with the statistics due: microseconds of both previews (the statistics' part taken
/// out), and of the whole frame; and of the overlays the app computes from each new field
/// picture (isotherms at automatic levels and heat-flux arrows every 24 values, over the whole
/// picture). The pictures go back to be coloured into again, as the app hands them back. A
/// frame first, untimed, allocates the path's buffers and compiles its kernels (the range
/// kernels, on the app's first frame).
fn time_frames(
    path: FramePath,
    sim: &mut Simulation,
    views: ViewRequests,
    repeats: usize,
) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let mut spares = SpareBuffers::default();
    let warm_up = frame_by(path, sim, views)?;
    spares.take_back(vec![warm_up.field, warm_up.laplacian]);
    let mut frames = Vec::new();
    let mut frames_with_statistics = Vec::new();
    let mut overlays = Vec::new();
    let size = sim.initial_size();
    let conductivity = Conductivity::uniform(1.0);
    for _ in 0..repeats {
        let mut split: Vec<(FramePart, Duration)> = Vec::new();
        let start = Instant::now();
        let reduced = reduce_frame_by(path, sim, views, true, &mut spares, &mut split)?;
        let pictures = colour_frame(reduced, &mut spares, &mut split);
        let whole = start.elapsed();
        frames_with_statistics.push(whole.as_secs_f64() * 1e6);
        frames.push(whole.saturating_sub(statistics_cost(&split)).as_secs_f64() * 1e6);
        let start = Instant::now();
        let request = OverlayRequest {
            window: Window::all(&pictures.field.values),
            levels: None,
            isotherms: true,
            arrow_step: Some(BENCH_ARROW_STEP),
            conductivity: &conductivity,
            spacing: 1.0,
        };
        std::hint::black_box(overlay::compute(&pictures.field, size, &request));
        overlays.push(elapsed_us(start));
        spares.take_back(vec![pictures.field, pictures.laplacian]);
    }
    Ok((frames, frames_with_statistics, overlays))
}

/// One frame of the held field by `path`, with the statistics.
fn frame_by(path: FramePath, sim: &mut Simulation, views: ViewRequests) -> Result<FramePictures> {
    let (mut spares, mut split) = (SpareBuffers::default(), Vec::new());
    let reduced = reduce_frame_by(path, sim, views, true, &mut spares, &mut split)?;
    Ok(colour_frame(reduced, &mut spares, &mut split))
}

/// Whether the batched frame's pictures equal the baseline's: pixels, values (bit for bit)
/// and colour ranges.
fn same_pictures(sim: &mut Simulation, views: ViewRequests) -> Result<bool> {
    let baseline = frame_by(FramePath::OneByOne, sim, views)?;
    let batched = frame_by(FramePath::Batched, sim, views)?;
    Ok(same_picture(&baseline.field, &batched.field)
        && same_picture(&baseline.laplacian, &batched.laplacian))
}

/// Whether two pictures are the same: pixels, range, and values bit for bit.
pub fn same_picture(a: &Preview, b: &Preview) -> bool {
    let bits = |grid: &Grid| -> Vec<u32> { grid.as_slice().iter().map(|v| v.to_bits()).collect() };
    a.rgba == b.rgba
        && a.range == b.range
        && a.factor == b.factor
        && bits(&a.values) == bits(&b.values)
}

/// The rows as a fixed-width table.
pub fn format_display(rows: &[DisplayRow]) -> String {
    let mut out = format!(
        "{:<12} {:<9} {:<11} {:<36} {:>18} {:>18}\n",
        "size", "preview", "layer", "call", "host us", "GPU us"
    );
    for row in rows {
        let same = match row.same_pictures {
            Some(true) => "  same pictures as one by one",
            Some(false) => "  PICTURES DIFFER from one by one",
            None => "",
        };
        out.push_str(&format!(
            "{:<12} {:<9} {:<11} {:<36} {:>18} {:>18}{same}\n",
            row.size,
            row.preview,
            row.layer,
            row.stage,
            row.host_us.to_string(),
            row.device_us
                .as_ref()
                .map_or_else(|| "-".to_string(), ToString::to_string),
        ));
    }
    out
}
