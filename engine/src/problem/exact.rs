//! Closed-form solutions of classic heat problems, in `f64`: the plane wall cooling through
//! convective faces, a Gaussian hot spot spreading, the rectangle with one hot side.
//!
//! They are the exact answers both the gallery's scenarios (`scenario::exact`, which takes their
//! values from a problem) and `verify --physics` (`verify::physics`) measure fields against.

use std::f64::consts::PI;

/// The first `count` roots of `λ tan λ = biot`, one in each interval `((n-1)π, (n-1)π + π/2)`.
pub fn slab_eigenvalues(biot: f64, count: usize) -> Vec<f64> {
    (0..count)
        .map(|n| {
            // λ tan λ - Bi rises from -Bi to +∞ over the interval: bisection always finds it.
            let mut low = n as f64 * PI;
            let mut high = low + 0.5 * PI;
            for _ in 0..200 {
                let middle = 0.5 * (low + high);
                if middle * middle.tan() - biot < 0.0 {
                    low = middle;
                } else {
                    high = middle;
                }
            }
            0.5 * (low + high)
        })
        .collect()
}

/// The cooling of a plane wall of half-thickness `L` through convective faces (Biot number
/// `Bi = hL/k`) from a uniform start: `θ = (T - T∞)/(T_i - T∞)` at the distance `x/L` from the
/// mid-plane and Fourier number `Fo = α t / L²`, as the series
/// `θ = Σ C_n exp(-λ_n² Fo) cos(λ_n x/L)`, `C_n = 4 sin λ_n / (2λ_n + sin 2λ_n)`.
#[derive(Debug, Clone, PartialEq)]
pub struct SlabSeries {
    eigenvalues: Vec<f64>,
    coefficients: Vec<f64>,
}

impl SlabSeries {
    /// Terms enough for `Fo` ≥ 0.01 to `f64` precision (`exp(-(40π)² 0.01)` is below 1e-68).
    const TERMS: usize = 40;

    /// The series for Biot number `biot`.
    pub fn new(biot: f64) -> Self {
        let eigenvalues = slab_eigenvalues(biot, Self::TERMS);
        let coefficients = eigenvalues
            .iter()
            .map(|&l| 4.0 * l.sin() / (2.0 * l + (2.0 * l).sin()))
            .collect();
        Self {
            eigenvalues,
            coefficients,
        }
    }

    /// The eigenvalues `λ_n`.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// The coefficients `C_n`.
    pub fn coefficients(&self) -> &[f64] {
        &self.coefficients
    }

    /// `θ` at `x/L` (−1 to 1) and Fourier number `fourier`.
    pub fn theta(&self, x_over_l: f64, fourier: f64) -> f64 {
        self.eigenvalues
            .iter()
            .zip(&self.coefficients)
            .map(|(&l, &c)| c * (-l * l * fourier).exp() * (l * x_over_l).cos())
            .sum()
    }
}

/// A Gaussian hot spot of peak rise `amplitude` and width `sigma0` (m) at time 0 in an infinite
/// plate of diffusivity `alpha`: at time `t` and distance `r` from its centre the rise is
/// `amplitude σ0²/σ² exp(-r²/(2σ²))` with `σ² = σ0² + 2αt` (the heat it holds stays the same).
pub fn gaussian_rise(amplitude: f64, sigma0: f64, alpha: f64, t: f64, r: f64) -> f64 {
    let variance = sigma0 * sigma0 + 2.0 * alpha * t;
    amplitude * sigma0 * sigma0 / variance * (-r * r / (2.0 * variance)).exp()
}

/// The steady temperature in a `width` × `height` rectangle whose side at `y = height` is at 1
/// and whose other three sides are at 0, at `(x, y)` (y from the cold side opposite the hot
/// one): `θ = Σ_{n odd} 4/(nπ) sin(nπx/W) sinh(nπy/W) / sinh(nπH/W)`.
///
/// The terms fall off as `exp(-nπ(H - y)/W)`; the sum stops when that bound is below 1e-17
/// (at least 10⁶ terms are never needed for points half a cell of 1/1000 or more inside).
pub fn rectangle_theta(width: f64, height: f64, x: f64, y: f64) -> f64 {
    let mut sum = 0.0;
    let mut n = 1u32;
    loop {
        let k = f64::from(n) * PI / width;
        // sinh(ky)/sinh(kH) = exp(k(y-H)) (1 - exp(-2ky)) / (1 - exp(-2kH)), without overflow.
        let decay = (k * (y - height)).exp();
        let ratio = decay * (-(-2.0 * k * y).exp_m1()) / (-(-2.0 * k * height).exp_m1());
        sum += 4.0 / (f64::from(n) * PI) * (k * x).sin() * ratio;
        if decay < 1e-17 || n > 2_000_000 {
            return sum;
        }
        n += 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_eigenvalues_match_the_textbook_table() {
        // Incropera et al., Table 5.1: Bi = 1.0 gives λ1 = 0.8603, C1 = 1.1191;
        // Bi = 0.1 gives λ1 = 0.3111, C1 = 1.0161.
        let one = SlabSeries::new(1.0);
        assert!((one.eigenvalues()[0] - 0.8603).abs() < 1e-4);
        assert!((one.coefficients()[0] - 1.1191).abs() < 1e-4);
        let tenth = SlabSeries::new(0.1);
        assert!((tenth.eigenvalues()[0] - 0.3111).abs() < 1e-4);
        assert!((tenth.coefficients()[0] - 1.0161).abs() < 1e-4);
        for (n, l) in one.eigenvalues().iter().enumerate() {
            assert!((l * l.tan() - 1.0).abs() < 1e-9, "root {n}: {l}");
        }
    }

    #[test]
    fn slab_series_starts_uniform_and_decays() {
        let series = SlabSeries::new(1.0);
        // At Fo = 0.01 the centre has not felt the faces yet.
        assert!((series.theta(0.0, 0.01) - 1.0).abs() < 1e-9);
        // One term suffices for Fo > 0.2 (Incropera, eq. 5.43) to about 0.2 %.
        let one_term = 1.1191 * (-0.8603f64 * 0.8603 * 0.5).exp();
        assert!((series.theta(0.0, 0.5) - one_term).abs() < 2e-3);
    }

    #[test]
    fn gaussian_keeps_its_heat() {
        // ∫ rise dA = 2π σ² × peak, the same at every time.
        let heat = |t: f64| {
            let variance = 1e-4 + 2.0 * 1e-5 * t;
            2.0 * PI * variance * gaussian_rise(1.0, 1e-2, 1e-5, t, 0.0)
        };
        assert!((heat(0.0) - heat(3.0)).abs() < 1e-15);
    }

    #[test]
    fn rectangle_series_gives_a_quarter_at_the_centre_of_a_square() {
        // By symmetry the four problems with one hot side add up to 1 everywhere.
        assert!((rectangle_theta(1.0, 1.0, 0.5, 0.5) - 0.25).abs() < 1e-12);
        assert!(rectangle_theta(1.0, 1.0, 0.5, 1e-3).abs() < 1e-2);
        assert!((rectangle_theta(1.0, 1.0, 0.5, 1.0 - 1e-3) - 1.0).abs() < 1e-2);
    }
}
