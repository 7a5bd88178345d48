//! Fractional Gaussian noise (FGN): generators, Hurst estimators, and the
//! truncated rate sequence of the video model of ATM Forum contribution
//! 97-0177R2.
//!
//! FGN with Hurst parameter `H` in `(0, 1)` is the stationary Gaussian
//! sequence with unit variance and autocovariance
//! `γ(k) = ½(|k+1|^{2H} − 2|k|^{2H} + |k−1|^{2H})` ([`autocovariance`]); for
//! `H > ½` it is long-range dependent. Two generators:
//!
//! * [`paxson`]: Paxson's FFT method (V. Paxson, "Fast, approximate synthesis
//!   of fractional Gaussian noise for generating self-similar network
//!   traffic", ACM CCR 27(5), 1997), with his approximation of the spectral
//!   density ([`spectral_density`]). Approximate, normalised to zero mean and
//!   unit variance; the method the study cites.
//! * [`davies_harte`]: exact FGN by circulant embedding (R. B. Davies and
//!   D. S. Harte, "Tests for Hurst effect", Biometrika 74(1), 1987).
//!
//! Three estimators of `H`, plainly implemented, for tests and users:
//! [`variance_time_slope`], [`rescaled_range_hurst`] and [`whittle_hurst`].
//!
//! [`RateSequence`] is what a video source consumes: the study's rates, one
//! per inter-MPCR interval, generated from one long normalised block, with
//! the values outside `[0, peak]` skipped.
//!
//! Both generators use the `realfft` crate for their transforms (any length:
//! it is not restricted to powers of two). Everything is driven by the
//! [`SimRng`] passed in, so the same stream gives the same numbers, bit for
//! bit, on the same build and machine. (`rustfft`, under `realfft`, picks
//! an AVX, SSE, NEON or scalar kernel at run time, and `exp`, `ln`, `sin` and
//! `powf` come from the platform's math library; either may differ in the
//! last bit, so two different CPUs or platforms are not guaranteed
//! bit-identical blocks.)
//!
//! What was checked, and against what (2026-11):
//! * the constants of Paxson's `B̃` (three terms, `8πH`, `1.0002 − 0.000134λ`,
//!   `2^(−7.65H−7.4)`) against two public C versions of Paxson's code:
//!   C. Schuler's `FGN_B_est_adj` / `FGN_spectrum` ("derived from software
//!   contributed to Berkeley by Vern Paxson"; the `FGN_spectrum` that
//!   A. B. Dieker's `paxson.c` calls) and testh's
//!   `Paxson_fGn_BEstAdj` / `Paxson_fGn_Spectrum` (`diogo-fernan/testh`,
//!   `src/gen.c`); the frequencies `πi/(n/2)` and `Γ` via `lgamma` agree;
//! * [`spectral_density`] against a brute-force aliasing sum (tests, and an
//!   independent Python computation: relative error below 1e-7 for
//!   `λ ≤ 0.5`, up to 4e-5 near `π` at `H = 0.9`), and its normalisation by
//!   integrating it to `γ(0)`, `γ(1)`, `γ(2)`;
//! * the Davies–Harte structure and scaling against Zhou & Stoev's MATLAB
//!   `ffgn.m`, and the embedding by inverting its eigenvalues back to `γ(k)`;
//! * the generators statistically against bands set around reference
//!   estimates from an independent numpy implementation (docs/models/sources.md,
//!   "Test vectors"), see the tests.
//!
//! ```
//! use atmlab_engine::RngStreams;
//! use atmlab_engine::fgn::{self, RateParams};
//!
//! let mut rng = RngStreams::new(1, 0).stream("video:0");
//! let x = fgn::paxson(1 << 12, 0.8, &mut rng).unwrap();
//! assert_eq!(x.len(), 4096);
//!
//! // The study's (5, 5) Mbit/s source: rates outside [0, 15] are skipped.
//! let params = RateParams::new(5.0, 5.0, 15.0, 0.8, 1 << 12);
//! let mut rates = fgn::RateSequence::new(&params, &mut rng).unwrap();
//! let first = rates.next().unwrap();
//! assert!((0.0..=15.0).contains(&first));
//! assert!((params.expected_mean() - 6.148).abs() < 5e-4);
//! ```

use std::f64::consts::PI;
use std::fmt;

use rand::RngExt;
use rand_distr::{Distribution, Exp1, StandardNormal};
use realfft::RealFftPlanner;
use realfft::num_complex::Complex;

use crate::rng::SimRng;

#[cfg(test)]
mod tests;

/// Why a generator, an estimator or a rate sequence refused its input.
#[derive(Clone, Debug, PartialEq)]
pub enum FgnError {
    /// The Hurst parameter is not in the open interval `(0, 1)`.
    InvalidHurst(f64),
    /// The series is too short: `len` values given or asked for, `min` needed.
    TooShort {
        /// The length given.
        len: usize,
        /// The least length accepted.
        min: usize,
    },
    /// Paxson's method needs an even length (its spectrum is built on the
    /// Fourier frequencies `2πj/n`, `j = 1..n/2`, with a real Nyquist term).
    OddLength(usize),
    /// The circulant embedding has a negative eigenvalue, so it is not a
    /// covariance (never for FGN; a guard against misuse and bugs).
    NegativeEigenvalue {
        /// Index `k` of the eigenvalue, `0 ≤ k ≤ m/2`.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A parameter is out of its domain.
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// The input series holds a NaN or an infinity.
    NonFinite,
    /// The series has zero variance, so it cannot be normalised or analysed.
    ZeroVariance,
    /// An estimator was given an unusable set of block sizes.
    InvalidBlockSizes(String),
    /// The FFT library reported an error (a bug: the buffers are sized by
    /// its own planner).
    Fft(String),
}

impl fmt::Display for FgnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FgnError::InvalidHurst(h) => write!(f, "Hurst parameter {h} is not in (0, 1)"),
            FgnError::TooShort { len, min } => {
                write!(f, "series length {len} is too short (at least {min} needed)")
            }
            FgnError::OddLength(n) => write!(f, "Paxson's method needs an even length, got {n}"),
            FgnError::NegativeEigenvalue { index, value } => {
                write!(f, "circulant embedding has a negative eigenvalue {value} at index {index}")
            }
            FgnError::InvalidParameter { name, value } => {
                write!(f, "parameter {name} = {value} is out of its domain")
            }
            FgnError::NonFinite => write!(f, "the series holds a NaN or an infinity"),
            FgnError::ZeroVariance => write!(f, "the series has zero variance"),
            FgnError::InvalidBlockSizes(why) => write!(f, "invalid block sizes: {why}"),
            FgnError::Fft(why) => write!(f, "FFT error: {why}"),
        }
    }
}

impl std::error::Error for FgnError {}

fn fft_error(e: realfft::FftError) -> FgnError {
    FgnError::Fft(e.to_string())
}

/// Accepts `H` in the open interval `(0, 1)` (NaN is rejected).
fn check_hurst(hurst: f64) -> Result<(), FgnError> {
    if hurst > 0.0 && hurst < 1.0 { Ok(()) } else { Err(FgnError::InvalidHurst(hurst)) }
}

/// The shortest series a generator produces.
const MIN_LEN: usize = 2;

fn check_len(n: usize, min: usize) -> Result<(), FgnError> {
    if n >= min { Ok(()) } else { Err(FgnError::TooShort { len: n, min }) }
}

fn check_finite(x: &[f64]) -> Result<(), FgnError> {
    if x.iter().all(|v| v.is_finite()) { Ok(()) } else { Err(FgnError::NonFinite) }
}

// ---------------------------------------------------------------------------
// Special functions
// ---------------------------------------------------------------------------

/// Lanczos coefficients for `g = 7`, nine terms (P. Godfrey's set, as
/// reproduced in the Wikipedia article "Lanczos approximation"); relative
/// error about 1e-15 for real arguments. Checked in the tests against
/// `Γ(1.5) = √π/2`, `Γ(2.5) = 3√π/4` and integer values.
const LANCZOS_G: f64 = 7.0;
const LANCZOS_COEF: [f64; 9] = [
    0.999_999_999_999_809_9,
    676.520_368_121_885_1,
    -1_259.139_216_722_402_8,
    771.323_428_777_653_1,
    -176.615_029_162_140_6,
    12.507_343_278_686_905,
    -0.138_571_095_265_720_12,
    9.984_369_578_019_572e-6,
    1.505_632_735_149_311_6e-7,
];

/// `Γ(x)` for `x ≥ ½` by the Lanczos approximation (used for `Γ(2H+1)`,
/// `x` in `(1, 3)`).
fn gamma(x: f64) -> f64 {
    let x = x - 1.0;
    let t = x + LANCZOS_G + 0.5;
    let series = LANCZOS_COEF.iter().enumerate().skip(1).fold(LANCZOS_COEF[0], |acc, (i, c)| acc + c / (x + i as f64));
    (2.0 * PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * series
}

/// Abramowitz & Stegun, Handbook of Mathematical Functions (1964), formula
/// 7.1.26: `erf(x) ≈ 1 − (a1 t + … + a5 t^5) e^{−x²}`, `t = 1/(1 + p x)`,
/// absolute error at most 1.5e-7 for `x ≥ 0`. Enough for the truncation
/// fractions and means of the rate model (quoted to 3–4 digits).
const AS_P: f64 = 0.327_591_1;
const AS_A: [f64; 5] = [0.254_829_592, -0.284_496_736, 1.421_413_741, -1.453_152_027, 1.061_405_429];

/// `erfc(x)`, absolute error at most 1.5e-7 (A&S 7.1.26; `erfc(−x) = 2 − erfc(x)`).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + AS_P * z);
    let poly = AS_A.iter().rev().fold(0.0, |acc, a| (acc + a) * t);
    let tail = poly * (-z * z).exp();
    if x >= 0.0 { tail } else { 2.0 - tail }
}

/// The standard normal distribution function `Φ(x)`, absolute error at most
/// 1e-7 (see [`erfc`]).
fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The standard normal density `φ(x)`.
fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * PI).sqrt()
}

// ---------------------------------------------------------------------------
// FGN covariance and spectral density
// ---------------------------------------------------------------------------

/// The autocovariance of unit-variance FGN at lag `k`:
/// `γ(k) = ½(|k+1|^{2H} − 2|k|^{2H} + |k−1|^{2H})` (so `γ(0) = 1`). For
/// `H = 0.8`: 0.516, 0.368, 0.253, 0.191 at lags 1, 2, 5, 10.
pub fn autocovariance(k: usize, hurst: f64) -> f64 {
    let k = k as f64;
    let two_h = 2.0 * hurst;
    0.5 * ((k + 1.0).powf(two_h) - 2.0 * k.powf(two_h) + (k - 1.0).abs().powf(two_h))
}

/// Paxson's correction of his three-term estimate of `B(λ;H)`: the factor
/// `1.0002 − 0.000134 λ` (Paxson 1997; same constants in V. Paxson's code as
/// carried by C. Schuler's `FGN_B_est_adj` and by testh's
/// `Paxson_fGn_BEstAdj`, checked 2026-11).
const B_ADJ_INTERCEPT: f64 = 1.0002;
/// Slope of the correction factor, per radian.
const B_ADJ_SLOPE: f64 = 0.000_134;
/// The offset `2^(−7.65 H − 7.4)` subtracted from the estimate: its
/// exponent's slope in `H` and intercept (same sources).
const B_OFFSET_SLOPE: f64 = -7.65;
/// See [`B_OFFSET_SLOPE`].
const B_OFFSET_INTERCEPT: f64 = -7.4;

/// One frequency `λ` in `(0, π]` with the `H`-independent quantities the
/// spectral density needs, so that evaluating it for many `H` (Whittle's
/// search) costs exponentials, not powers.
#[derive(Clone, Copy, Debug)]
struct Frequency {
    lambda: f64,
    /// `1 − cos λ`, computed as `2 sin²(λ/2)` to avoid cancellation at small λ.
    one_minus_cos: f64,
    ln_lambda: f64,
    /// `a_k = 2πk + λ`, `b_k = 2πk − λ` for `k = 1..4`, with their logarithms.
    a: [f64; 4],
    b: [f64; 4],
    ln_a: [f64; 4],
    ln_b: [f64; 4],
}

impl Frequency {
    fn new(lambda: f64) -> Frequency {
        let lambda = lambda.abs();
        let a: [f64; 4] = std::array::from_fn(|i| 2.0 * PI * (i + 1) as f64 + lambda);
        let b: [f64; 4] = std::array::from_fn(|i| 2.0 * PI * (i + 1) as f64 - lambda);
        let half_sin = (0.5 * lambda).sin();
        Frequency {
            lambda,
            one_minus_cos: 2.0 * half_sin * half_sin,
            ln_lambda: lambda.ln(),
            a,
            b,
            ln_a: a.map(f64::ln),
            ln_b: b.map(f64::ln),
        }
    }

    /// Paxson's adjusted estimate `B̃(λ;H)` of
    /// `B(λ;H) = Σ_{j≥1} (2πj + λ)^d + (2πj − λ)^d`, `d = −2H − 1`:
    /// `B3 = Σ_{k=1..3}(a_k^d + b_k^d) + (a_3^d' + b_3^d' + a_4^d' + b_4^d')/(8πH)`
    /// with `d' = −2H`, then `B̃ = (1.0002 − 0.000134 λ)(B3 − 2^(−7.65H − 7.4))`.
    fn b_adjusted(&self, hurst: f64) -> f64 {
        let d = -2.0 * hurst - 1.0;
        // a^d for k = 1..4; a^d' = a^d · a since d' = d + 1.
        let pa: [f64; 4] = self.ln_a.map(|l| (d * l).exp());
        let pb: [f64; 4] = self.ln_b.map(|l| (d * l).exp());
        let sum1: f64 = (0..3).map(|k| pa[k] + pb[k]).sum();
        let sum2: f64 = (2..4).map(|k| pa[k] * self.a[k] + pb[k] * self.b[k]).sum();
        let b3 = sum1 + sum2 / (8.0 * PI * hurst);
        let offset = (B_OFFSET_SLOPE * hurst + B_OFFSET_INTERCEPT).exp2();
        (B_ADJ_INTERCEPT - B_ADJ_SLOPE * self.lambda) * (b3 - offset)
    }

    /// `f̂(λ;H) = A(λ;H)[λ^{−2H−1} + B̃(λ;H)]` with the prefactor
    /// `2 sin(πH) Γ(2H+1)` given as `scale`.
    fn density(&self, hurst: f64, scale: f64) -> f64 {
        let d = -2.0 * hurst - 1.0;
        scale * self.one_minus_cos * ((d * self.ln_lambda).exp() + self.b_adjusted(hurst))
    }
}

/// `2 sin(πH) Γ(2H+1)`, the `λ`-independent factor of `A(λ;H)`.
fn density_scale(hurst: f64) -> f64 {
    2.0 * (PI * hurst).sin() * gamma(2.0 * hurst + 1.0)
}

/// The spectral density of unit-variance FGN by Paxson's approximation,
/// `f̂(λ;H) = 2 sin(πH) Γ(2H+1) (1 − cos λ) [|λ|^{−2H−1} + B̃(λ;H)]`
/// for `0 < |λ| ≤ π` (the convention of Paxson 1997 and Beran 1994 up to a
/// factor 2π: `(1/2π) ∫_{−π}^{π} f(λ) cos(kλ) dλ = γ(k)`). `B̃` is Paxson's
/// adjusted three-term estimate of the aliasing sum `B(λ;H)` (see the
/// constants above); the tests compare it with a brute-force sum (relative
/// error below 1e-5 at `H` = 0.6, 0.8, 0.9) and check that it integrates to
/// `γ(0)` and `γ(1)`.
///
/// `H` outside `(0, 1)` or `λ = 0` give a non-finite or meaningless value;
/// the generators validate their inputs before calling it.
pub fn spectral_density(lambda: f64, hurst: f64) -> f64 {
    Frequency::new(lambda).density(hurst, density_scale(hurst))
}

/// The Fourier frequencies `λ_j = 2πj/n`, `j = 1..=count`.
fn fourier_frequencies(n: usize, count: usize) -> Vec<Frequency> {
    (1..=count).map(|j| Frequency::new(2.0 * PI * j as f64 / n as f64)).collect()
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/// Shifts and scales `x` in place to zero mean and unit (population)
/// variance: `x ← (x − x̄)/s`, `s² = (1/n) Σ (x − x̄)²`.
///
/// Errors: an empty or non-finite series, or one of zero variance.
pub fn normalise(x: &mut [f64]) -> Result<(), FgnError> {
    check_len(x.len(), 1)?;
    check_finite(x)?;
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    if var <= 0.0 || !var.is_finite() {
        return Err(FgnError::ZeroVariance);
    }
    let inv_sd = 1.0 / var.sqrt();
    x.iter_mut().for_each(|v| *v = (*v - mean) * inv_sd);
    Ok(())
}

/// `n` values of FGN with Hurst parameter `hurst` by Paxson's FFT method,
/// normalised to zero mean and unit variance (population variance, so that
/// `Σx = 0` and `Σx² = n` up to rounding).
///
/// The method (Paxson 1997; docs/models/sources.md, "Fractional Gaussian noise"):
/// 1. `f_j = f̂(2πj/n; H)` for `j = 1..n/2` ([`spectral_density`]);
/// 2. a random periodogram: `z_j = sqrt(f_j E_j) e^{iθ_j}`, `E_j ~ Exp(1)`,
///    `θ_j ~ U[0, 2π)` (drawn in that order for each `j`);
/// 3. `z_0 = 0` (zero mean); the Nyquist term `z_{n/2}` is made real as
///    `sqrt(2 f E) cos θ`, a real normal of mean square `f_{n/2}`, the law of
///    the DFT of a real Gaussian series at `π`. (Paxson's own S code could
///    not be consulted; Dieker's `paxson.c` and testh's `gen_Paxson`,
///    checked 2026-11, draw `sqrt(f)(N1 + iN2)` and keep the real part of
///    the transform, i.e. half that power at `π`. One frequency of `n/2`:
///    no measurable effect.)
/// 4. `x = IFFT(z)` over the Hermitian extension `z_{n−j} = conj(z_j)`, then
///    normalised ([`normalise`]).
///
/// Any even `n ≥ 2` (the FFT is not restricted to powers of two). Cost
/// `O(n log n)`; about 2.5 ms for `n = 2^15` in release (one core of the
/// project's 2-core machine).
///
/// Errors: `H` not in `(0, 1)`, `n < 2`, odd `n`.
pub fn paxson(n: usize, hurst: f64, rng: &mut SimRng) -> Result<Vec<f64>, FgnError> {
    check_hurst(hurst)?;
    check_len(n, MIN_LEN)?;
    if n % 2 != 0 {
        return Err(FgnError::OddLength(n));
    }
    let half = n / 2;
    let scale = density_scale(hurst);
    let mut z: Vec<Complex<f64>> = std::iter::once(Complex::new(0.0, 0.0))
        .chain((1..=half).map(|j| {
            let f = Frequency::new(2.0 * PI * j as f64 / n as f64).density(hurst, scale);
            periodogram_term(f, j == half, rng)
        }))
        .collect();
    let mut x = inverse_real_fft(&mut Planner::new(), &mut z, n)?;
    normalise(&mut x)?;
    Ok(x)
}

/// One term of Paxson's random periodogram with spectral density `f`:
/// `sqrt(f E) e^{iθ}`, `E ~ Exp(1)` then `θ ~ U[0, 2π)`; at the Nyquist
/// frequency the real `sqrt(2 f E) cos θ` (see [`paxson`], step 3).
fn periodogram_term(f: f64, nyquist: bool, rng: &mut SimRng) -> Complex<f64> {
    let e: f64 = Exp1.sample(rng);
    let theta = 2.0 * PI * rng.random::<f64>();
    if nyquist {
        Complex::new((2.0 * f * e).sqrt() * theta.cos(), 0.0)
    } else {
        Complex::from_polar((f * e).sqrt(), theta)
    }
}

/// `realfft`'s planner (it caches the plans of one generator call).
type Planner = RealFftPlanner<f64>;

/// The unnormalised inverse real FFT `x_t = Σ_{k=0}^{n−1} z_k e^{2πikt/n}`
/// of the Hermitian spectrum whose first `n/2 + 1` terms are `z` (the
/// imaginary parts of `z_0` and, for even `n`, `z_{n/2}` must be zero).
/// `z` is used as scratch space.
fn inverse_real_fft(planner: &mut Planner, z: &mut [Complex<f64>], n: usize) -> Result<Vec<f64>, FgnError> {
    let c2r = planner.plan_fft_inverse(n);
    let mut x = c2r.make_output_vec();
    c2r.process(z, &mut x).map_err(fft_error)?;
    Ok(x)
}

/// The forward real FFT `X_k = Σ_t x_t e^{−2πikt/n}`, `k = 0..=n/2`.
fn forward_real_fft(planner: &mut Planner, x: &[f64]) -> Result<Vec<Complex<f64>>, FgnError> {
    let r2c = planner.plan_fft_forward(x.len());
    let mut input = x.to_vec();
    let mut spectrum = r2c.make_output_vec();
    r2c.process(&mut input, &mut spectrum).map_err(fft_error)?;
    Ok(spectrum)
}

/// Relative tolerance below zero for an eigenvalue of the circulant
/// embedding, as a fraction of `Σ|c_k|`: the rounding error of a length-`m`
/// FFT is about `ε log2(m) Σ|c_k|` (≈ 4e-15 Σ|c_k| for `m = 2^17`), so 1e-12
/// accepts rounding but rejects any genuine negative eigenvalue of note.
const EIGEN_NEGATIVE_TOL: f64 = 1e-12;

/// The eigenvalues `λ_k = Σ_j c_j e^{−2πijk/m}`, `k = 0..=m/2`, of the
/// symmetric circulant matrix with first row `c` (length `m`, even), with
/// round-off negatives clipped to zero.
///
/// Errors: an eigenvalue below `−1e-12 Σ|c_j|` (the matrix is not a
/// covariance).
fn circulant_eigenvalues(planner: &mut Planner, c: &[f64]) -> Result<Vec<f64>, FgnError> {
    let spectrum = forward_real_fft(planner, c)?;
    let tol = EIGEN_NEGATIVE_TOL * c.iter().map(|v| v.abs()).sum::<f64>();
    spectrum
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let value = s.re;
            if value < -tol { Err(FgnError::NegativeEigenvalue { index, value }) } else { Ok(value.max(0.0)) }
        })
        .collect()
}

/// The first row of the circulant embedding of FGN's covariance, length
/// `m = 2n`: `c = [γ(0), γ(1), …, γ(n), γ(n−1), …, γ(1)]`. Each `k^{2H}` is
/// computed once; the arithmetic is that of [`autocovariance`], so the
/// values are the same to the bit.
fn embedding_row(n: usize, hurst: f64) -> Vec<f64> {
    let m = 2 * n;
    let pow: Vec<f64> = (0..=n + 1).map(|k| (k as f64).powf(2.0 * hurst)).collect();
    let gamma: Vec<f64> = (0..=n).map(|k| 0.5 * (pow[k + 1] - 2.0 * pow[k] + pow[k.abs_diff(1)])).collect();
    (0..m).map(|k| gamma[k.min(m - k)]).collect()
}

/// `n` values of exact FGN with Hurst parameter `hurst` (zero mean, unit
/// variance in distribution; the sample is *not* normalised, so its sample
/// mean varies like FGN's, with variance `n^{2H−2}`), by circulant embedding
/// (Davies & Harte 1987; docs/models/sources.md; the structure
/// and scaling match Zhou & Stoev's public MATLAB `ffgn.m`, checked 2026-11,
/// whose `sqrt(2) N sqrt(λ_0)/sqrt(4n)` is our `sqrt(λ_0/m) N`):
///
/// 1. `m = 2n`; `c` the first row `[γ(0), …, γ(n), γ(n−1), …, γ(1)]`;
/// 2. `λ = FFT(c)` (real, as `c` is symmetric); every `λ_k ≥ 0` for FGN and
///    every `H` in `(0, 1)`, which is checked;
/// 3. `W_0 = sqrt(λ_0/m) N`, `W_n = sqrt(λ_n/m) N`,
///    `W_k = sqrt(λ_k/(2m)) (U_k + i V_k)` for `1 ≤ k < n` (independent
///    standard normals, drawn in that order), `W_{m−k} = conj(W_k)`;
/// 4. `x = FFT(W)` (real), keep the first `n` values. (We transform with
///    `e^{+i…}`, which conjugates `W`: the same law.)
///
/// Any `n ≥ 2`. Cost `O(n log n)`: two real FFTs of length `2n`; a few
/// milliseconds for `n = 2^15` in release.
///
/// Errors: `H` not in `(0, 1)`, `n < 2`, or a negative eigenvalue
/// ([`FgnError::NegativeEigenvalue`], which does not happen for FGN).
pub fn davies_harte(n: usize, hurst: f64, rng: &mut SimRng) -> Result<Vec<f64>, FgnError> {
    check_hurst(hurst)?;
    check_len(n, MIN_LEN)?;
    let m = 2 * n;
    let mut planner = Planner::new();
    let eigen = circulant_eigenvalues(&mut planner, &embedding_row(n, hurst))?;
    let mf = m as f64;
    let mut w: Vec<Complex<f64>> = eigen
        .iter()
        .enumerate()
        .map(|(k, &lam)| {
            if k == 0 || k == n {
                Complex::new((lam / mf).sqrt() * rng.sample::<f64, _>(StandardNormal), 0.0)
            } else {
                let s = (lam / (2.0 * mf)).sqrt();
                let u: f64 = rng.sample(StandardNormal);
                let v: f64 = rng.sample(StandardNormal);
                Complex::new(s * u, s * v)
            }
        })
        .collect();
    let mut x = inverse_real_fft(&mut planner, &mut w, m)?;
    x.truncate(n);
    Ok(x)
}

// ---------------------------------------------------------------------------
// Estimators
// ---------------------------------------------------------------------------

/// About `count` integers spaced evenly in logarithm from `lo` to `hi`
/// (inclusive, rounded, duplicates removed, increasing): the block sizes of
/// the variance-time and R/S plots. `count < 2` or `lo > hi` give `[lo]`
/// (or nothing for `lo = 0`, which no estimator accepts anyway).
pub fn log_spaced(lo: usize, hi: usize, count: usize) -> Vec<usize> {
    if lo == 0 {
        return Vec::new();
    }
    if count < 2 || lo >= hi {
        return vec![lo];
    }
    let (l, h) = ((lo as f64).ln(), (hi as f64).ln());
    let mut sizes: Vec<usize> = (0..count)
        .map(|i| (l + (h - l) * i as f64 / (count - 1) as f64).exp().round() as usize)
        .map(|s| s.clamp(lo, hi))
        .collect();
    sizes.dedup();
    sizes
}

/// Least-squares slope of `y` on `x`.
fn ls_slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// Checks the common input of the block estimators: a finite series, at
/// least two distinct block sizes, each at least `min_size` and leaving at
/// least two blocks.
fn check_blocks(x: &[f64], sizes: &[usize], min_size: usize) -> Result<(), FgnError> {
    check_finite(x)?;
    for &m in sizes {
        if m < min_size || m > x.len() / 2 {
            return Err(FgnError::InvalidBlockSizes(format!(
                "block size {m} is not in [{min_size}, n/2 = {}]",
                x.len() / 2
            )));
        }
    }
    let mut distinct = sizes.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 {
        return Err(FgnError::InvalidBlockSizes(
            "at least two distinct block sizes are needed for a slope".to_string(),
        ));
    }
    Ok(())
}

/// Sample variance (denominator `k − 1`) of the means of the non-overlapping
/// blocks of size `m` (a trailing partial block is dropped).
fn aggregated_variance(x: &[f64], m: usize) -> f64 {
    let means: Vec<f64> = x.chunks_exact(m).map(|b| b.iter().sum::<f64>() / m as f64).collect();
    let k = means.len() as f64;
    let mean = means.iter().sum::<f64>() / k;
    means.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (k - 1.0)
}

/// The variance-time slope `β`: the least-squares slope of `log Var(x^(m))`
/// against `log m`, where `x^(m)` are the means of non-overlapping blocks of
/// size `m` (each `m` in `block_sizes`). For FGN `Var(x^(m)) = m^{2H−2}`, so
/// `β = 2H − 2` and `Ĥ = 1 + β/2` (biased low for large
/// `H` at practical lengths, because each block mean is compared with the
/// sample mean). The tests use 20 log-spaced sizes from 1 to `n/10`
/// ([`log_spaced`]).
///
/// Errors: a non-finite series; a block size of 0 or above `n/2`; fewer than
/// two distinct sizes; a zero variance at some size.
pub fn variance_time_slope(x: &[f64], block_sizes: &[usize]) -> Result<f64, FgnError> {
    check_blocks(x, block_sizes, 1)?;
    let mut points = Vec::with_capacity(block_sizes.len());
    for &m in block_sizes {
        let v = aggregated_variance(x, m);
        if v <= 0.0 || !v.is_finite() {
            return Err(FgnError::ZeroVariance);
        }
        points.push(((m as f64).ln(), v.ln()));
    }
    Ok(ls_slope(&points))
}

/// `R/S` of one block: the range of the cumulative sums of the
/// mean-adjusted values divided by the block's (population) standard
/// deviation; `None` for a constant block.
fn block_rescaled_range(block: &[f64]) -> Option<f64> {
    let d = block.len() as f64;
    let mean = block.iter().sum::<f64>() / d;
    let (mut cum, mut lo, mut hi, mut ss) = (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
    for v in block {
        let dev = v - mean;
        cum += dev;
        lo = lo.min(cum);
        hi = hi.max(cum);
        ss += dev * dev;
    }
    let sd = (ss / d).sqrt();
    (sd > 0.0).then(|| (hi - lo) / sd)
}

/// The rescaled-range (R/S) estimate of `H`: for each block length `d` in
/// `block_sizes`, the mean of `R/S` over the non-overlapping blocks of
/// length `d`; `Ĥ` is the least-squares slope of `log(R/S)` against `log d`
/// (Hurst 1951, Mandelbrot & Wallis 1969). Short blocks
/// are biased, so sizes below 10 are rejected; the tests use 15
/// log-spaced lengths from 10 to `n/4`.
///
/// Errors: a non-finite series; a length below 10 or above `n/2`; fewer than
/// two distinct lengths; a length at which every block is constant.
pub fn rescaled_range_hurst(x: &[f64], block_sizes: &[usize]) -> Result<f64, FgnError> {
    /// R/S is biased for short blocks: skip d < 10.
    const MIN_RS_BLOCK: usize = 10;
    check_blocks(x, block_sizes, MIN_RS_BLOCK)?;
    let mut points = Vec::with_capacity(block_sizes.len());
    for &d in block_sizes {
        let rs: Vec<f64> = x.chunks_exact(d).filter_map(block_rescaled_range).collect();
        if rs.is_empty() {
            return Err(FgnError::ZeroVariance);
        }
        let mean_rs = rs.iter().sum::<f64>() / rs.len() as f64;
        points.push(((d as f64).ln(), mean_rs.ln()));
    }
    Ok(ls_slope(&points))
}

/// Search interval of Whittle's estimator: `H` in `[0.001, 0.999]`, inside
/// the open `(0, 1)` where the spectral density is defined.
const WHITTLE_H_MIN: f64 = 1e-3;
/// See [`WHITTLE_H_MIN`].
const WHITTLE_H_MAX: f64 = 1.0 - 1e-3;
/// Stop the golden-section search when the bracket is this narrow (far below
/// the estimator's standard error, about 0.003 at `n = 2^15`).
const WHITTLE_H_TOL: f64 = 1e-7;
/// Least number of periodogram ordinates Whittle's fit accepts.
const WHITTLE_MIN_ORDINATES: usize = 2;

/// Whittle's estimate of `H` for FGN (Whittle 1953; Beran 1994 §5; the
/// estimator Paxson 1997 validates his method with).
///
/// With the periodogram `I_j = |Σ_t x_t e^{−iλ_j t}|² / (2πn)` at
/// `λ_j = 2πj/n`, `j = 1..⌊(n−1)/2⌋`, it minimises the objective with the
/// scale profiled out,
/// `Q(H) = log( mean_j I_j / f̂(λ_j;H) ) + mean_j log f̂(λ_j;H)`,
/// over `H` in `[0.001, 0.999]` by golden-section search, with the FGN
/// spectral density of [`spectral_density`]. The series' mean does not
/// matter (`j = 0` is not used).
///
/// Errors: fewer than 5 values, a non-finite series, a zero periodogram.
pub fn whittle_hurst(x: &[f64]) -> Result<f64, FgnError> {
    let n = x.len();
    check_len(n, 2 * WHITTLE_MIN_ORDINATES + 1)?;
    check_finite(x)?;
    let count = (n - 1) / 2;
    let spectrum = forward_real_fft(&mut Planner::new(), x)?;
    let norm = 2.0 * PI * n as f64;
    let periodogram: Vec<f64> = spectrum[1..=count].iter().map(|s| s.norm_sqr() / norm).collect();
    if periodogram.iter().all(|&i| i == 0.0) {
        return Err(FgnError::ZeroVariance);
    }
    let freqs = fourier_frequencies(n, count);
    let objective = |h: f64| whittle_objective(&periodogram, &freqs, h);
    Ok(golden_section_min(objective, WHITTLE_H_MIN, WHITTLE_H_MAX, WHITTLE_H_TOL))
}

/// Whittle's profiled objective `Q(H)` (see [`whittle_hurst`]).
fn whittle_objective(periodogram: &[f64], freqs: &[Frequency], hurst: f64) -> f64 {
    let scale = density_scale(hurst);
    let (mut ratio, mut log_f) = (0.0, 0.0);
    for (i, freq) in periodogram.iter().zip(freqs) {
        let f = freq.density(hurst, scale);
        ratio += i / f;
        log_f += f.ln();
    }
    let k = periodogram.len() as f64;
    (ratio / k).ln() + log_f / k
}

/// The minimiser of a unimodal `f` on `[lo, hi]` by golden-section search
/// (Kiefer 1953), to within `tol`.
fn golden_section_min(f: impl Fn(f64) -> f64, lo: f64, hi: f64, tol: f64) -> f64 {
    // `1/φ = (√5 − 1)/2`, the golden ratio's reciprocal.
    let inv_phi = (5.0_f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (lo, hi);
    let mut c = b - inv_phi * (b - a);
    let mut d = a + inv_phi * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    while b - a > tol {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - inv_phi * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + inv_phi * (b - a);
            fd = f(d);
        }
    }
    0.5 * (a + b)
}

/// The sample autocorrelation at `lag`:
/// `Σ_{t<n−lag} (x_t − x̄)(x_{t+lag} − x̄) / Σ_t (x_t − x̄)²`.
///
/// Errors: `lag ≥ n`, a non-finite series, zero variance.
pub fn sample_autocorrelation(x: &[f64], lag: usize) -> Result<f64, FgnError> {
    check_len(x.len(), lag + 1)?;
    check_finite(x)?;
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let denom: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    if denom <= 0.0 {
        return Err(FgnError::ZeroVariance);
    }
    let num: f64 = x.iter().zip(&x[lag..]).map(|(a, b)| (a - mean) * (b - mean)).sum();
    Ok(num / denom)
}

// ---------------------------------------------------------------------------
// The study's rate sequence
// ---------------------------------------------------------------------------

/// Which generator a [`RateSequence`] draws its block from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FgnMethod {
    /// Paxson's FFT method ([`paxson`]), the method 97-0177R2 cites.
    #[default]
    Paxson,
    /// Exact FGN by circulant embedding ([`davies_harte`]).
    DaviesHarte,
}

/// The parameters of one video source's rate sequence (97-0177R2 §4 as
/// read in docs/models/sources.md, "The rate sequence"): rates `μ + σ x_k` with `x` one
/// normalised FGN block of `len` values, the values outside `[0, peak]`
/// skipped. Any unit of rate (the study's are Mbit/s: mean 5, 7.5 or 10,
/// standard deviation 5, 7 or 5, peak 15, `H = 0.8`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateParams {
    /// Mean `μ` of the untruncated rate.
    pub mean: f64,
    /// Standard deviation `σ` of the untruncated rate (positive).
    pub std_dev: f64,
    /// Upper bound of the accepted rates (positive); the lower bound is 0.
    pub peak: f64,
    /// Hurst parameter, in `(0, 1)`.
    pub hurst: f64,
    /// Length of the FGN block (even for Paxson's method). A 170 s run of
    /// the study uses about 4,000 rates per source: `2^15` is plenty.
    pub len: usize,
    /// The generator.
    pub method: FgnMethod,
}

impl RateParams {
    /// Parameters with Paxson's method (the study's choice).
    pub fn new(mean: f64, std_dev: f64, peak: f64, hurst: f64, len: usize) -> RateParams {
        RateParams { mean, std_dev, peak, hurst, len, method: FgnMethod::Paxson }
    }

    /// The same parameters with another generator.
    pub fn with_method(self, method: FgnMethod) -> RateParams {
        RateParams { method, ..self }
    }

    /// Checks every field: finite mean, positive finite standard deviation
    /// and peak, `H` in `(0, 1)`, `len ≥ 2` (and even for Paxson's method).
    pub fn validate(&self) -> Result<(), FgnError> {
        let positive = |name: &'static str, value: f64| {
            if value > 0.0 && value.is_finite() { Ok(()) } else { Err(FgnError::InvalidParameter { name, value }) }
        };
        if !self.mean.is_finite() {
            return Err(FgnError::InvalidParameter { name: "mean", value: self.mean });
        }
        positive("std_dev", self.std_dev)?;
        positive("peak", self.peak)?;
        check_hurst(self.hurst)?;
        check_len(self.len, MIN_LEN)?;
        if self.method == FgnMethod::Paxson && self.len % 2 != 0 {
            return Err(FgnError::OddLength(self.len));
        }
        Ok(())
    }

    /// The standardised bounds `a = (0 − μ)/σ`, `b = (peak − μ)/σ`.
    fn standard_bounds(&self) -> (f64, f64) {
        ((0.0 - self.mean) / self.std_dev, (self.peak - self.mean) / self.std_dev)
    }

    /// The probability that a normal `N(μ, σ²)` value lies in `[0, peak]`:
    /// `Φ(b) − Φ(a)` (absolute error below 3e-7). The marginal law of
    /// the rates is this normal, so this is the long-run accepted fraction.
    pub fn expected_acceptance(&self) -> f64 {
        let (a, b) = self.standard_bounds();
        normal_cdf(b) - normal_cdf(a)
    }

    /// The long-run fraction of values skipped, `1 − (Φ(b) − Φ(a))`: 18.1 %,
    /// 28.4 % and 18.1 % for the study's (5, 5), (7.5, 7) and (10, 5).
    pub fn expected_skip_fraction(&self) -> f64 {
        1.0 - self.expected_acceptance()
    }

    /// The mean of the accepted rates, the mean of the normal truncated to
    /// `[0, peak]`: `μ + σ (φ(a) − φ(b)) / (Φ(b) − Φ(a))` (Johnson, Kotz &
    /// Balakrishnan, Continuous Univariate Distributions 1, §13.10): 6.148,
    /// 7.500 and 8.852 Mbit/s for the study's three settings. NaN if the
    /// acceptance is zero.
    pub fn expected_mean(&self) -> f64 {
        let (a, b) = self.standard_bounds();
        self.mean + self.std_dev * (normal_pdf(a) - normal_pdf(b)) / self.expected_acceptance()
    }
}

/// The rates of one video source of 97-0177R2, in order: one FGN block of
/// `len` values is generated (Paxson's method by default) and normalised to
/// zero mean and unit variance, scaled to `μ + σ x_k`, and the values
/// outside `[0, peak]` are skipped (not clipped, not folded: the next value
/// is taken). The source consumes one rate per inter-MPCR interval
/// (97-0177R2 §4, §4.1; docs/models/sources.md, "The rate sequence").
///
/// The sequence ends (`None`) when the block is used up: choose `len` for the
/// whole run (the accepted fraction is about
/// [`RateParams::expected_acceptance`]).
#[derive(Clone, Debug)]
pub struct RateSequence {
    /// The scaled block, `μ + σ x_k`.
    values: Vec<f64>,
    /// Index of the next value to examine.
    next: usize,
    peak: f64,
    accepted: usize,
    skipped: usize,
}

impl RateSequence {
    /// Generates the block from `rng` (one call to the chosen generator).
    ///
    /// Errors: invalid parameters ([`RateParams::validate`]).
    pub fn new(params: &RateParams, rng: &mut SimRng) -> Result<RateSequence, FgnError> {
        params.validate()?;
        let mut x = match params.method {
            FgnMethod::Paxson => paxson(params.len, params.hurst, rng)?,
            FgnMethod::DaviesHarte => davies_harte(params.len, params.hurst, rng)?,
        };
        normalise(&mut x)?;
        let values = x.iter().map(|v| params.mean + params.std_dev * v).collect();
        Ok(RateSequence { values, next: 0, peak: params.peak, accepted: 0, skipped: 0 })
    }

    fn in_range(&self, v: f64) -> bool {
        (0.0..=self.peak).contains(&v)
    }

    /// Values handed out so far.
    pub fn accepted(&self) -> usize {
        self.accepted
    }

    /// Values skipped so far (outside `[0, peak]`).
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// Values of the block examined so far (accepted + skipped).
    pub fn examined(&self) -> usize {
        self.accepted + self.skipped
    }

    /// The fraction of the examined values that were skipped (0 before the
    /// first value).
    pub fn skipped_fraction(&self) -> f64 {
        match self.examined() {
            0 => 0.0,
            n => self.skipped as f64 / n as f64,
        }
    }

    /// The fraction of the whole block outside `[0, peak]`, whether or not
    /// it has been reached yet.
    pub fn block_skipped_fraction(&self) -> f64 {
        let out = self.values.iter().filter(|&&v| !self.in_range(v)).count();
        out as f64 / self.values.len() as f64
    }

    /// Values of the block not yet examined.
    pub fn remaining(&self) -> usize {
        self.values.len() - self.next
    }
}

impl Iterator for RateSequence {
    type Item = f64;

    /// The next rate in `[0, peak]`, or `None` when the block is used up.
    fn next(&mut self) -> Option<f64> {
        while let Some(&v) = self.values.get(self.next) {
            self.next += 1;
            if self.in_range(v) {
                self.accepted += 1;
                return Some(v);
            }
            self.skipped += 1;
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining()))
    }
}
