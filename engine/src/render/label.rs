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

/// A simulated time for people, in the unit that fits (µs, ms, s, min or h), as the app's
/// status line writes it: `12.500 s`, `38.25 min`.
pub fn simulated_time(seconds: f64) -> String {
    let magnitude = seconds.abs();
    if magnitude == 0.0 {
        "0 s".into()
    } else if magnitude < 1e-3 {
        format!("{:.3} µs", seconds * 1e6)
    } else if magnitude < 1.0 {
        format!("{:.3} ms", seconds * 1e3)
    } else if magnitude < 600.0 {
        format!("{seconds:.3} s")
    } else if magnitude < 7200.0 {
        format!("{:.2} min", seconds / 60.0)
    } else {
        format!("{:.2} h", seconds / 3600.0)
    }
}

/// A simulated time as people type it (and as [`simulated_time`] writes it): a number and a
/// unit, `30 min`, `2 h`, `1.5e3 s`, `250 ms`, `3 d`; a bare number is seconds. Only a
/// positive, finite time is accepted; the error says what was wrong.
pub fn parse_simulated_time(text: &str) -> crate::Result<f64> {
    let text = text.trim();
    // The unit is the trailing letters ("1.5e3 s": the exponent's e belongs to the number).
    let number_end = text.trim_end_matches(|c: char| c.is_alphabetic()).len();
    let (number, unit) = match text[..number_end].trim() {
        // No number before the letters: "inf", "NaN" or a unit alone.
        "" if text.parse::<f64>().is_ok() => (text, ""),
        number => (number, text[number_end..].trim()),
    };
    let scale = match unit {
        "" | "s" | "sec" | "second" | "seconds" => 1.0,
        "µs" | "us" => 1e-6,
        "ms" => 1e-3,
        "min" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86400.0,
        other => {
            return Err(crate::HeatlabError::InvalidInput(format!(
                "unknown unit \"{other}\": use µs, ms, s, min, h or d"
            )))
        }
    };
    let value: f64 = number.parse().map_err(|_| {
        crate::HeatlabError::InvalidInput(if number.is_empty() {
            "type a time, such as 30 min or 2 h".to_string()
        } else {
            format!("\"{number}\" is not a number")
        })
    })?;
    let seconds = value * scale;
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(crate::HeatlabError::InvalidInput(format!(
            "a time must be positive, got {text}"
        )));
    }
    Ok(seconds)
}

/// A video frame's counter: the simulated time and the step of a heat problem ("t = 12.500 s
/// · step 9470"), the step alone of the tutorial's dimensionless plate ("step 9470").
pub fn frame_counter(step: u64, seconds: Option<f64>) -> String {
    match seconds {
        Some(seconds) => format!("t = {} · step {step}", simulated_time(seconds)),
        None => format!("step {step}"),
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

    #[test]
    fn frame_counters_carry_a_heat_problems_simulated_time() {
        assert_eq!(frame_counter(9470, None), "step 9470");
        assert_eq!(frame_counter(25, Some(12.5)), "t = 12.500 s · step 25");
        assert_eq!(
            frame_counter(9470, Some(38.0 * 60.0)),
            "t = 38.00 min · step 9470"
        );
        assert_eq!(
            frame_counter(1, Some(220.0 * 3600.0)),
            "t = 220.00 h · step 1"
        );
        assert_eq!(frame_counter(0, Some(0.0)), "t = 0 s · step 0");
        assert_eq!(simulated_time(0.0025), "2.500 ms");
        assert_eq!(simulated_time(2e-5), "20.000 µs");
    }

    #[test]
    fn typed_times_read_in_their_units_and_bad_ones_say_why() {
        assert_eq!(parse_simulated_time("30 min").unwrap(), 1800.0);
        assert_eq!(parse_simulated_time(" 2h ").unwrap(), 7200.0);
        assert_eq!(parse_simulated_time("90").unwrap(), 90.0);
        assert_eq!(parse_simulated_time("250 ms").unwrap(), 0.25);
        assert_eq!(parse_simulated_time("1.5e3 s").unwrap(), 1500.0);
        assert_eq!(parse_simulated_time("3 d").unwrap(), 259_200.0);
        for seconds in [0.000_25, 0.25, 12.5, 1800.0, 86_400.0] {
            let written = simulated_time(seconds);
            let read = parse_simulated_time(&written).unwrap();
            assert!((read - seconds).abs() <= 1e-3 * seconds, "{written}");
        }
        let said = |text: &str| parse_simulated_time(text).unwrap_err().to_string();
        assert!(said("10 weeks").contains("unknown unit \"weeks\""));
        assert!(
            said("ten min").contains("\"ten\" is not a number"),
            "{}",
            said("ten min")
        );
        assert!(said("").contains("type a time"));
        assert!(said("-5 s").contains("must be positive"));
        assert!(said("0").contains("must be positive"));
        assert!(said("inf").contains("must be positive"));
        assert!(said("min").contains("type a time"));
    }
}
