use super::*;

use crate::problem::{Heater, HeaterPower, Shape};

fn kind(name: &str) -> CellKind {
    CellKind::of(material::find(name).unwrap())
}

/// A 6x8 problem: copper with a glass rectangle and a heater disc.
fn problem() -> HeatProblem {
    let size = GridSize::new(6, 8).unwrap();
    let mut problem = HeatProblem::uniform(size, 2e-3, material::find("copper").unwrap());
    let glass = problem.kind_index(kind("glass")).unwrap();
    for cell in (Shape::Rectangle {
        from: (1.0, 1.0),
        to: (4.0, 3.0),
    })
    .cells(size, &problem.map)
    {
        problem.map[cell as usize] = glass;
    }
    let mut heater = kind("silicon");
    heater.name = "chip".into();
    heater.heater = Some(Heater {
        power: HeaterPower::Total(20.0),
        on: true,
    });
    heater.held_temperature = None;
    let chip = problem.kind_index(heater).unwrap();
    problem.map[5 * 8 + 7] = chip;
    problem.map[5 * 8 + 6] = chip;
    problem.check().unwrap();
    problem
}

fn write_png(path: &Path, width: usize, height: usize, pixel: impl Fn(usize, usize) -> Rgb) {
    let mut rgb = Vec::new();
    for row in 0..height {
        for col in 0..width {
            rgb.extend_from_slice(&pixel(row, col));
        }
    }
    write_png_rgb(path, width, height, &rgb).unwrap();
}

#[test]
fn every_library_material_has_a_colour_far_from_the_others() {
    for material in material::library() {
        assert!(
            library_colour(&material.name).is_some(),
            "{} has no colour",
            material.name
        );
    }
    for (i, (a, x)) in LIBRARY_COLOURS.iter().enumerate() {
        for (b, y) in &LIBRARY_COLOURS[i + 1..] {
            assert!(
                colour_distance(*x, *y) > 2 * DEFAULT_TOLERANCE,
                "{a} and {b} are too alike"
            );
        }
    }
}

#[test]
fn kind_colours_are_distinct_and_keep_their_order() {
    let problem = problem();
    let colours = kind_colours(&problem.kinds);
    assert_eq!(colours[0], library_colour("copper").unwrap());
    assert_eq!(colours[1], library_colour("glass").unwrap());
    // The chip is silicon with a heater: not the plain material, so a colour of its own.
    let palette = Legend::palette(&problem.kinds);
    assert_eq!(
        palette.entries[..3]
            .iter()
            .map(|e| e.colour)
            .collect::<Vec<_>>(),
        colours,
        "the problem's kinds keep their colours in the palette"
    );
    for (i, a) in palette.entries.iter().enumerate() {
        for b in &palette.entries[i + 1..] {
            assert!(
                colour_distance(a.colour, b.colour) > 2 * DEFAULT_TOLERANCE,
                "{} and {}",
                a.kind.name,
                b.kind.name
            );
        }
    }
    // 3 kinds of the problem and the 22 library materials it does not have as plain kinds.
    assert_eq!(palette.entries.len(), 3 + material::library().len() - 2);
}

#[test]
fn colours_read_and_print() {
    assert_eq!(parse_colour("#b87333"), Some([0xb8, 0x73, 0x33]));
    assert_eq!(parse_colour("B87333"), Some([0xb8, 0x73, 0x33]));
    assert_eq!(parse_colour("#b8733"), None);
    assert_eq!(parse_colour("#b8733g"), None);
    assert_eq!(colour_text([1, 2, 255]), "#0102ff");
}

#[test]
fn an_exported_map_reads_back_into_the_same_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.png");
    let problem = problem();
    let legend_file = write_map(&path, &problem).unwrap();
    assert_eq!(legend_file, dir.path().join("map.legend.toml"));
    let legend = read_legend(&legend_file).unwrap();
    assert_eq!(legend.spacing, Some(2e-3));
    assert_eq!(legend.entries.len(), 3);
    let imported = read_map(&path, problem.size, &legend, MapOptions::default()).unwrap();
    assert_eq!(imported.scaled_from, None);
    let rebuilt = problem_with_map(None, problem.size, &legend, &imported).unwrap();
    assert_eq!(rebuilt.kinds, problem.kinds);
    assert_eq!(rebuilt.map, problem.map);
    assert_eq!(rebuilt.spacing, problem.spacing);
    // Onto the problem itself: nothing changes, no kind is added.
    let again = problem_with_map(Some(&problem), problem.size, &legend, &imported).unwrap();
    assert_eq!(again, problem);
}

#[test]
fn palette_colours_read_within_the_tolerance_onto_an_existing_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hand.png");
    let base = problem();
    let legend = Legend::palette(&base.kinds);
    let water = library_colour("water").unwrap();
    let copper = library_colour("copper").unwrap();
    // The left half water, slightly off (a paint program's soft edge), the rest copper.
    write_png(&path, 8, 6, |_, col| {
        if col < 4 {
            [water[0], water[1] + DEFAULT_TOLERANCE, water[2] - 3]
        } else {
            copper
        }
    });
    let imported = read_map(&path, base.size, &legend, MapOptions::default()).unwrap();
    let problem = problem_with_map(Some(&base), base.size, &legend, &imported).unwrap();
    // The problem's kinds stay where they were (thermostats and heaters name them by index);
    // water is added.
    assert_eq!(problem.kinds[..3], base.kinds[..]);
    assert_eq!(problem.kinds[3], kind("water"));
    for row in 0..6 {
        for col in 0..8 {
            let expected = if col < 4 { 3 } else { 0 };
            assert_eq!(problem.map[row * 8 + col], expected, "({row}, {col})");
        }
    }
    let strict = MapOptions {
        tolerance: 2,
        scale: false,
    };
    let error = read_map(&path, base.size, &legend, strict)
        .unwrap_err()
        .to_string();
    assert!(error.contains("tolerance 2"), "{error}");
}

#[test]
fn an_unknown_colour_is_named_with_a_pixel_where_it_occurs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.png");
    let legend = Legend::of_kinds(&[kind("copper"), kind("glass")]);
    let copper = library_colour("copper").unwrap();
    write_png(&path, 8, 6, |row, col| {
        if (row, col) >= (3, 5) {
            [0x00, 0xff, 0x00]
        } else {
            copper
        }
    });
    let size = GridSize::new(6, 8).unwrap();
    let error = read_map(&path, size, &legend, MapOptions::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("#00ff00"), "{error}");
    assert!(error.contains("row 3, column 5"), "{error}");
    assert!(error.contains("odd.png"), "{error}");
}

#[test]
fn a_map_of_another_size_is_refused_or_scaled_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.png");
    let legend = Legend::of_kinds(&[kind("copper"), kind("glass")]);
    let (copper, glass) = (legend.entries[0].colour, legend.entries[1].colour);
    // Twice the grid's size: the right half glass.
    write_png(
        &path,
        16,
        12,
        |_, col| if col >= 8 { glass } else { copper },
    );
    let size = GridSize::new(6, 8).unwrap();
    let error = read_map(&path, size, &legend, MapOptions::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("16×12 pixels"), "{error}");
    assert!(error.contains("8×6 cells"), "{error}");
    let scale = MapOptions {
        scale: true,
        ..MapOptions::default()
    };
    let imported = read_map(&path, size, &legend, scale).unwrap();
    assert_eq!(imported.scaled_from, Some((12, 16)));
    for (i, &cell) in imported.cells.iter().enumerate() {
        assert_eq!(cell, u8::from(i % 8 >= 4), "cell {i}");
    }
}

#[test]
fn what_is_not_a_png_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("text.png");
    std::fs::write(&path, "not a picture").unwrap();
    let legend = Legend::of_kinds(&[kind("copper")]);
    let size = GridSize::new(6, 8).unwrap();
    let error = read_map(&path, size, &legend, MapOptions::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("is not a PNG image"), "{error}");
    let missing = dir.path().join("missing.png");
    assert!(read_map(&missing, size, &legend, MapOptions::default()).is_err());
}

#[test]
fn a_legend_with_a_bad_or_repeated_colour_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.png");
    write_map(&path, &problem()).unwrap();
    let legend = legend_path(&path);
    let text = std::fs::read_to_string(&legend).unwrap();
    let glass = colour_text(library_colour("glass").unwrap());
    let copper = colour_text(library_colour("copper").unwrap());
    std::fs::write(&legend, text.replace(&glass, &copper)).unwrap();
    let error = read_legend(&legend).unwrap_err().to_string();
    assert!(error.contains("names both"), "{error}");
    std::fs::write(&legend, text.replace(&glass, "#12345")).unwrap();
    let error = read_legend(&legend).unwrap_err().to_string();
    assert!(error.contains("is not a colour"), "{error}");
}
