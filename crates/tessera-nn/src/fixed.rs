//! Number systems a network is evaluated in: `f32` ([`Float`], for accuracy) and fixed point
//! over Z_2^ℓ ([`Fixed`], the exact reference of the secure evaluation).
//!
//! Fixed point (SecureML, Mohassel and Zhang, S&P 2017, §4.1): a real x is the ring element
//! ⌊x·2^f⌉ mod 2^ℓ, read as a signed ℓ-bit number. A product of two such has 2f fractional bits
//! and is brought back by an arithmetic shift right by f (truncation, rounding toward −∞). A
//! dense or convolution layer adds its bias at 2f bits before the one truncation of its sums.
//! The secure protocols compute exactly this, except that their truncation of a shared value
//! may be off by one unit in the last place (SecureML's local truncation; see the secure
//! layers for their bounds).

use crate::error::Error;
use crate::model::{CEILING, Function, Model};

/// A number system: its element type and the operations a network needs.
pub trait Arith: Sync {
    /// An element.
    type E: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync;
    /// A real (an input or a weight) as an element.
    fn encode(&self, x: f32) -> Self::E;
    /// A real at the scale of a product (a bias, added before truncation).
    fn encode_product(&self, x: f32) -> Self::E;
    /// An element as a real.
    fn decode(&self, e: Self::E) -> f32;
    /// Reals (weights) as elements.
    fn encode_all(&self, x: &[f32]) -> Vec<Self::E> {
        x.iter().map(|&v| self.encode(v)).collect()
    }
    /// Reals at the scale of a product (biases) as elements.
    fn encode_products(&self, x: &[f32]) -> Vec<Self::E> {
        x.iter().map(|&v| self.encode_product(v)).collect()
    }
    /// a + b.
    fn add(&self, a: Self::E, b: Self::E) -> Self::E;
    /// a − b.
    fn sub(&self, a: Self::E, b: Self::E) -> Self::E;
    /// a·b at the product's scale.
    fn mul(&self, a: Self::E, b: Self::E) -> Self::E;
    /// A product's scale back to a value's (truncation by f).
    fn rescale(&self, e: Self::E) -> Self::E;
    /// max(a, b).
    fn max(&self, a: Self::E, b: Self::E) -> Self::E;
    /// max(e, 0).
    fn relu(&self, e: Self::E) -> Self::E {
        self.max(e, Self::E::default())
    }
    /// The mean of `count` elements summing to `sum`: fixed point multiplies by the public
    /// ⌊2^f / count⌉ and truncates.
    fn mean(&self, sum: Self::E, count: usize) -> Self::E;
    /// `c·x` for a public real `c`: the product by `c`'s encoding, truncated.
    fn scale(&self, x: Self::E, c: f32) -> Self::E {
        self.rescale(self.mul(self.encode(c), x))
    }
    /// `function` of each element of `x` where this number system computes it exactly (float,
    /// as onnxruntime does); `None` where the secure method is the reference (fixed point:
    /// [`crate::model::Smooth`]).
    fn exactly(&self, _function: Function, _x: &[Self::E]) -> Option<Vec<Self::E>> {
        None
    }
    /// The largest magnitude an input may have (`None`: no bound beyond being finite).
    fn input_bound(&self) -> Option<f64> {
        None
    }
    /// Checks that the model's weights are representable; every number system needs them
    /// finite, which [`Model::check`] holds them to.
    fn check_model(&self, model: &Model) -> Result<(), Error> {
        model.check(&CEILING)
    }
    /// Checks an input: finite, and within [`Arith::input_bound`].
    fn check_input(&self, input: &[f32]) -> Result<(), Error> {
        check_range("input", input, self.input_bound())
    }
}

/// `values` (named `what`) finite and, with a bound, below it in magnitude; the error names the
/// first value that is not and the largest one allowed.
fn check_range(what: &str, values: &[f32], bound: Option<f64>) -> Result<(), Error> {
    let bad = values
        .iter()
        .enumerate()
        .find(|(_, v)| !v.is_finite() || bound.is_some_and(|b| f64::from(v.abs()) >= b));
    match (bad, bound) {
        (None, _) => Ok(()),
        (Some((i, v)), _) if !v.is_finite() => Err(Error::Input(format!(
            "{what} value {i} is {v}; it must be finite"
        ))),
        (Some((i, v)), b) => Err(Error::Input(format!(
            "{what} value {i} is {v}; the largest magnitude this fixed point takes is below {} \
             (2^{}); use more bits (--bits 64) or clip the input (--clip)",
            b.unwrap_or(f64::MAX),
            b.unwrap_or(f64::MAX).log2()
        ))),
    }
}

/// [`erf`], for the smooth functions' tests.
#[cfg(test)]
pub(crate) fn tests_erf(x: f64) -> f64 {
    erf(x)
}

/// erf from the Chebyshev fit of erfc in Numerical Recipes (§6.2, `erfcc`): fractional error
/// below 1.2·10⁻⁷, well below `f32`'s.
fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 { 1.0 - erfc } else { erfc - 1.0 }
}

/// IEEE single precision, as PyTorch and ONNX Runtime evaluate.
#[derive(Clone, Copy, Debug, Default)]
pub struct Float;

impl Arith for Float {
    type E = f32;
    fn encode(&self, x: f32) -> f32 {
        x
    }
    fn encode_product(&self, x: f32) -> f32 {
        x
    }
    fn decode(&self, e: f32) -> f32 {
        e
    }
    fn add(&self, a: f32, b: f32) -> f32 {
        a + b
    }
    fn sub(&self, a: f32, b: f32) -> f32 {
        a - b
    }
    fn mul(&self, a: f32, b: f32) -> f32 {
        a * b
    }
    fn rescale(&self, e: f32) -> f32 {
        e
    }
    fn max(&self, a: f32, b: f32) -> f32 {
        a.max(b)
    }
    fn mean(&self, sum: f32, count: usize) -> f32 {
        sum / count as f32
    }
    fn exactly(&self, function: Function, x: &[f32]) -> Option<Vec<f32>> {
        let f = |v: f32| match function {
            Function::Exp => v.exp(),
            Function::Sigmoid => 1.0 / (1.0 + (-v).exp()),
            Function::Tanh => v.tanh(),
            Function::Reciprocal => 1.0 / v,
            Function::Sqrt => v.sqrt(),
            Function::Erf => erf(f64::from(v)) as f32,
            Function::Gelu => (0.5 * f64::from(v) * (1.0 + erf(f64::from(v) / 2f64.sqrt()))) as f32,
            Function::GeluTanh => {
                let u = (2.0 / std::f32::consts::PI).sqrt() * (v + 0.044_715 * v * v * v);
                0.5 * v * (1.0 + u.tanh())
            }
        };
        Some(x.iter().map(|&v| f(v)).collect())
    }
}

/// Fixed point with `frac` fractional bits in Z_2^ℓ, ℓ = `bits` ∈ {32, 64}; elements are
/// `u64`s reduced modulo 2^ℓ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixed {
    bits: u32,
    frac: u32,
}

impl Fixed {
    /// ℓ = `bits` (32 or 64) with `frac` fractional bits, at most ℓ/2 − 1 so that a product
    /// keeps a sign bit and an integer bit; `None` otherwise.
    pub fn new(bits: u32, frac: u32) -> Option<Self> {
        (matches!(bits, 32 | 64) && frac < bits / 2).then_some(Fixed { bits, frac })
    }

    /// ℓ.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// f.
    pub fn frac(&self) -> u32 {
        self.frac
    }

    fn mask(&self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// The element as a signed ℓ-bit number.
    pub fn signed(&self, e: u64) -> i64 {
        let shift = 64 - self.bits;
        ((e << shift) as i64) >> shift
    }

    /// A signed number modulo 2^ℓ.
    pub fn wrap(&self, v: i64) -> u64 {
        (v as u64) & self.mask()
    }

    fn scaled(&self, x: f32, frac: u32) -> u64 {
        // Saturates at the i64 range; the ring keeps the low ℓ bits.
        self.wrap((f64::from(x) * (frac as f64).exp2()).round() as i64)
    }

    /// The largest magnitude a value at scale 2^f represents: 2^(ℓ−1−f) (exclusive).
    pub fn max_value(&self) -> f64 {
        f64::from(self.bits - 1 - self.frac).exp2()
    }

    /// The largest magnitude at the products' scale 2^2f (exclusive): 2^(ℓ−1−2f). Biases are
    /// held to it, and so are inputs: an input times a weight of magnitude at most 1 then
    /// stays within the ring before its truncation.
    pub fn max_product(&self) -> f64 {
        f64::from(self.bits - 1 - 2 * self.frac).exp2()
    }

    /// `input` clipped to ±[`Fixed::max_product`] (less one unit); how many values were
    /// clipped. A value that is not finite is refused.
    pub fn clip(&self, input: &mut [f32]) -> Result<usize, Error> {
        check_range("input", input, None)?;
        let most = (self.max_product() - (-f64::from(self.frac)).exp2()) as f32;
        let mut clipped = 0;
        for v in input.iter_mut().filter(|v| v.abs() > most) {
            *v = most.copysign(*v);
            clipped += 1;
        }
        Ok(clipped)
    }

    /// A public real `c` as a multiplier that keeps f bits of its relative precision: `(k,
    /// bits)` with k = ⌊c·2^bits⌉ and bits = f + s, where s (at most f) brings |c|·2^s toward
    /// 1 for |c| < 1; `(k·x) >> bits` is then c·x, and k·x stays within a product's range.
    pub fn multiplier(&self, c: f32) -> (u64, u32) {
        let extra = if c == 0.0 || c.abs() >= 1.0 {
            0
        } else {
            ((1.0 / f64::from(c.abs())).log2().floor() as u32).min(self.frac)
        };
        let bits = self.frac + extra;
        let k = (f64::from(c) * f64::from(bits).exp2()).round() as i64;
        (self.wrap(k), bits)
    }

    /// The public multiplier of [`Arith::mean`] for `count` elements: ⌊2^f / count⌉.
    pub fn reciprocal(&self, count: usize) -> u64 {
        let c = count.max(1) as u64;
        ((1u64 << self.frac) + c / 2) / c
    }
}

impl Arith for Fixed {
    type E = u64;
    fn encode(&self, x: f32) -> u64 {
        self.scaled(x, self.frac)
    }
    fn encode_product(&self, x: f32) -> u64 {
        self.scaled(x, 2 * self.frac)
    }
    fn decode(&self, e: u64) -> f32 {
        (self.signed(e) as f64 / (self.frac as f64).exp2()) as f32
    }
    fn add(&self, a: u64, b: u64) -> u64 {
        a.wrapping_add(b) & self.mask()
    }
    fn sub(&self, a: u64, b: u64) -> u64 {
        a.wrapping_sub(b) & self.mask()
    }
    fn mul(&self, a: u64, b: u64) -> u64 {
        a.wrapping_mul(b) & self.mask()
    }
    fn rescale(&self, e: u64) -> u64 {
        self.wrap(self.signed(e) >> self.frac)
    }
    fn input_bound(&self) -> Option<f64> {
        Some(self.max_product())
    }
    /// Weights below [`Fixed::max_value`]; biases and constants below
    /// [`Fixed::max_product`].
    fn check_model(&self, model: &Model) -> Result<(), Error> {
        model.check(&CEILING)?;
        for node in &model.nodes {
            let what = |part: &str| format!("node {:?} ({}): {part}", node.name, node.op.kind());
            let [weights, rest] = node.op.operator().ranges();
            check_range(&what("weight"), weights, Some(self.max_value()))?;
            check_range(&what("bias or constant"), rest, Some(self.max_product()))?;
        }
        Ok(())
    }
    /// By [`Fixed::multiplier`]: f bits of `c`'s relative precision however small it is.
    fn scale(&self, x: u64, c: f32) -> u64 {
        let (k, bits) = self.multiplier(c);
        self.wrap(self.signed(self.mul(k, x)) >> bits)
    }
    fn max(&self, a: u64, b: u64) -> u64 {
        if self.signed(a) >= self.signed(b) {
            a
        } else {
            b
        }
    }
    fn mean(&self, sum: u64, count: usize) -> u64 {
        self.rescale(self.mul(sum, self.reciprocal(count)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_round_trips_and_truncates_toward_minus_infinity() {
        let f = Fixed::new(32, 8).unwrap();
        assert_eq!(f.decode(f.encode(1.5)), 1.5);
        assert_eq!(f.decode(f.encode(-2.25)), -2.25);
        let p = f.mul(f.encode(-1.5), f.encode(0.5));
        assert_eq!(f.decode(f.rescale(p)), -0.75);
        // −1/256 · 1/256 truncates to −1/256, not 0.
        let tiny = f.mul(f.encode(-1.0 / 256.0), f.encode(1.0 / 256.0));
        assert_eq!(f.signed(f.rescale(tiny)), -1);
        assert_eq!(f.relu(f.encode(-3.0)), 0);
        assert_eq!(f.max(f.encode(-3.0), f.encode(-4.0)), f.encode(-3.0));
        assert_eq!(f.decode(f.mean(f.encode(6.0), 4)), 1.5);
        assert!(Fixed::new(32, 16).is_none() && Fixed::new(48, 8).is_none());
        let g = Fixed::new(64, 20).unwrap();
        assert_eq!(g.signed(g.encode(-1.0)), -(1 << 20));
        assert_eq!(
            g.decode(g.rescale(g.mul(g.encode(3.0), g.encode(-0.5)))),
            -1.5
        );
    }
}
