//! Numbers as colorbars and readouts show them.

/// A value as a colorbar label: four significant digits, in scientific notation when very
/// small or large.
pub fn format_value(value: f32) -> String {
    let magnitude = value.abs();
    if value == 0.0 {
        "0".into()
    } else if !(1e-3..1e4).contains(&magnitude) {
        format!("{value:.2e}")
    } else {
        let decimals = (3 - magnitude.log10().floor() as i32).clamp(0, 6) as usize;
        let text = format!("{value:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    }
}

/// A hovered value with enough digits to compare neighbours.
pub fn readout_value(value: f32) -> String {
    let magnitude = value.abs();
    if value == 0.0 || (1e-2..1e4).contains(&magnitude) {
        format!("{value:.6}")
    } else {
        format!("{value:.5e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_short_and_readable() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(0.5), "0.5");
        assert_eq!(format_value(1.25), "1.25");
        assert_eq!(format_value(-0.0123), "-0.0123");
        assert_eq!(format_value(123.4567), "123.5");
        assert_eq!(format_value(2.5e-5), "2.50e-5");
    }
}
