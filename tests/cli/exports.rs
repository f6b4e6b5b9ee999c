//! What `heatlab run` exports of a heat problem as a user reads it: colorbars in °C (and K for
//! the Laplacian), the video's counter in simulated time, and a small field's PNG enlarged to
//! whole pixels a cell beside its exact `.npy`; the tutorial's plate keeps its unitless labels.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use common::cli::{heatlab_in as heatlab, names_in, stderr_of, succeeded};
use heatlab_engine::export::colorbar::with_caption;
use heatlab_engine::export::frame::png_pixels_per_cell;
use heatlab_engine::export::{read_npy, write_png, PngStyle};
use heatlab_engine::grid::RangeMode;
use heatlab_engine::render::Colormap;
use std::path::Path;

/// The last `KIND_*.png` a run wrote into `out`, and its step's name.
fn last_frame(out: &Path, kind: &str) -> String {
    let mut names: Vec<String> = names_in(out)
        .into_iter()
        .filter(|n| n.starts_with(&format!("{kind}_")) && n.ends_with(".png"))
        .collect();
    names.sort();
    names
        .pop()
        .unwrap_or_else(|| panic!("no {kind} frame in {out:?}"))
}

/// The PNG the engine draws of `npy` (a frame's array) with `unit` on its colorbar.
fn drawn(npy: &Path, colormap: Colormap, mode: RangeMode, unit: Option<&'static str>) -> Vec<u8> {
    let grid = read_npy(&std::fs::read(npy).unwrap()).unwrap();
    let style = PngStyle {
        unit,
        ..PngStyle::resolved(colormap, mode, &grid, true)
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("expected.png");
    write_png(&path, &grid, &style).unwrap();
    image::open(&path).unwrap().to_rgb8().into_raw()
}

#[test]
fn a_heat_problems_pngs_are_enlarged_with_colorbars_in_its_units() {
    let dir = tempfile::tempdir().unwrap();
    let output = heatlab(
        dir.path(),
        &[
            "run",
            "--scenario",
            "fin",
            "--duration",
            "0.5",
            "--backend",
            "cpu",
            "--colorbar",
            "--npy",
            "--out",
            "fin",
        ],
    );
    succeeded(&output);
    let out = dir.path().join("fin");
    let field = last_frame(&out, "field");
    let image = image::open(out.join(&field)).unwrap().to_rgb8();
    // 2x120 cells at 5 pixels a cell, a colorbar strip on the right.
    assert_eq!(
        png_pixels_per_cell(heatlab_engine::grid::GridSize { rows: 2, cols: 120 }),
        5
    );
    assert!(image.width() > 600, "{}", image.width());
    let npy = out.join(field.replace(".png", ".npy"));
    let grid = read_npy(&std::fs::read(&npy).unwrap()).unwrap();
    assert_eq!(
        (grid.rows(), grid.cols()),
        (2, 120),
        "the array holds the cells"
    );
    let celsius = drawn(&npy, Colormap::Viridis, RangeMode::MinMax, Some("°C"));
    let bare = drawn(&npy, Colormap::Viridis, RangeMode::MinMax, None);
    assert_ne!(celsius, bare);
    assert!(
        image.as_raw() == &celsius,
        "the field's colorbar is labelled in °C"
    );
    let laplacian = last_frame(&out, "laplacian");
    let image = image::open(out.join(&laplacian)).unwrap().to_rgb8();
    let npy = out.join(laplacian.replace(".png", ".npy"));
    let kelvin = drawn(
        &npy,
        Colormap::Inferno,
        RangeMode::LAPLACIAN_DEFAULT,
        Some("K"),
    );
    assert!(
        image.as_raw() == &kelvin,
        "the Laplacian's colorbar is labelled in K"
    );
}

#[test]
fn the_plates_pngs_keep_unitless_colorbars() {
    let dir = tempfile::tempdir().unwrap();
    let output = heatlab(
        dir.path(),
        &[
            "run",
            "--size",
            "64x40",
            "--steps",
            "5",
            "--backend",
            "cpu",
            "--colorbar",
            "--npy",
            "--out",
            "plate",
        ],
    );
    succeeded(&output);
    let out = dir.path().join("plate");
    let image = image::open(out.join("field_000005.png")).unwrap().to_rgb8();
    let bare = drawn(
        &out.join("field_000005.npy"),
        Colormap::Viridis,
        RangeMode::MinMax,
        None,
    );
    assert!(image.as_raw() == &bare);
    // 64 rows at 8 pixels a cell.
    assert_eq!(image.height(), 512);
}

/// Dark grey pixels (text) in rows `from..` of an RGB image `width` wide.
fn text_pixels(rgb: &[u8], width: usize, from: usize) -> usize {
    rgb.chunks_exact(3)
        .skip(from * width)
        .filter(|p| p[0] < 128 && p[0].abs_diff(p[1]) < 8 && p[1].abs_diff(p[2]) < 8)
        .count()
}

#[test]
fn a_heat_problems_video_counts_simulated_time() {
    let dir = tempfile::tempdir().unwrap();
    let output = heatlab(
        dir.path(),
        &[
            "run",
            "--scenario",
            "fin",
            "--duration",
            "0.5",
            "--backend",
            "cpu",
            "--out",
            "fin",
            "--video",
            "fin.gif",
            "--video-step-counter",
        ],
    );
    succeeded(&output);
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let file = std::fs::File::open(dir.path().join("fin.gif")).unwrap();
    let mut decoder = options.read_info(file).unwrap();
    let (width, height) = (usize::from(decoder.width()), usize::from(decoder.height()));
    let frame = decoder.read_next_frame().unwrap().unwrap();
    let rgb: Vec<u8> = frame
        .buffer
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    // The caption of the first frame as the engine writes it, with and without the time.
    let caption = |text: &str| {
        let (pixels, w, h) = with_caption(&vec![255; width * 3], width, 1, text).unwrap();
        (text_pixels(&pixels, w, 1), h - 1)
    };
    let (timed, strip) = caption("t = 0 s · step 0");
    let (untimed, _) = caption("step 0");
    let seen = text_pixels(&rgb, width, height - strip);
    assert!(
        seen.abs_diff(timed) < seen.abs_diff(untimed) && seen * 10 >= timed * 8,
        "{seen} text pixels in the caption: {timed} for the time and step, {untimed} for the \
         step alone ({})",
        stderr_of(&output)
    );
}
