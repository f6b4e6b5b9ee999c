//! `heatlab bench --display`: the app's display path, call by call. A frame of the diffusion
//! view draws two previews (the field, min-max; its Laplacian, 5-95 percentile) and, a few times
//! a second, the field's statistics. On the GPU each call is timed on its own (the GPU is idle
//! before it; host timer from its start until the GPU finished it, and events around it); on the
//! CPU the reduction is one host call. The host's part (range, colours) is the same on every
//! backend, so it can be measured without a GPU. Whole frames are timed the way the app draws
//! them, one after another with no waits between. The statistics are timed both ways, the field
//! downloaded and reduced on the host (the baseline) and reduced by the backend (what the app
//! does). Colouring is timed both into the preview's reused buffer (what the app does) and into
//! a new buffer per call (the baseline).

use std::time::Instant;

use crate::compute::preview::{map_through_table, rgba_through_table_into};
use crate::compute::{Backend, Layer, PreviewSpec, StepParams};
use crate::error::Result;
use crate::grid::{GridSize, RangeMode};
use crate::measure::MeanStd;
use crate::render::Colormap;
use crate::sim::FieldStats;

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
}

fn elapsed_us(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e6
}

/// The previews the app asks for by default at `max_size`.
fn specs(max_size: (usize, usize)) -> [PreviewSpec<'static>; 2] {
    let boundary = StepParams::default().boundary;
    [
        PreviewSpec {
            layer: Layer::Field,
            boundary,
            max_size,
            table: Colormap::Viridis.table(),
            range: RangeMode::MinMax,
        },
        PreviewSpec {
            layer: Layer::Laplacian,
            boundary,
            max_size,
            table: Colormap::Viridis.table(),
            range: RangeMode::LAPLACIAN_DEFAULT,
        },
    ]
}

/// Times the display path on `backend` for a field of `size`, previews of at most `max_size`.
pub fn bench_display(
    backend: &mut dyn Backend,
    size: GridSize,
    max_size: (usize, usize),
    repeats: usize,
) -> Result<Vec<DisplayRow>> {
    let field = super::bench_field(size)?;
    backend.upload(&field)?;
    let params = StepParams {
        coeff: 0.2,
        ..StepParams::default()
    };
    backend.advance(100, &params)?;
    let specs = specs(max_size);
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
        });
    };

    // Call by call.
    if let Some(cuda) = backend.cuda_mut() {
        cuda.profile_display(true)?;
    }
    let mut stages: Vec<(Layer, &'static str, Vec<f64>, Vec<f64>)> = Vec::new();
    let mut host_stages: Vec<(Layer, &'static str, f64)> = Vec::new();
    // The app reduces and colours into the buffers of a preview it has shown before.
    let mut reused: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut reused_values: [Vec<f32>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..repeats {
        for ((spec, buffer), values) in specs.iter().zip(&mut reused).zip(&mut reused_values) {
            let start = Instant::now();
            let reduced = backend.reduce_preview_into(spec, std::mem::take(values))?;
            host_stages.push((spec.layer, "reduce (backend)", elapsed_us(start)));
            let start = Instant::now();
            let range = spec.range.resolve(&reduced.values);
            host_stages.push((spec.layer, "range (host)", elapsed_us(start)));
            let start = Instant::now();
            rgba_through_table_into(reduced.values.as_slice(), spec.table, range, buffer);
            std::hint::black_box(&buffer);
            host_stages.push((spec.layer, "colours (host)", elapsed_us(start)));
            let start = Instant::now();
            std::hint::black_box(map_through_table(
                reduced.values.as_slice(),
                spec.table,
                range,
                4,
            ));
            host_stages.push((spec.layer, "colours, new buffer (host)", elapsed_us(start)));
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
    for (layer, stage, hosts, devices) in &stages {
        push(layer.file_stem(), stage, hosts, Some(devices.as_slice()));
    }
    for layer in Layer::ALL {
        for stage in [
            "reduce (backend)",
            "range (host)",
            "colours (host)",
            "colours, new buffer (host)",
        ] {
            let times: Vec<f64> = host_stages
                .iter()
                .filter(|(l, s, _)| *l == layer && *s == stage)
                .map(|(_, _, t)| *t)
                .collect();
            push(layer.file_stem(), stage, &times, None);
        }
    }
    let mut download = Vec::new();
    let mut statistics = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        let grid = backend.download()?;
        download.push(start.elapsed().as_secs_f64() * 1e6);
        let start = Instant::now();
        std::hint::black_box(FieldStats::of(&grid));
        statistics.push(start.elapsed().as_secs_f64() * 1e6);
    }
    push("statistics", "download field", &download, None);
    push("statistics", "total, min, max (host)", &statistics, None);
    let mut on_device = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        std::hint::black_box(backend.statistics()?);
        on_device.push(start.elapsed().as_secs_f64() * 1e6);
    }
    push("statistics", "total, min, max (backend)", &on_device, None);

    // Whole frames, as the app draws them: two previews (reduced on the GPU, coloured on the
    // host, both into the buffers of the previous frame's), and the statistics when due.
    let mut frames = Vec::new();
    let mut frames_with_statistics = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        for ((spec, buffer), values) in specs.iter().zip(&mut reused).zip(&mut reused_values) {
            let reduced = backend.reduce_preview_into(spec, std::mem::take(values))?;
            let range = spec.range.resolve(&reduced.values);
            let picture = reduced.colour_over(spec.table, range, std::mem::take(buffer));
            *buffer = picture.rgba;
            *values = picture.values.into_vec();
        }
        frames.push(start.elapsed().as_secs_f64() * 1e6);
        backend.statistics()?;
        frames_with_statistics.push(start.elapsed().as_secs_f64() * 1e6);
    }
    push("frame", "both previews", &frames, None);
    push(
        "frame",
        "both previews + statistics",
        &frames_with_statistics,
        None,
    );
    Ok(rows)
}

/// The rows as a fixed-width table.
pub fn format_display(rows: &[DisplayRow]) -> String {
    let mut out = format!(
        "{:<12} {:<9} {:<11} {:<26} {:>18} {:>18}\n",
        "size", "preview", "layer", "call", "host us", "GPU us"
    );
    for row in rows {
        out.push_str(&format!(
            "{:<12} {:<9} {:<11} {:<26} {:>18} {:>18}\n",
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
