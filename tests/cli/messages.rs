//! What heatlab says about small mistakes in scenarios, arrays, images and options: one line
//! that names the real problem and gives advice the user can follow, with exit status 1, and
//! no refusal where the input is fine. The real binary in a temporary folder.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Output;

use common::cli::stderr_of;
use common::heatlab_in as heatlab;
use image::ImageEncoder as _;

/// Fails unless `output` is a refusal of one line holding `expected`.
fn refused_in_one_line(output: &Output, expected: &str) -> String {
    let stderr = stderr_of(output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in {stderr:?}"
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    stderr
}

/// Fails unless `output` succeeded; its standard output.
fn passed(output: &Output) -> String {
    assert!(output.status.success(), "{}", stderr_of(output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `heatlab scenario check` of `text` written as `name` in `dir`.
fn check(dir: &Path, name: &str, text: &str) -> Output {
    fs::write(dir.join(name), text).unwrap();
    heatlab(dir, &["scenario", "check", name])
}

/// A 4x4 copper plate with `more` appended.
fn plate(more: &str) -> String {
    format!("[grid]\nrows = 4\ncols = 4\nspacing = 0.01\n[base]\nmaterial = \"copper\"\n{more}")
}

/// A `.npy` file of `descr` values with `shape` and `data` (C order).
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    crate::common::npy_bytes(descr, false, shape, data)
}

/// A 4x4 PNG of `rgb` everywhere, but its last pixel `last`.
fn png(rgb: [u8; 3], last: [u8; 3]) -> Vec<u8> {
    let mut pixels: Vec<u8> = rgb.repeat(16);
    pixels[45..].copy_from_slice(&last);
    let mut bytes = Vec::new();
    image::codecs::png::PngEncoder::new(&mut bytes)
        .write_image(&pixels, 4, 4, image::ExtendedColorType::Rgb8)
        .unwrap();
    bytes
}

#[test]
fn a_scenario_maps_stray_colour_is_not_told_to_raise_a_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("map.png"), png([255; 3], [250, 0, 0])).unwrap();
    let map = "[map]\nimage = \"map.png\"\ncolors = { \"#ffffff\" = \"copper\" }\n";
    let stderr = refused_in_one_line(&check(d, "s.toml", &plate(map)), "[map] colors");
    assert!(!stderr.contains("tolerance"), "{stderr}");
    assert!(stderr.contains("#fa0000"), "{stderr}");
}

#[test]
fn maps_of_every_integer_width_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let names = "names = [\"copper\", \"brick\"]";
    for (descr, width) in [
        ("|u1", 1),
        ("<u2", 2),
        ("<u4", 4),
        ("<u8", 8),
        ("<i4", 4),
        ("<i8", 8),
    ] {
        let mut data = vec![0u8; 16 * width];
        data[15 * width] = 1;
        fs::write(d.join("map.npy"), npy(descr, "(4, 4)", &data)).unwrap();
        let said = passed(&check(
            d,
            "s.toml",
            &plate(&format!("[map]\nnpy = \"map.npy\"\n{names}\n")),
        ));
        assert!(said.contains("brick: 1 cells"), "{descr}: {said}");
    }
    let mut data = vec![0u8; 16 * 4];
    data[0] = 7;
    fs::write(d.join("map.npy"), npy("<u4", "(4, 4)", &data)).unwrap();
    let text = plate(&format!("[map]\nnpy = \"map.npy\"\n{names}\n"));
    refused_in_one_line(
        &check(d, "s.toml", &text),
        "holds 7, not an index into its 2 names",
    );
    fs::write(d.join("map.npy"), npy("<f4", "(4, 4)", &data)).unwrap();
    refused_in_one_line(&check(d, "s.toml", &text), "a map holds integer indices");
}

#[test]
fn a_refused_user_material_is_not_also_an_unknown_one() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[grid]\nrows = 4\ncols = 4\nspacing = 0.01\n[[materials]]\nname = \"clay\"\n\
                conductivity = -1.0\ndensity = 1000.0\nspecific_heat = 1000.0\n\
                [base]\nmaterial = \"clay\"\n";
    let stderr = refused_in_one_line(&check(dir.path(), "clay.toml", text), "material \"clay\"");
    assert!(!stderr.contains("unknown material"), "{stderr}");
    let unknown = text.replace("material = \"clay\"", "material = \"clai\"");
    let output = check(dir.path(), "clai.toml", &unknown);
    assert!(stderr_of(&output).contains("unknown material \"clai\""));
}

#[test]
fn an_empty_array_is_empty_not_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("empty.npy"), npy("<f4", "(0, 10)", &[])).unwrap();
    let output = heatlab(
        d,
        &[
            "run",
            "--initial",
            "empty.npy",
            "--steps",
            "1",
            "--out",
            "o",
        ],
    );
    let stderr = refused_in_one_line(&output, "is empty (0x10)");
    assert!(!stderr.contains("too large"), "{stderr}");
}

#[test]
fn a_truncated_jpeg_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pixels: Vec<u8> = (0..96u32 * 64 * 3)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut whole = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut whole, 90)
        .encode(&pixels, 96, 64, image::ExtendedColorType::Rgb8)
        .unwrap();
    for cut in [10, 100, 300, 600, whole.len() / 2] {
        fs::write(d.join("cut.jpg"), &whole[..cut]).unwrap();
        let output = heatlab(
            d,
            &["run", "--initial", "cut.jpg", "--steps", "1", "--out", "o"],
        );
        let stderr = refused_in_one_line(&output, "cut.jpg");
        assert!(
            !stderr.ends_with("\n\n") && !stderr.ends_with(" \n"),
            "{cut}: {stderr:?}"
        );
    }
}

#[test]
fn a_symlinked_scenario_reads_its_map_beside_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("real")).unwrap();
    fs::create_dir_all(d.join("links")).unwrap();
    fs::write(d.join("real/map.png"), png([255; 3], [255; 3])).unwrap();
    let map = "[map]\nimage = \"map.png\"\ncolors = { \"#ffffff\" = \"brick\" }\n";
    fs::write(d.join("real/s.toml"), plate(map)).unwrap();
    std::os::unix::fs::symlink("../real/s.toml", d.join("links/s.toml")).unwrap();
    let said = passed(&heatlab(d, &["scenario", "check", "links/s.toml"]));
    assert!(said.contains("brick: 16 cells"), "{said}");
}

#[test]
fn a_folder_named_like_a_gallery_problem_does_not_hide_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("fin")).unwrap();
    let said = passed(&heatlab(d, &["scenario", "check", "fin"]));
    assert!(said.lines().next().unwrap().ends_with(": ok"), "{said}");
    fs::create_dir(d.join("mine")).unwrap();
    let output = heatlab(d, &["scenario", "check", "mine"]);
    refused_in_one_line(&output, "mine: it is a folder, not a scenario file");
}

#[test]
fn a_thermostat_that_never_decides_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gallery = include_str!("../../assets/scenarios/heater-thermostat.toml");
    assert!(gallery.contains("every_seconds = 0.05"));
    for (interval, expected) in [
        (
            "every_steps = 18446744073709551615",
            "decides every 18446744073709551615 steps",
        ),
        ("every_seconds = 1e300", "every_seconds = 1e300 is"),
    ] {
        let text = gallery.replace("every_seconds = 0.05", interval);
        let output = check(dir.path(), "t.toml", &text);
        refused_in_one_line(&output, expected);
        assert!(stderr_of(&output).contains("would never decide"));
    }
}

#[test]
fn a_value_its_side_kind_does_not_take_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (side, expected) in [
        (
            "{ type = \"fixed\", temperature = \"20 C\", flux = 5.0 }",
            "a fixed side takes no flux",
        ),
        (
            "{ type = \"insulated\", h = 5.0, ambient = 20.0 }",
            "an insulated side takes no h or ambient",
        ),
        (
            "{ type = \"flux\", flux = 5.0, temperature = 3.0 }",
            "a flux side takes no temperature",
        ),
    ] {
        let text = plate(&format!("[sides]\nleft = {side}\n"));
        refused_in_one_line(&check(dir.path(), "s.toml", &text), expected);
    }
}

#[test]
fn verify_physics_refuses_the_options_of_the_sequences() {
    let dir = tempfile::tempdir().unwrap();
    for option in [
        ["--sequences", "3"],
        ["--operations", "5"],
        ["--seed", "2"],
        ["--max-cells", "9"],
    ] {
        let mut args = vec!["verify", "--physics", "--backend", "cpu"];
        args.extend(option);
        let output = heatlab(dir.path(), &args);
        refused_in_one_line(&output, "are for the random sequences, not --physics");
    }
}

#[test]
fn bench_refuses_a_repetition_longer_than_an_hour() {
    let dir = tempfile::tempdir().unwrap();
    let output = heatlab(
        dir.path(),
        &["bench", "--backend", "cpu", "--seconds", "1e300"],
    );
    refused_in_one_line(&output, "at most 3600 (an hour), got 1e300");
}
