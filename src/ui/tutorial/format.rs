//! Numbers of the tutorial panels for people: counts, rough durations, byte counts, and the
//! marks of log-scale axes. Shared by the panels' tables and every kernel's result plots.

use egui_plot::GridMark;

/// A rough duration: `45 ms`, `3.2 s`, `4 min`, `2.5 h`.
pub fn about_seconds(seconds: f64) -> String {
    let two = |value: f64| {
        if value >= 10.0 {
            format!("{value:.0}")
        } else {
            format!("{value:.1}")
        }
    };
    if seconds >= 7200.0 {
        format!("{} h", two(seconds / 3600.0))
    } else if seconds >= 120.0 {
        format!("{} min", two(seconds / 60.0))
    } else if seconds >= 1.0 {
        format!("{} s", two(seconds))
    } else if seconds >= 1e-3 {
        format!("{} ms", two(seconds * 1e3))
    } else {
        format!("{} µs", two(seconds * 1e6))
    }
}

/// Bytes for people: `16 bytes`, `12 MB`, `800 MB`, `1.6 GB`.
pub fn format_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1_000 {
        format!("{bytes} bytes")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.1} GB", b / 1e9)
    }
}

/// Seconds in the unit that suits `largest`: (factor, unit name).
pub fn time_unit(largest: f64) -> (f64, &'static str) {
    if largest >= 1.0 {
        (1.0, "s")
    } else if largest >= 1e-3 {
        (1e3, "ms")
    } else if largest >= 1e-6 {
        (1e6, "µs")
    } else {
        (1e9, "ns")
    }
}

/// A log10 axis mark of a count as the count it stands for (`1k`, `1M`).
pub fn log_count_mark(mark: GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    if (mark.value - mark.value.round()).abs() < 1e-6 {
        format_count(10f64.powf(mark.value).round() as u64)
    } else {
        String::new()
    }
}

pub fn log_seconds_mark(mark: GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    if (mark.value - mark.value.round()).abs() < 1e-6 {
        decade_seconds(mark.value.round() as i32)
    } else {
        String::new()
    }
}

/// `10^exponent` seconds as `100 ms`, `1 µs`, `10 s`.
pub fn decade_seconds(exponent: i32) -> String {
    let (unit, base) = match exponent {
        e if e >= 0 => ("s", 0),
        -3..=-1 => ("ms", -3),
        -6..=-4 => ("µs", -6),
        _ => ("ns", -9),
    };
    let value = 10f64.powi(exponent - base);
    format!("{value} {unit}")
}

/// A log10 axis mark as the number it stands for (`0.01`, `1e-5`).
pub fn log_value_mark(mark: GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    let exponent = mark.value.round();
    if (mark.value - exponent).abs() > 1e-6 {
        String::new()
    } else if (-3.0..=3.0).contains(&exponent) {
        format!("{}", 10f64.powi(exponent as i32))
    } else {
        format!("1e{exponent:.0}")
    }
}

pub use heatlab_engine::session::tutorial::format_count;
