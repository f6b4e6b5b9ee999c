//! Scenario files: what builds, and every error named.

use super::*;
use crate::problem::{HeaterPower, Side, SideCondition, SideKind, Sides, TimeStep};

const WALL: &str = r#"
title = "Wall with a stud"
[grid]
rows = 10
cols = 40
spacing = 0.005
[time]
duration = 60.0
[base]
material = "brick"
[[parts]]
name = "stud"
material = "steel"
rect = { x = 0.1, y = 0.0, width = 0.01, height = 0.05 }
[[parts]]
name = "heater"
material = "copper"
ellipse = { x = 0.0, y = 0.0, width = 0.02, height = 0.02 }
heater = { power = 25.0 }
[initial]
temperature = "293.15 K"
[sides]
left = { type = "fixed", temperature = 30 }
right = { type = "convective", h = 10.0, ambient = "-5 C" }
top = { type = "periodic" }
bottom = { type = "periodic" }
"#;

fn errors_of(text: &str) -> Vec<String> {
    parse(text, Path::new(".")).unwrap_err().errors
}

#[test]
fn a_wall_builds() {
    let scenario = parse(WALL, Path::new(".")).unwrap();
    let problem = &scenario.problem;
    assert_eq!(scenario.title(), "Wall with a stud");
    assert_eq!(problem.kinds.len(), 3);
    assert_eq!(problem.kinds[1].name, "stud");
    assert_eq!(problem.kinds[1].material.name, "carbon-steel");
    // The stud covers columns 20 and 21 (centres at 0.1025 and 0.1075 m) on every row.
    for row in 0..10 {
        assert_eq!(&problem.map[row * 40 + 19..row * 40 + 23], &[0, 1, 1, 0]);
    }
    assert_eq!(
        problem.kinds[2].heater.unwrap().power,
        HeaterPower::Total(25.0)
    );
    assert!(problem.map[40 + 1] == 2 && problem.map[0] == 0 && problem.map[4 * 40 + 4] == 0);
    assert_eq!(
        problem.sides.get(Side::Left),
        SideCondition::Fixed { temperature: 30.0 }
    );
    assert_eq!(
        problem.sides.right,
        SideCondition::Convective {
            h: 10.0,
            ambient: -5.0
        }
    );
    assert_eq!(problem.time_step, TimeStep::Fraction(0.9));
    assert!((scenario.initial.as_slice()[5] - 20.0).abs() < 1e-5);
    assert_eq!(scenario.duration(), Some(60.0));
}

#[test]
fn every_error_is_named_at_once() {
    let text = WALL
        .replace("\"steel\"", "\"unobtainium\"")
        .replace("ambient = \"-5 C\"", "ambient = \"-500 C\"")
        .replace(
            "top = { type = \"periodic\" }",
            "top = { type = \"insulated\" }",
        );
    let errors = errors_of(&text);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("unknown material \"unobtainium\"")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("below absolute zero")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.contains("pairs")), "{errors:?}");
    let shown = ScenarioErrors {
        source: "wall.toml".into(),
        errors,
    }
    .to_string();
    assert!(shown.starts_with("wall.toml has 3 errors:"), "{shown}");
}

#[test]
fn an_unstable_step_names_the_limit() {
    let text = WALL.replace("duration = 60.0", "duration = 60.0\nstep = 10.0");
    let errors = errors_of(&text);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("above the stability limit of"),
        "{errors:?}"
    );
}

#[test]
fn syntax_and_unknown_keys_are_refused() {
    assert!(errors_of("[grid\nrows = 3")[0].contains("line"));
    let errors = errors_of(&WALL.replace("spacing = 0.005", "spacing = 0.005\nspcing = 1"));
    assert!(errors[0].contains("spcing"), "{errors:?}");
    let errors = errors_of(&WALL.replace("rect = { x = 0.1,", "rect = { x = 5.0,"));
    assert!(errors[0].contains("covers no cell"), "{errors:?}");
}

/// Every kind of side is written under its name and read back as it was, whatever the case a
/// user writes it in.
#[test]
fn every_side_kind_is_saved_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let wall = parse(WALL, Path::new(".")).unwrap();
    for kind in SideKind::ALL {
        let condition = match kind.condition(SideCondition::Fixed { temperature: 35.5 }) {
            SideCondition::Flux { .. } => SideCondition::Flux { flux: -42.25 },
            other => other,
        };
        let mut problem = wall.problem.clone();
        problem.sides = Sides::all(condition);
        let path = dir.path().join(format!("{kind}.toml"));
        let to_save = save::ScenarioToSave {
            title: "sides",
            description: "",
            problem: &problem,
            initial: &wall.initial,
            duration: None,
        };
        save::save(&path, to_save).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(&format!("type = \"{kind}\"")), "{text}");
        let loaded = parse(&text, dir.path()).unwrap();
        assert_eq!(loaded.problem.sides, problem.sides);
        let shouted = text.replace(
            &format!("\"{kind}\""),
            &format!("\"{}\"", kind.name().to_uppercase()),
        );
        let loaded = parse(&shouted, dir.path()).unwrap();
        assert_eq!(loaded.problem.sides, problem.sides);
    }
    let errors = errors_of(&WALL.replace("\"fixed\"", "\"sticky\""));
    assert!(
        errors[0].starts_with("[sides] left: unknown side type 'sticky' (expected insulated,"),
        "{errors:?}"
    );
}

fn write_png(
    dir: &Path,
    name: &str,
    width: u32,
    height: u32,
    colour: impl Fn(u32, u32) -> [u8; 3],
) {
    let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb(colour(x, y)));
    image.save(dir.join(name)).unwrap();
}

const MAPPED: &str = r##"
[grid]
rows = 6
cols = 8
spacing = 0.01
[base]
material = "air"
[map]
image = "map.png"
colors = { "#ff0000" = "copper", "#0000ff" = "chip" }
[[parts]]
name = "chip"
material = "silicon"
rect = { x = 0.0, y = 0.05, width = 0.01, height = 0.01 }
held = "80 C"
"##;

#[test]
fn a_map_image_names_materials_and_parts_by_colour() {
    let dir = tempfile::tempdir().unwrap();
    write_png(dir.path(), "map.png", 8, 6, |x, _| {
        if x < 4 {
            [255, 0, 0]
        } else {
            [0, 0, 255]
        }
    });
    let scenario = parse(MAPPED, dir.path()).unwrap();
    let problem = &scenario.problem;
    let name = |cell: usize| problem.kinds[problem.map[cell] as usize].name.clone();
    assert_eq!(name(0), "copper");
    assert_eq!(name(7), "chip");
    assert_eq!(name(5 * 8), "chip"); // the part painted over the map
    assert_eq!(scenario.initial.as_slice()[7], 80.0);
    // A colour no one named, and a map of the wrong size.
    write_png(dir.path(), "map.png", 8, 6, |x, _| {
        if x < 4 {
            [255, 0, 0]
        } else {
            [1, 2, 3]
        }
    });
    let errors = parse(MAPPED, dir.path()).unwrap_err().errors;
    assert!(errors[0].contains("#010203"), "{errors:?}");
    write_png(dir.path(), "map.png", 7, 6, |_, _| [255, 0, 0]);
    let errors = parse(MAPPED, dir.path()).unwrap_err().errors;
    assert!(
        errors[0].contains("is 6x7 (rows x columns) but the grid is 6x8"),
        "{errors:?}"
    );
}

#[test]
fn a_map_array_holds_indices_into_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut header = String::from("{'descr': '|u1', 'fortran_order': False, 'shape': (6, 8), }");
    while (header.len() + 11) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend((0..48u8).map(|i| i % 2));
    std::fs::write(dir.path().join("map.npy"), &bytes).unwrap();
    let text = MAPPED.replace(
        "image = \"map.png\"\ncolors = { \"#ff0000\" = \"copper\", \"#0000ff\" = \"chip\" }",
        "npy = \"map.npy\"\nnames = [\"water\", \"glass\"]",
    );
    let scenario = parse(&text, dir.path()).unwrap();
    let problem = &scenario.problem;
    assert_eq!(problem.kinds[problem.map[0] as usize].name, "water");
    assert_eq!(problem.kinds[problem.map[1] as usize].name, "glass");
    let errors = parse(
        &text.replace("\"glass\"]", "\"glass\", \"mud\"]"),
        dir.path(),
    )
    .unwrap_err()
    .errors;
    assert!(errors[0].contains("unknown material \"mud\""), "{errors:?}");
}

#[test]
fn descriptions_are_reflowed_into_paragraphs() {
    assert_eq!(
        super::reflow("one line\nand the next\n\nanother  paragraph\n"),
        "one line and the next\n\nanother paragraph"
    );
}

/// A small plate with `extra` appended (parts, an `[initial]`).
fn plate(extra: &str) -> String {
    format!("[grid]\nrows = 48\ncols = 64\nspacing = 0.001\n[base]\nmaterial = \"copper\"\n{extra}")
}

#[test]
fn non_finite_temperatures_are_refused_naming_key_and_value() {
    let lid = "[[parts]]\nname = \"lid\"\nmaterial = \"copper\"\n\
               rect = { x = 0.0, y = 0.0, width = 0.01, height = 0.01 }\n";
    for (extra, key, value) in [
        (
            "[initial]\ntemperature = 1e39\n",
            "[initial] temperature",
            "\"1e39\"",
        ),
        (
            &format!("{lid}initial = \"1e39\"\n"),
            "part \"lid\" initial",
            "\"1e39\"",
        ),
        (
            &format!("{lid}held = \"1e39 C\"\n"),
            "part \"lid\" held",
            "\"1e39 C\"",
        ),
    ] {
        let errors = errors_of(&plate(extra));
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(key) && e.contains(value) && e.contains("not finite")),
            "{errors:?}"
        );
    }
}

#[test]
fn a_jagged_field_that_overflows_names_its_exponent() {
    let errors = errors_of(&plate("[initial]\njagged = { exponent = 80.0 }\n"));
    assert!(
        errors
            .iter()
            .any(|e| e.contains("exponent = 80") && e.contains("non-finite in")),
        "{errors:?}"
    );
    assert!(parse(&plate("[initial]\njagged = {}\n"), Path::new(".")).is_ok());
}
