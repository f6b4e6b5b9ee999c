//! A material of the user's own: a name, k, ρ, c_p and its colour, the numbers typed (numbers taken when a field is
//! left, as everywhere), checked when "Add material" is pressed. The New problem window fills
//! its grid with one; the Problem section paints parts with one. A problem that holds one saves
//! it as the scenario's `[[materials]]`.

use eframe::egui;

use heatlab_engine::problem::{material, Material};

use super::super::sources::typed::{Typed, TypedNumbers};

/// The material being made.
#[derive(Debug)]
pub struct MaterialEditor {
    name: String,
    conductivity: f64,
    density: f64,
    specific_heat: f64,
    /// Its colour in the palette and in material maps.
    colour: [u8; 3],
    typed: TypedNumbers,
    /// Where its fields are (two editors on screen at once keep apart).
    salt: &'static str,
}

impl MaterialEditor {
    /// An editor whose fields' ids are salted with `salt`.
    pub fn new(salt: &'static str) -> Self {
        Self {
            name: String::new(),
            conductivity: 1.0,
            density: 1000.0,
            specific_heat: 1000.0,
            colour: [214, 140, 60],
            typed: TypedNumbers::default(),
            salt,
        }
    }

    /// The fields and "Add material" (with `hint` on hover). Returns the material made, or
    /// pushes onto `refused` why a value or the material was refused.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        hint: &str,
        refused: &mut Vec<String>,
    ) -> Option<Material> {
        ui.horizontal(|ui| {
            let label = ui.label("name");
            ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(140.0))
                .labelled_by(label.id);
        });
        let salt = self.salt;
        for (field, label, value) in [
            ("k", "k (W/(m·K))", &mut self.conductivity),
            ("rho", "ρ (kg/m³)", &mut self.density),
            ("cp", "c_p (J/(kg·K))", &mut self.specific_heat),
        ] {
            ui.horizontal(
                |ui| match self.typed.field(ui, (salt, field), label, *value, 72.0) {
                    Typed::Value(v) => *value = v,
                    Typed::Refused(text) => refused.push(format!("\"{text}\" is not a number")),
                    Typed::Unchanged => {}
                },
            );
        }
        ui.horizontal(|ui| {
            ui.label("colour");
            egui::color_picker::color_edit_button_srgb(ui, &mut self.colour)
                .on_hover_text("its colour in the palette, the outlines and material maps");
        });
        if !ui.button("Add material").on_hover_text(hint).clicked() {
            return None;
        }
        match self.material() {
            Ok(made) => Some(made),
            Err(error) => {
                refused.push(error);
                None
            }
        }
    }

    /// The material as typed, checked: a name the library does not use, k ≥ 0, ρ and c_p
    /// positive, all finite.
    fn material(&self) -> Result<Material, String> {
        let name = material::normalise(&self.name);
        if name.is_empty() {
            return Err("give the material a name".into());
        }
        if material::find(&name).is_some() {
            return Err(format!(
                "the library has a material called \"{name}\" already"
            ));
        }
        Material::new(&name, self.conductivity, self.density, self.specific_heat)
            .map(|made| Material {
                colour: Some(self.colour),
                ..made
            })
            .map_err(|e| e.to_string())
    }
}
