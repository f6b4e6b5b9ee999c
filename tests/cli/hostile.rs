//! Hostile input from files and arguments: control characters in titles, names and paths are
//! shown escaped, never sent raw to the terminal, and physics that cannot be stepped is refused
//! with its reason. The real binary in a temporary folder.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use std::fs;
use std::process::Output;

use common::cli::stderr_of;
use common::heatlab_in as heatlab;

/// A small scenario with `title` and `material` as TOML text (escapes allowed).
fn scenario(title: &str, material: &str) -> String {
    format!(
        r#"
title = "{title}"
[grid]
rows = 4
cols = 4
spacing = 0.01
[time]
duration = 1.0
[[materials]]
name = "{material}"
conductivity = 1.0
density = 1000.0
specific_heat = 1000.0
[base]
material = "{material}"
[initial]
temperature = "20 C"
"#
    )
}

/// Everything the run wrote, both streams.
fn all_output(output: &Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&stderr_of(output));
    text
}

fn assert_no_raw_controls(text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a raw control character reached the output: {text:?}"
    );
}

#[test]
fn control_characters_in_titles_and_names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario(r"\u001b[31mred \u001b]0;pwned\u0007", r"clay\u009b2J");
    fs::write(dir.path().join("evil.toml"), text).unwrap();
    let output = heatlab(dir.path(), &["scenario", "check", "evil.toml"]);
    let shown = all_output(&output);
    assert!(output.status.success(), "{shown}");
    assert_no_raw_controls(&shown);
    assert!(shown.contains(r"\e[31mred \e]0;pwned\x07"), "{shown}");
    assert!(shown.contains(r"clay\u{9b}2j"), "{shown}");

    let broken = scenario(r"\u001b[31mred", r"clay\u001b[2J").replace("[base]", "[bas]");
    fs::write(dir.path().join("broken.toml"), broken).unwrap();
    let output = heatlab(dir.path(), &["scenario", "check", "broken.toml"]);
    assert!(!output.status.success());
    assert_no_raw_controls(&all_output(&output));
}

#[test]
fn control_characters_in_a_path_are_escaped_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = heatlab(
        dir.path(),
        &["scenario", "check", "\u{1b}]0;pwned\u{7}.toml"],
    );
    assert!(!output.status.success());
    let shown = all_output(&output);
    assert_no_raw_controls(&shown);
    assert!(shown.contains(r"opening \e]0;pwned\x07.toml: "), "{shown}");
}

/// Checks and runs the small scenario with `from` replaced by `to`: both must be refused with
/// one error line, the last, holding `reason`, and nothing written.
fn refused_with(from: &str, to: &str, reason: &str) {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("Degenerate", "stuff");
    assert!(text.contains(from), "{from}");
    fs::write(dir.path().join("bad.toml"), text.replace(from, to)).unwrap();
    for args in [
        &["scenario", "check", "bad.toml"][..],
        &["run", "--scenario", "bad.toml", "--backend", "cpu"][..],
    ] {
        let output = heatlab(dir.path(), args);
        let error = stderr_of(&output);
        assert!(!output.status.success(), "{args:?} {error}");
        let last = error.lines().last().unwrap_or_default();
        assert!(last.starts_with("heatlab: error: "), "{args:?} {error}");
        assert!(last.contains(reason), "{args:?} {error}");
        assert_eq!(error.matches("error").count(), 1, "{args:?} {error}");
        assert!(
            dir.path().read_dir().unwrap().count() == 1,
            "{args:?} wrote files"
        );
    }
}

#[test]
fn a_heat_capacity_too_small_to_step_is_refused() {
    refused_with(
        "density = 1000.0\nspecific_heat = 1000.0",
        "density = 1e-300\nspecific_heat = 1e-300",
        "the time step comes to 0e0 s, which cannot be stepped: cells of stuff",
    );
}

#[test]
fn a_spacing_too_small_to_step_is_refused() {
    refused_with(
        "spacing = 0.01",
        "spacing = 1e-200",
        "at a spacing of 1e-200 m hold 0e0 J/K",
    );
}

#[test]
fn a_subnormal_time_step_is_refused() {
    refused_with(
        "duration = 1.0",
        "duration = 1.0\nstep = 1e-320",
        "a time step of 1e-320 s cannot be stepped",
    );
}

#[test]
fn a_duration_of_more_steps_than_a_run_can_count_is_refused() {
    refused_with(
        "duration = 1.0",
        "duration = 1e300",
        "a duration of 1e300 s at a time step of 2.25e1 s takes 4.444444444444445e298 steps",
    );
}

#[test]
fn a_conductivity_overflowing_the_tables_is_refused_as_such() {
    refused_with(
        "conductivity = 1.0",
        "conductivity = 1e308",
        "the conductivity of stuff (stuff) is 1e308 W/m/K, too large",
    );
}
