//! The scenario file as written: TOML, read with serde. Every field is checked later, in
//! [`super::build`], so that one pass can name every error.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A temperature as written: a number (°C) or text such as "20 C" or "293.15 K".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TemperatureText {
    /// °C.
    Celsius(f64),
    /// "20 C", "20°C", "293.15 K".
    Text(String),
}

/// A whole scenario file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// A short title.
    #[serde(default)]
    pub title: String,
    /// What to look for (shown beside the problem).
    #[serde(default)]
    pub description: String,
    /// Size and spacing.
    pub grid: GridSection,
    /// Time step, duration and outputs.
    #[serde(default)]
    pub time: TimeSection,
    /// Materials of the user's own, beside the library's.
    #[serde(default)]
    pub materials: Vec<MaterialSection>,
    /// The material that fills the grid before the map and the parts.
    pub base: PartSection,
    /// A material map: an image whose colours name materials or parts, or a `.npy` of indices.
    #[serde(default)]
    pub map: Option<MapSection>,
    /// Parts painted over the base and the map, in order.
    #[serde(default)]
    pub parts: Vec<PartSection>,
    /// The temperature at the start.
    #[serde(default)]
    pub initial: InitialSection,
    /// The four sides (insulated where not given).
    #[serde(default)]
    pub sides: SidesSection,
    /// `[[thermostat]]`: heaters switched by a probe's temperature.
    #[serde(default, rename = "thermostat", skip_serializing_if = "Vec::is_empty")]
    pub thermostats: Vec<super::thermostat::ThermostatSection>,
}

/// `[grid]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSection {
    /// Rows (cells from top to bottom).
    pub rows: usize,
    /// Columns (cells from left to right).
    pub cols: usize,
    /// The side of a cell, m.
    pub spacing: f64,
}

/// `[time]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeSection {
    /// The time step as a fraction of the stability limit (default 0.9).
    pub step_fraction: Option<f64>,
    /// The time step in seconds (refused above the stability limit).
    pub step: Option<f64>,
    /// Seconds `heatlab run --scenario` simulates.
    pub duration: Option<f64>,
    /// Seconds between saved frames.
    pub output_every: Option<f64>,
}

/// `[[materials]]`: a material of the user's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialSection {
    /// Its name.
    pub name: String,
    /// W/(m·K).
    pub conductivity: f64,
    /// kg/m³.
    pub density: f64,
    /// J/(kg·K).
    pub specific_heat: f64,
    /// Its colour in the palette and in material maps, `"#rrggbb"` (default: one made from
    /// the name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

/// A rectangle or an ellipse's bounding box, m from the top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    /// Left edge, m.
    pub x: f64,
    /// Top edge, m.
    pub y: f64,
    /// Width, m.
    pub width: f64,
    /// Height, m.
    pub height: f64,
}

/// A heater as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaterSection {
    /// The part's whole power, W per metre of depth.
    pub power: Option<f64>,
    /// Power density, W/m³.
    pub power_density: Option<f64>,
    /// Whether it heats at the start (default true).
    pub on: Option<bool>,
}

/// `[base]` and `[[parts]]`: a material, maybe a heater or held, painted where its shape is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartSection {
    /// The name the map's colours and people use (default: the material's).
    pub name: Option<String>,
    /// A library material or one of `[[materials]]`.
    pub material: String,
    /// Where: a rectangle.
    pub rect: Option<Region>,
    /// Where: an ellipse inside this box.
    pub ellipse: Option<Region>,
    /// A heat source in the part.
    pub heater: Option<HeaterSection>,
    /// Held at this temperature.
    pub held: Option<TemperatureText>,
    /// Its cells start at this temperature (over `[initial]`).
    pub initial: Option<TemperatureText>,
}

/// `[map]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapSection {
    /// A PNG whose colours name materials or parts (relative to the scenario file).
    pub image: Option<String>,
    /// `"#rrggbb"` to a material's or a part's name; every colour in the image must be named.
    #[serde(default)]
    pub colors: BTreeMap<String, String>,
    /// A `.npy` of integer indices into `names`.
    pub npy: Option<String>,
    /// The names of the `.npy`'s indices.
    #[serde(default)]
    pub names: Vec<String>,
}

/// `[initial]`: one of a uniform temperature, the jagged field scaled to a range, a `.npy` or
/// an image's luminance mapped onto a range.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialSection {
    /// Everywhere this temperature (default 20 °C).
    pub temperature: Option<TemperatureText>,
    /// The tutorial's jagged field, scaled from its lowest to highest value onto `range`.
    pub jagged: Option<JaggedSection>,
    /// A `.npy` of temperatures, °C.
    pub npy: Option<String>,
    /// An image whose black and white are `range`.
    pub image: Option<String>,
    /// The temperatures of black and white (image) or of the jagged field's extremes.
    pub range: Option<[TemperatureText; 2]>,
}

/// `[initial.jagged]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaggedSection {
    /// NumPy's seed (default: the tutorial's).
    pub seed: Option<u64>,
    /// The filter's exponent (default -1.7).
    pub exponent: Option<f64>,
    /// The cutoff (default 0.45).
    pub cutoff: Option<f64>,
    /// The percentile (default 70).
    pub percentile: Option<f64>,
}

/// `[sides]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SidesSection {
    /// Column 0.
    pub left: Option<SideSection>,
    /// The last column.
    pub right: Option<SideSection>,
    /// Row 0.
    pub top: Option<SideSection>,
    /// The last row.
    pub bottom: Option<SideSection>,
}

/// One side as written: `{ type = "fixed", temperature = "100 C" }` and so on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideSection {
    /// The kind, by one of the names of [`crate::problem::SideKind::ALL`] (any case).
    #[serde(rename = "type")]
    pub kind: String,
    /// For fixed.
    pub temperature: Option<TemperatureText>,
    /// For flux: W/m² into the plate.
    pub flux: Option<f64>,
    /// For convective: W/(m²·K).
    pub h: Option<f64>,
    /// For convective: the fluid's temperature.
    pub ambient: Option<TemperatureText>,
}
