//! The inputs of each lesson, edited in the side panel.

use eframe::egui::{self, RichText};

use heatlab_engine::tutorial::basics::geometry::{
    Dimensions, GeometryOptions, MAX_GEOMETRY_ELEMENTS,
};
use heatlab_engine::tutorial::basics::maximum::{MaximumOptions, MAX_SIDE};
use heatlab_engine::tutorial::basics::BasicsRequest;

/// Cube sides offered for the maximum ladder.
const SIDES: [usize; 8] = [16, 32, 64, 128, 192, 256, 384, 512];

/// The controls of one lesson's request.
pub(super) fn request_ui(ui: &mut egui::Ui, request: &mut BasicsRequest) {
    match request {
        BasicsRequest::Maximum(options) => maximum_ui(ui, options),
        BasicsRequest::Geometry(options) => geometry_ui(ui, options),
        BasicsRequest::SinExp { n, repeats } => {
            count_ui(ui, "elements n", n, 1..=200_000_000);
            repeats_ui(ui, repeats);
        }
        BasicsRequest::RowSums {
            rows,
            cols,
            repeats,
            ..
        } => {
            ui.horizontal(|ui| {
                let label = ui.label("matrix rows");
                ui.add(egui::DragValue::new(rows).range(1..=16_384).speed(10.0))
                    .labelled_by(label.id);
                let label = ui.label("x columns");
                ui.add(egui::DragValue::new(cols).range(1..=16_384).speed(10.0))
                    .labelled_by(label.id);
            });
            repeats_ui(ui, repeats);
        }
        BasicsRequest::Reduce { n, repeats, .. } => {
            count_ui(ui, "elements n", n, 1..=1 << 28);
            repeats_ui(ui, repeats);
        }
        BasicsRequest::Device => {
            ui.label(RichText::new("Nothing to choose: the GPU's own figures.").weak());
        }
    }
}

fn count_ui(ui: &mut egui::Ui, label: &str, n: &mut u64, range: std::ops::RangeInclusive<u64>) {
    ui.horizontal(|ui| {
        let label = ui.label(label);
        ui.add(egui::DragValue::new(n).range(range).speed(1000.0))
            .labelled_by(label.id);
    });
}

fn repeats_ui(ui: &mut egui::Ui, repeats: &mut u32) {
    ui.horizontal(|ui| {
        let label = ui.label("timed runs");
        ui.add(egui::DragValue::new(repeats).range(1..=100))
            .labelled_by(label.id);
    });
}

fn maximum_ui(ui: &mut egui::Ui, options: &mut MaximumOptions) {
    ui.label("cube sides (side³ float32 elements):");
    ui.horizontal_wrapped(|ui| {
        for side in SIDES.into_iter().filter(|&s| s <= MAX_SIDE) {
            let mut on = options.sides.contains(&side);
            if ui.checkbox(&mut on, side.to_string()).changed() {
                if on {
                    options.sides.push(side);
                    options.sides.sort_unstable();
                } else {
                    options.sides.retain(|&s| s != side);
                }
            }
        }
    });
    if options.sides.is_empty() {
        ui.label(RichText::new("pick at least one size").color(super::super::notice::WARNING));
    }
    repeats_ui(ui, &mut options.repeats);
}

fn geometry_ui(ui: &mut egui::Ui, options: &mut GeometryOptions) {
    ui.horizontal(|ui| {
        if ui.button("notebook 1-D").clicked() {
            *options = GeometryOptions {
                repeats: options.repeats,
                ..GeometryOptions::notebook_1d()
            };
        }
        if ui.button("notebook 2-D").clicked() {
            *options = GeometryOptions {
                repeats: options.repeats,
                ..GeometryOptions::notebook_2d()
            };
        }
    });
    ui.horizontal(|ui| {
        ui.radio_value(&mut options.dimensions, Dimensions::One, "1-D");
        ui.radio_value(&mut options.dimensions, Dimensions::Two, "2-D");
    });
    let two_d = options.dimensions == Dimensions::Two;
    if two_d {
        ui.horizontal(|ui| {
            let label = ui.label("array rows");
            ui.add(egui::DragValue::new(&mut options.rows).range(1..=8192))
                .labelled_by(label.id);
            let label = ui.label("x columns");
            ui.add(egui::DragValue::new(&mut options.cols).range(1..=8192))
                .labelled_by(label.id);
        });
        ui.checkbox(
            &mut options.x_along_rows,
            "grid x walks the rows (as the notebook)",
        );
    } else {
        count_ui(ui, "elements n", &mut options.n, 1..=MAX_GEOMETRY_ELEMENTS);
        options.block[1] = 1;
        options.grid[1] = 1;
    }
    ui.horizontal(|ui| {
        let label = ui.label("threads per block");
        ui.add(egui::DragValue::new(&mut options.block[0]).range(1..=1024))
            .labelled_by(label.id);
        if two_d {
            let label = ui.label("x");
            ui.add(egui::DragValue::new(&mut options.block[1]).range(1..=1024))
                .labelled_by(label.id);
        }
    });
    ui.horizontal(|ui| {
        let label = ui.label("blocks in the grid");
        ui.add(egui::DragValue::new(&mut options.grid[0]).range(1..=1 << 24))
            .labelled_by(label.id);
        if two_d {
            let label = ui.label("x");
            ui.add(egui::DragValue::new(&mut options.grid[1]).range(1..=65_535))
                .labelled_by(label.id);
        }
        if ui
            .button("fit")
            .on_hover_text("ceil(size / block) on each axis")
            .clicked()
        {
            options.grid = options.fitting_grid();
        }
    });
    ui.checkbox(&mut options.guarded, "guard: if i < n");
    if !options.guarded {
        ui.label(
            RichText::new("without the guard, writes past the end land in padding and are counted")
                .weak(),
        );
    }
    if let Err(error) = options.validate() {
        ui.label(RichText::new(error.to_string()).color(super::super::notice::WARNING));
    }
    repeats_ui(ui, &mut options.repeats);
}
