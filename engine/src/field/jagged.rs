//! The jagged heat field of the diffusion tutorial (seed `004`), computed exactly as its NumPy does:
//!
//! ```python
//! field = np.random.default_rng(seed).random(size=(j, k), dtype=np.float32)
//! field = fft.fftshift(fft.fft2(field))
//! radius = 1 + np.sqrt((np.arange(j).reshape(-1, 1) - j // 2) ** 2 + (np.arange(k).reshape(1, -1) - k // 2) ** 2)
//! field = field * (radius ** exponent)
//! field = fft.ifft2(fft.ifftshift(field)) * (radius < cutoff * j)
//! field = field.real * (field.real > np.percentile(field.real, percentile))
//! ```
//!
//! NumPy transforms float32 input in complex128, so the transforms here run in `f64`. The input is
//! real and the filter `radius**exponent` is even in frequency, so the spectrum stays Hermitian and
//! real-to-complex / complex-to-real transforms (half the work) give the same real part.
//! The shifts are folded into the filter's indexing instead of moving data.

use num_complex::Complex64;
use rayon::prelude::*;
use realfft::RealFftPlanner;
use rustfft::FftPlanner;

use super::numpy_rng::NumpyGenerator;
use super::percentile::percentile_linear;
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::memory::{try_filled_vec, try_vec_with_capacity};

/// The parameters of the jagged field, with the notebook's values as defaults.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JaggedParams {
    /// Rows and columns.
    pub size: GridSize,
    /// Seed of `np.random.default_rng`.
    pub seed: u64,
    /// Power of the radial filter, `radius ** exponent` (negative smooths).
    pub exponent: f64,
    /// Cells farther than `cutoff * rows` from the centre are zero.
    pub cutoff: f64,
    /// Values not above this percentile of the field are zero.
    pub percentile: f64,
}

/// The notebook's seed.
pub const DEFAULT_SEED: u64 = 3_966_789;

impl Default for JaggedParams {
    fn default() -> Self {
        Self {
            size: GridSize {
                rows: 2000,
                cols: 2000,
            },
            seed: DEFAULT_SEED,
            exponent: -1.7,
            cutoff: 0.45,
            percentile: 70.0,
        }
    }
}

impl JaggedParams {
    /// Checks every parameter, with a message naming the bad one.
    pub fn validate(&self) -> Result<()> {
        GridSize::new(self.size.rows, self.size.cols)?;
        if !self.exponent.is_finite() {
            return Err(HeatlabError::InvalidInput(format!(
                "exponent must be a finite number, got {}",
                self.exponent
            )));
        }
        if !self.cutoff.is_finite() || self.cutoff < 0.0 {
            return Err(HeatlabError::InvalidInput(format!(
                "cutoff must be a number >= 0, got {}",
                self.cutoff
            )));
        }
        if !(0.0..=100.0).contains(&self.percentile) {
            return Err(HeatlabError::InvalidInput(format!(
                "percentile must be between 0 and 100, got {}",
                self.percentile
            )));
        }
        Ok(())
    }

    /// Bytes of host memory the generation needs at its peak (noise, half spectrum twice,
    /// the real result and a copy for the percentile).
    pub fn host_bytes_needed(&self) -> usize {
        let cells = self.size.cells();
        let half_cells = self.size.rows * (self.size.cols / 2 + 1);
        cells * 4 + 2 * half_cells * 16 + 2 * cells * 8
    }
}

/// Frequency index `u` of an `n`-point transform, as the signed offset that `fftshift` puts
/// at `u + n/2`: the filter is evaluated there so that no data has to move.
fn signed_frequency(u: usize, n: usize) -> i64 {
    if u < n - n / 2 {
        u as i64
    } else {
        u as i64 - n as i64
    }
}

/// NumPy's `radius` for an offset from the centre: `1 + sqrt(di**2 + dj**2)` in float64.
fn radius(di: i64, dj: i64) -> f64 {
    1.0 + ((di * di + dj * dj) as f64).sqrt()
}

/// Generates the jagged field. `progress` is told the fraction done (0..=1) as stages finish.
pub fn generate_jagged(params: &JaggedParams, progress: &(dyn Fn(f32) + Sync)) -> Result<Grid> {
    params.validate()?;
    crate::memory::ensure_host_memory("jagged field generation", params.host_bytes_needed())?;
    let GridSize { rows, cols } = params.size;

    let noise = NumpyGenerator::new(params.seed).random_f32(rows * cols);
    progress(0.1);
    let mut real_planner = RealFftPlanner::<f64>::new();
    let mut spectrum = forward_rows(&mut real_planner, &noise, params.size)?;
    drop(noise);
    progress(0.3);
    filter_columns(&mut spectrum, params.size, params.exponent)?;
    progress(0.6);
    let real = inverse_rows(&mut real_planner, spectrum, params)?;
    progress(0.85);
    let data = keep_above_percentile(&real, params.percentile)?;
    drop(real);
    progress(1.0);
    Grid::from_vec(params.size, data)
}

fn fft_error(error: realfft::FftError) -> HeatlabError {
    HeatlabError::Internal(format!("FFT failed: {error}"))
}

/// Columns of the half spectrum of a field with `cols` columns.
fn half_cols(cols: usize) -> usize {
    cols / 2 + 1
}

/// The forward transform of every row of `noise`, real to half-complex.
fn forward_rows(
    planner: &mut RealFftPlanner<f64>,
    noise: &[f32],
    size: GridSize,
) -> Result<Vec<Complex64>> {
    let GridSize { rows, cols } = size;
    let half = half_cols(cols);
    let row_forward = planner.plan_fft_forward(cols);
    let mut spectrum = try_filled_vec("field's spectrum", rows * half, Complex64::default())?;
    spectrum
        .par_chunks_mut(half)
        .zip(noise.par_chunks(cols))
        .try_for_each_init(
            || (row_forward.make_input_vec(), row_forward.make_scratch_vec()),
            |(input, scratch), (out_row, noise_row)| {
                for (slot, &value) in input.iter_mut().zip(noise_row) {
                    *slot = f64::from(value);
                }
                row_forward.process_with_scratch(input, out_row, scratch)
            },
        )
        .map_err(fft_error)?;
    Ok(spectrum)
}

/// Column transforms, the filter `radius ** exponent` and inverse column transforms, on the
/// transposed half spectrum (`spectrum` holds the rows' transforms before and after).
fn filter_columns(spectrum: &mut [Complex64], size: GridSize, exponent: f64) -> Result<()> {
    let GridSize { rows, cols } = size;
    let half = half_cols(cols);
    let mut columns = try_filled_vec("field's columns", rows * half, Complex64::default())?;
    transpose_into(spectrum, rows, half, &mut columns);
    let mut planner = FftPlanner::<f64>::new();
    let column_forward = planner.plan_fft_forward(rows);
    let column_inverse = planner.plan_fft_inverse(rows);
    columns.par_chunks_mut(rows).enumerate().for_each_init(
        || {
            vec![
                Complex64::new(0.0, 0.0);
                column_forward
                    .get_inplace_scratch_len()
                    .max(column_inverse.get_inplace_scratch_len())
            ]
        },
        |scratch, (v, column)| {
            column_forward.process_with_scratch(column, scratch);
            let dj = signed_frequency(v, cols);
            for (u, value) in column.iter_mut().enumerate() {
                *value *= radius(signed_frequency(u, rows), dj).powf(exponent);
            }
            column_inverse.process_with_scratch(column, scratch);
        },
    );
    transpose_into(&columns, half, rows, spectrum);
    Ok(())
}

/// The inverse transform of every row, half-complex to real, normalised as NumPy's ifft2 is,
/// with the cells farther than `cutoff * rows` from the centre set to zero.
fn inverse_rows(
    planner: &mut RealFftPlanner<f64>,
    mut spectrum: Vec<Complex64>,
    params: &JaggedParams,
) -> Result<Vec<f64>> {
    let GridSize { rows, cols } = params.size;
    let half = half_cols(cols);
    let row_inverse = planner.plan_fft_inverse(cols);
    let scale = 1.0 / (rows as f64 * cols as f64);
    let row_centre = (rows / 2) as i64;
    let col_centre = (cols / 2) as i64;
    let limit = params.cutoff * rows as f64;
    let mut real = try_filled_vec("field in float64", rows * cols, 0.0f64)?;
    real.par_chunks_mut(cols)
        .zip(spectrum.par_chunks_mut(half))
        .enumerate()
        .try_for_each_init(
            || row_inverse.make_scratch_vec(),
            |scratch, (r, (out_row, spectrum_row))| {
                // Hermitian symmetry makes these imaginary parts zero up to rounding;
                // the real part NumPy keeps does not depend on them.
                spectrum_row[0].im = 0.0;
                if cols % 2 == 0 {
                    spectrum_row[half - 1].im = 0.0;
                }
                row_inverse.process_with_scratch(spectrum_row, out_row, scratch)?;
                let di = r as i64 - row_centre;
                for (c, value) in out_row.iter_mut().enumerate() {
                    let inside = radius(di, c as i64 - col_centre) < limit;
                    *value = if inside { *value * scale } else { 0.0 };
                }
                Ok(())
            },
        )
        .map_err(fft_error)?;
    Ok(real)
}

/// `real` in float32, with the values not above its `percentile` set to zero.
fn keep_above_percentile(real: &[f64], percentile: f64) -> Result<Vec<f32>> {
    let mut sorted = try_vec_with_capacity("field's percentile copy", real.len())?;
    sorted.extend_from_slice(real);
    let threshold = percentile_linear(&mut sorted, percentile).unwrap_or(0.0);
    drop(sorted);
    let mut data: Vec<f32> = try_vec_with_capacity("field", real.len())?;
    data.par_extend(
        real.par_iter()
            .map(|&value| if value > threshold { value as f32 } else { 0.0 }),
    );
    Ok(data)
}

#[cfg(test)]
fn transpose(source: &[Complex64], rows: usize, cols: usize) -> Vec<Complex64> {
    let mut out = vec![Complex64::new(0.0, 0.0); rows * cols];
    transpose_into(source, rows, cols, &mut out);
    out
}

/// `out[c][r] = source[r][c]` for a `rows x cols` source, in cache-sized tiles.
fn transpose_into(source: &[Complex64], rows: usize, cols: usize, out: &mut [Complex64]) {
    const TILE: usize = 32;
    out.par_chunks_mut(rows * TILE)
        .enumerate()
        .for_each(|(tile_index, out_block)| {
            let c0 = tile_index * TILE;
            let tile_cols = out_block.len() / rows;
            for r0 in (0..rows).step_by(TILE) {
                let r1 = (r0 + TILE).min(rows);
                for dc in 0..tile_cols {
                    let out_row = &mut out_block[dc * rows..(dc + 1) * rows];
                    for r in r0..r1 {
                        out_row[r] = source[r * cols + c0 + dc];
                    }
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_frequency_matches_fftshift() {
        // np.fft.fftshift(np.arange(4)) == [2, 3, 0, 1]; offsets from n//2 are [-2, -1, 0, 1].
        let even: Vec<i64> = (0..4).map(|u| signed_frequency(u, 4)).collect();
        assert_eq!(even, vec![0, 1, -2, -1]);
        let odd: Vec<i64> = (0..5).map(|u| signed_frequency(u, 5)).collect();
        assert_eq!(odd, vec![0, 1, 2, -2, -1]);
    }

    #[test]
    fn transpose_round_trips() {
        let source: Vec<Complex64> = (0..35).map(|i| Complex64::new(i as f64, 0.0)).collect();
        let once = transpose(&source, 5, 7);
        for r in 0..5 {
            for c in 0..7 {
                assert_eq!(once[c * 5 + r], source[r * 7 + c]);
            }
        }
        let twice = transpose(&once, 7, 5);
        assert_eq!(twice, source);
    }

    #[test]
    fn rejects_bad_parameters() {
        let too_high = JaggedParams {
            percentile: 120.0,
            ..JaggedParams::default()
        };
        assert!(too_high.validate().is_err());
        let not_a_number = JaggedParams {
            cutoff: f64::NAN,
            ..JaggedParams::default()
        };
        assert!(not_a_number.validate().is_err());
    }
}
