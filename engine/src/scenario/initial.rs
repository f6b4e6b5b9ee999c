//! The temperature a scenario starts from.

use std::path::Path;

use super::file::{InitialSection, TemperatureText};
use crate::error::{HeatlabError, Result};
use crate::field::{generate_jagged, JaggedParams, DEFAULT_SEED};
use crate::grid::{Grid, GridSize};
use crate::import::{import_field, LuminanceRange};
use crate::problem::temperature::parse_celsius;

/// The default start: room temperature.
const ROOM_TEMPERATURE: f64 = 20.0;

/// The default range of an image's black and white, or of the jagged field's extremes, °C.
const DEFAULT_RANGE: [f64; 2] = [0.0, 100.0];

fn celsius(text: &TemperatureText) -> Result<f64> {
    match text {
        TemperatureText::Celsius(c) => parse_celsius(&c.to_string()),
        TemperatureText::Text(t) => parse_celsius(t),
    }
}

fn range(section: &InitialSection) -> Result<[f64; 2]> {
    match &section.range {
        Some([low, high]) => Ok([celsius(low)?, celsius(high)?]),
        None => Ok(DEFAULT_RANGE),
    }
}

/// The initial field `section` describes, for a grid of `size` (°C).
pub fn initial_field(section: &InitialSection, folder: &Path, size: GridSize) -> Result<Grid> {
    let given = [
        section.temperature.is_some(),
        section.jagged.is_some(),
        section.npy.is_some(),
        section.image.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() > 1 {
        return Err(HeatlabError::InvalidInput(
            "[initial] takes one of temperature, jagged, npy and image".into(),
        ));
    }
    if let Some(jagged) = &section.jagged {
        let params = JaggedParams {
            size,
            seed: jagged.seed.unwrap_or(DEFAULT_SEED),
            exponent: jagged.exponent.unwrap_or(-1.7),
            cutoff: jagged.cutoff.unwrap_or(0.45),
            percentile: jagged.percentile.unwrap_or(70.0),
        };
        let field = generate_jagged(&params, &|_| {})?;
        return Ok(scaled(field, range(section)?));
    }
    let file = section.npy.as_ref().or(section.image.as_ref());
    if let Some(file) = file {
        let path = folder.join(file);
        let [black, white] = range(section)?;
        let luminance = LuminanceRange::new(black as f32, white as f32)?;
        let (field, _) = import_field(&path, luminance)?;
        if field.size() != size {
            return Err(HeatlabError::InvalidInput(format!(
                "[initial] {} is {} but the grid is {size}",
                path.display(),
                field.size()
            )));
        }
        return Ok(field);
    }
    let temperature = match &section.temperature {
        Some(t) => celsius(t)?,
        None => ROOM_TEMPERATURE,
    };
    let mut field = Grid::try_zeros(size)?;
    field.as_mut_slice().fill(temperature as f32);
    Ok(field)
}

/// `field` mapped linearly from its lowest..highest value onto `low..high`.
fn scaled(mut field: Grid, [low, high]: [f64; 2]) -> Grid {
    let (min, max) = field
        .as_slice()
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let span = f64::from(max - min);
    for value in field.as_mut_slice() {
        let t = if span > 0.0 {
            f64::from(*value - min) / span
        } else {
            0.0
        };
        *value = (low + t * (high - low)) as f32;
    }
    field
}
