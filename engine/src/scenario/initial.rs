//! The temperature a scenario starts from.

use std::path::Path;

use super::file::{InitialSection, TemperatureText};
use crate::error::{HeatlabError, Result};
use crate::field::{generate_jagged, JaggedParams, DEFAULT_SEED};
use crate::grid::{Grid, GridSize};
use crate::import::{import_field, LuminanceRange};
use crate::problem::temperature::{celsius_number, parse_celsius};

/// The default start: room temperature.
const ROOM_TEMPERATURE: f64 = 20.0;

/// The default range of an image's black and white, or of the jagged field's extremes, °C.
const DEFAULT_RANGE: [f64; 2] = [0.0, 100.0];

/// The temperature `text` gives, an error naming the key `what` when it is not one.
fn celsius(text: &TemperatureText, what: &str) -> Result<f64> {
    match text {
        TemperatureText::Celsius(c) => celsius_number(*c),
        TemperatureText::Text(t) => parse_celsius(t),
    }
    .map_err(|e| HeatlabError::InvalidInput(format!("[initial] {what}: {e}")))
}

fn range(section: &InitialSection) -> Result<[f64; 2]> {
    match &section.range {
        Some([low, high]) => Ok([celsius(low, "range")?, celsius(high, "range")?]),
        None => Ok(DEFAULT_RANGE),
    }
}

/// Refuses a field with NaN or infinite values; `what` says where it came from.
fn finite(field: Grid, what: impl FnOnce() -> String) -> Result<Grid> {
    match field.non_finite_count() {
        0 => Ok(field),
        count => Err(HeatlabError::InvalidInput(format!(
            "[initial] {} comes out non-finite in {count} of {} cells",
            what(),
            field.size().cells()
        ))),
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
        let field = finite(field, || {
            format!(
                "jagged with exponent = {} (the spectrum's power; the tutorial's is -1.7, a large \
                 one overflows)",
                params.exponent
            )
        })?;
        let range = range(section)?;
        return finite(scaled(field, range), || {
            "jagged scaled onto range".to_string()
        });
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
        return finite(field, || path.display().to_string());
    }
    let temperature = match &section.temperature {
        Some(t) => celsius(t, "temperature")?,
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
