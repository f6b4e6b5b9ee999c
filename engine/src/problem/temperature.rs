//! Temperatures as users write them: °C by default, kelvin accepted.

use crate::error::{HeatlabError, Result};

/// 0 °C in kelvin.
pub const ZERO_CELSIUS_IN_KELVIN: f64 = 273.15;

/// Whether `celsius` is a finite temperature at or above absolute zero, and stays finite as
/// the 32-bit float the run steps.
pub fn is_physical(celsius: f64) -> bool {
    fits_f32(celsius) && celsius >= -ZERO_CELSIUS_IN_KELVIN
}

/// Whether `value` is finite, and stays finite as the 32-bit float the run steps.
pub fn fits_f32(value: f64) -> bool {
    value.is_finite() && (value as f32).is_finite()
}

/// A number as a message shows it: `1e39` rather than forty digits.
pub fn shown(value: f64) -> String {
    if value == 0.0 || (1e-4..1e15).contains(&value.abs()) || !value.is_finite() {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}

/// Parses a temperature a file gives as a bare number (°C).
pub fn celsius_number(value: f64) -> Result<f64> {
    parse_celsius(&shown(value))
}

/// Parses "20", "20 C", "20°C", "293.15 K" or "293.15K" into °C.
pub fn parse_celsius(text: &str) -> Result<f64> {
    let trimmed = text.trim();
    let (number, kelvin) = if let Some(number) = trimmed
        .strip_suffix('K')
        .or_else(|| trimmed.strip_suffix('k'))
    {
        (number, true)
    } else {
        let number = trimmed
            .strip_suffix("°C")
            .or_else(|| trimmed.strip_suffix('C'))
            .or_else(|| trimmed.strip_suffix('c'))
            .unwrap_or(trimmed);
        (number, false)
    };
    let value: f64 = number.trim().parse().map_err(|_| {
        HeatlabError::InvalidInput(format!(
            "\"{text}\" is not a temperature (write it as 20, \"20 C\" or \"293.15 K\")"
        ))
    })?;
    let celsius = if kelvin {
        value - ZERO_CELSIUS_IN_KELVIN
    } else {
        value
    };
    if !fits_f32(celsius) {
        return Err(HeatlabError::InvalidInput(format!(
            "temperature \"{text}\" is not finite as the run's 32-bit floats (at most {:e})",
            f32::MAX
        )));
    }
    if !is_physical(celsius) {
        return Err(HeatlabError::InvalidInput(format!(
            "temperature \"{text}\" is below absolute zero (-273.15 °C)"
        )));
    }
    Ok(celsius)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn celsius_and_kelvin() {
        assert_eq!(parse_celsius("20").unwrap(), 20.0);
        assert_eq!(parse_celsius("20 C").unwrap(), 20.0);
        assert_eq!(parse_celsius("-5°C").unwrap(), -5.0);
        assert!((parse_celsius("293.15 K").unwrap() - 20.0).abs() < 1e-12);
        assert!(parse_celsius("-300 C").is_err());
        assert!(parse_celsius("-1 K").is_err());
        assert!(parse_celsius("1e39 C")
            .unwrap_err()
            .to_string()
            .contains("not finite"));
        assert!(parse_celsius("inf").is_err());
        assert!(celsius_number(1e39)
            .unwrap_err()
            .to_string()
            .contains("\"1e39\""));
        assert_eq!(celsius_number(-5.5).unwrap(), -5.5);
        assert!(parse_celsius("warm")
            .unwrap_err()
            .to_string()
            .contains("not a temperature"));
    }
}
