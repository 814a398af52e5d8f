//! Smooth functions of each element (ONNX Operators: Exp, Sigmoid, Tanh, Reciprocal, Sqrt,
//! Erf, Gelu, Pow): exp, 1/x and 1/√x by CrypTen's methods (Knott et al., NeurIPS 2021, App.
//! C.1) with a better-conditioned exp, sigmoid, tanh, erf and GELU by piecewise polynomials
//! (PUMA, BOLT): each written once over [`Numbers`], which the fixed-point reference
//! and the protocol both implement, so that the two compute the same sequence of products and
//! comparisons (each truncation a unit apart); float computes the functions themselves, as
//! onnxruntime does. Their error against float, measured on 401 points by this module's test
//! (the method alone, then at ℓ = 64, f = 16, where the truncations dominate):
//!
//! - exp: held at −64 from below (one comparison), then the cubic Taylor base `1 + t + t²/2 +
//!   t³/6` of t = x/2^6 squared six times (eight products): on [−16, 0] 2.4·10⁻⁶ / 1.9·10⁻³
//!   absolute; on [0, 4] 4.1·10⁻⁵ / 2.9·10⁻³ of 1 + e^x; x must stay below 10 at f = 16 (the
//!   squares' range);
//! - 1/x by ten Newton steps `y ← y·(2 − x·y)` from `y₀ = 3·e^(0.5 − x) + 0.003`, for x in
//!   [0.05, 250] (where the start is within the steps' reach): 7.7·10⁻⁸ / 5.2·10⁻⁵ of 1 + 1/x;
//! - sigmoid as `σ(|x|)`, a polynomial of degree 11 in |x| held at 10 (PUMA's and BOLT's
//!   piecewise method), then `1 − σ(|x|)` for negative x (one comparison, its bit used
//!   twice): 3.2·10⁻⁵ / 1.5·10⁻⁴ for every x (7.7·10⁻⁵ at most for the method beyond the
//!   cut);
//! - tanh as `2·σ(2x) − 1`: 6.3·10⁻⁵ / 2.8·10⁻⁴;
//! - 1/√x by ten Newton steps `y ← y·(3 − x·y²)/2` from CrypTen's `2.2·e^(−x/2 − 0.2) + 0.2 −
//!   x/1024`, for x in [0.01, 200]; √x as x·(1/√x): 4.8·10⁻⁶ / 1.2·10⁻³ of 1 + √x;
//! - erf as `erf(|x|)`, a polynomial of degree 9 in |x| held at 3, its sign from x's (the same
//!   method as sigmoid's): 4.4·10⁻⁵ / 1.4·10⁻⁴ on [−6, 6];
//! - GELU (ONNX's exact and tanh forms alike) as `(x + h(x))/2`, `h(x) = x·erf(x/√2)` a
//!   polynomial of degree 7 in |x| on [−4, 4] and |x| beyond (PUMA's and BOLT's piecewise
//!   method): on [−6, 6] 2.0·10⁻⁴ / 2.4·10⁻⁴.
//!
//! The protocol is a further 2^6 units or so from the reference where exp is used (its
//! squarings double a truncation's unit each). Cost per element: exp 8 products and a
//! comparison; 1/x 28 products; sigmoid and tanh 10 products, two comparisons and three bit
//! products; erf 8 products, two comparisons and three bit products; 1/√x 38; GELU 6
//! products, two comparisons and three bit products. Sigmoid, tanh, erf and GELU compute in
//! [−1, 1] and fit ℓ = 32 (at f = 12 on [−20, 20]: sigmoid 1.8·10⁻³, tanh 3.5·10⁻³, erf
//! 1.8·10⁻³, GELU 9.4·10⁻⁴); exp, 1/x and 1/√x want ℓ = 64: at ℓ = 32 exp's squares leave the
//! ring past x ≈ 4 and f ≤ 10 loses their precision.

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::computed;
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};

/// The squarings of exp's range reduction: e^x = (e^(x/2^6))^(2^6).
const EXP_SQUARINGS: usize = 6;
/// The least exponent exp takes as it is (its base then stays positive); below, it is held
/// there by one comparison: e^−64 is 0 to 2^−92.
const EXP_FLOOR: f32 = -64.0;
/// Products of exp's base: t², t³.
const EXP_BASE_PRODUCTS: usize = 2;
/// Products per element of exp.
pub(crate) const EXP_PRODUCTS: usize = EXP_BASE_PRODUCTS + EXP_SQUARINGS;
/// Products per element of 1/x.
pub(crate) const RECIPROCAL_PRODUCTS: usize = EXP_PRODUCTS + 2 * NEWTON_STEPS;
/// Products per element of 1/√x.
pub(crate) const RSQRT_PRODUCTS: usize = EXP_PRODUCTS + 3 * NEWTON_STEPS;
/// Newton's steps for 1/x.
const NEWTON_STEPS: usize = 10;

/// What the methods compute with: the elements of one tensor, in the clear in a number system
/// ([`Plain`]) or shared in the protocol ([`Compiler`]).
pub(crate) trait Numbers {
    /// A tensor's elements.
    type V: Clone;
    /// A bit per element.
    type Bit;
    /// `x·y`, truncated by f.
    fn mul(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error>;
    /// `c·x` for a public real `c`, truncated.
    fn scale(&mut self, x: &Self::V, c: f32) -> Result<Self::V, Error>;
    /// `x + c` for a public real `c`.
    fn shift(&mut self, x: &Self::V, c: f32) -> Result<Self::V, Error>;
    /// `x + y`.
    fn add(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error>;
    /// `x − y`.
    fn sub(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error>;
    /// `[x ≥ 0]`.
    fn nonnegative(&mut self, x: &Self::V) -> Result<Self::Bit, Error>;
    /// The elements of `x` at `indices` (into one input's tensor).
    fn gather(&mut self, x: &Self::V, indices: &[u32]) -> Result<Self::V, Error>;
    /// The sums of the groups ([`crate::kernels::reduction_groups`]: list `j` holds every
    /// output's `j`-th summand).
    fn sum(&mut self, x: &Self::V, groups: &[Vec<u32>]) -> Result<Self::V, Error>;
    /// The groups' maxima (as for [`Numbers::sum`]).
    fn maximum(&mut self, x: &Self::V, groups: &[Vec<u32>]) -> Result<Self::V, Error>;
    /// `bit·x`.
    fn times(&mut self, bit: &Self::Bit, x: &Self::V) -> Result<Self::V, Error>;
    /// `function` of each element where this computes it exactly (float, as onnxruntime
    /// does), so that a method is not used; `None` where the method is what is computed.
    fn exactly(&mut self, _function: Function, _x: &Self::V) -> Option<Self::V> {
        None
    }
}

/// The plaintext reference in a number system: the methods in fixed point, the functions
/// themselves in float ([`Arith::exactly`]); or the methods in any system (`exact` false: the
/// methods' own error, measured in float).
pub(crate) struct Plain<'a, A: Arith> {
    a: &'a A,
    exact: bool,
}

impl<'a, A: Arith> Plain<'a, A> {
    /// The reference.
    pub(crate) fn new(a: &'a A) -> Self {
        Plain { a, exact: true }
    }

    /// The methods alone, even where `a` computes the functions exactly (their own error).
    #[cfg(test)]
    pub(crate) fn methods(a: &'a A) -> Self {
        Plain { a, exact: false }
    }
}

impl<A: Arith> Numbers for Plain<'_, A> {
    type V = Vec<A::E>;
    type Bit = Vec<bool>;

    fn mul(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error> {
        let a = self.a;
        Ok(x.iter()
            .zip(y)
            .map(|(&u, &v)| a.rescale(a.mul(u, v)))
            .collect())
    }

    fn scale(&mut self, x: &Self::V, c: f32) -> Result<Self::V, Error> {
        Ok(x.iter().map(|&u| self.a.scale(u, c)).collect())
    }

    fn shift(&mut self, x: &Self::V, c: f32) -> Result<Self::V, Error> {
        let (a, k) = (self.a, self.a.encode(c));
        Ok(x.iter().map(|&u| a.add(u, k)).collect())
    }

    fn add(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error> {
        let a = self.a;
        Ok(x.iter().zip(y).map(|(&u, &v)| a.add(u, v)).collect())
    }

    fn sub(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error> {
        let a = self.a;
        Ok(x.iter().zip(y).map(|(&u, &v)| a.sub(u, v)).collect())
    }

    fn nonnegative(&mut self, x: &Self::V) -> Result<Self::Bit, Error> {
        let zero = A::E::default();
        Ok(x.iter().map(|&u| self.a.max(u, zero) == u).collect())
    }

    fn times(&mut self, bit: &Self::Bit, x: &Self::V) -> Result<Self::V, Error> {
        let zero = A::E::default();
        Ok(bit
            .iter()
            .zip(x)
            .map(|(&b, &u)| if b { u } else { zero })
            .collect())
    }

    fn gather(&mut self, x: &Self::V, indices: &[u32]) -> Result<Self::V, Error> {
        Ok(indices.iter().map(|&i| x[i as usize]).collect())
    }

    fn sum(&mut self, x: &Self::V, groups: &[Vec<u32>]) -> Result<Self::V, Error> {
        Ok(fold(x, groups, |u, v| self.a.add(u, v)))
    }

    fn maximum(&mut self, x: &Self::V, groups: &[Vec<u32>]) -> Result<Self::V, Error> {
        Ok(fold(x, groups, |u, v| self.a.max(u, v)))
    }

    fn exactly(&mut self, function: Function, x: &Self::V) -> Option<Self::V> {
        self.exact.then(|| self.a.exactly(function, x)).flatten()
    }
}

/// The groups of `x` (as for [`Numbers::sum`]) each folded by `f`.
fn fold<E: Copy>(x: &[E], groups: &[Vec<u32>], f: impl Fn(E, E) -> E) -> Vec<E> {
    let Some((first, rest)) = groups.split_first() else {
        return Vec::new();
    };
    let mut acc: Vec<E> = first.iter().map(|&i| x[i as usize]).collect();
    for g in rest {
        for (s, &i) in acc.iter_mut().zip(g) {
            *s = f(*s, x[i as usize]);
        }
    }
    acc
}

impl Numbers for Compiler {
    type V = Shared;
    type Bit = tessera_protocols::hybrid::Value;

    /// Both at scale 2^f first; the product at 2^2f, truncated where it settles.
    fn mul(&mut self, x: &Shared, y: &Shared) -> Result<Shared, Error> {
        let (x, y) = (self.settle(*x)?, self.settle(*y)?);
        let (a, b) = self.same(x, y)?;
        let v = self.p.mul(a, b).map_err(Error::Compile)?;
        Ok(Shared {
            v,
            double: true,
            nonnegative: x.nonnegative && y.nonnegative,
        })
    }

    /// By [`crate::fixed::Fixed::multiplier`]: at scale 2^2f where it has f bits, truncated
    /// at once by its own bits where it has more.
    fn scale(&mut self, x: &Shared, c: f32) -> Result<Shared, Error> {
        let x = self.settle(*x)?;
        let (k, bits) = self.fixed.multiplier(c);
        let v = self.p.mul_const(x.v, k).map_err(Error::Compile)?;
        let y = Shared {
            v,
            double: true,
            nonnegative: x.nonnegative && c >= 0.0,
        };
        if bits == self.fixed.frac() {
            Ok(y)
        } else {
            self.truncated(y, bits)
        }
    }

    /// `c` at the value's scale.
    fn shift(&mut self, x: &Shared, c: f32) -> Result<Shared, Error> {
        let k = if x.double {
            self.fixed.encode_product(c)
        } else {
            self.fixed.encode(c)
        };
        let v = self.p.add_const(x.v, k).map_err(Error::Compile)?;
        Ok(Shared {
            nonnegative: x.nonnegative && c >= 0.0,
            ..x.like(v)
        })
    }

    fn add(&mut self, x: &Shared, y: &Shared) -> Result<Shared, Error> {
        let (x, y) = self.align(*x, *y)?;
        let (a, b) = self.same(x, y)?;
        let v = self.p.add(a, b).map_err(Error::Compile)?;
        Ok(Shared {
            nonnegative: x.nonnegative && y.nonnegative,
            ..x.like(v)
        })
    }

    fn sub(&mut self, x: &Shared, y: &Shared) -> Result<Shared, Error> {
        let (x, y) = self.align(*x, *y)?;
        let (a, b) = self.same(x, y)?;
        let v = self.p.sub(a, b).map_err(Error::Compile)?;
        Ok(Shared {
            nonnegative: false,
            ..x.like(v)
        })
    }

    fn nonnegative(&mut self, x: &Shared) -> Result<Self::Bit, Error> {
        Compiler::nonnegative(self, *x)
    }

    fn times(&mut self, bit: &Self::Bit, x: &Shared) -> Result<Shared, Error> {
        Compiler::times(self, *bit, *x)
    }

    fn gather(&mut self, x: &Shared, indices: &[u32]) -> Result<Shared, Error> {
        Compiler::gather(self, *x, indices.to_vec())
    }

    fn sum(&mut self, x: &Shared, groups: &[Vec<u32>]) -> Result<Shared, Error> {
        Compiler::sum(self, *x, groups.to_vec())
    }

    fn maximum(&mut self, x: &Shared, groups: &[Vec<u32>]) -> Result<Shared, Error> {
        Compiler::maximum(self, *x, groups.to_vec())
    }
}

/// `e^x`: below [`EXP_FLOOR`] held there (one comparison), then [`exp_above_floor`].
pub(crate) fn exp<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    if let Some(y) = n.exactly(Function::Exp, x) {
        return Ok(y);
    }
    // max(x, −64) = −64 + ReLU(x + 64).
    let room = n.shift(x, -EXP_FLOOR)?;
    let above = n.nonnegative(&room)?;
    let kept = n.times(&above, &room)?;
    let held = n.shift(&kept, EXP_FLOOR)?;
    exp_above_floor(n, &held)
}

/// `e^x` for x ≥ [`EXP_FLOOR`]: the cubic Taylor base `1 + t + t²/2 + t³/6` of t = x/2^6
/// (positive for t > −1.59), squared [`EXP_SQUARINGS`] times; its relative error below
/// t⁴/24 per base, 2^6 of them: x⁴/(24·2^18).
fn exp_above_floor<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    let t = n.scale(x, 1.0 / (1 << EXP_SQUARINGS) as f32)?;
    let t2 = n.mul(&t, &t)?;
    let t3 = n.mul(&t2, &t)?;
    let half = n.scale(&t2, 0.5)?;
    let sixth = n.scale(&t3, 1.0 / 6.0)?;
    let base = n.add(&t, &half)?;
    let base = n.add(&base, &sixth)?;
    let mut y = n.shift(&base, 1.0)?;
    for _ in 0..EXP_SQUARINGS {
        y = n.mul(&y, &y)?;
    }
    Ok(y)
}

/// `1/x` for x in [0.05, 250]: [`NEWTON_STEPS`] of Newton's `y ← y·(2 − x·y)` from
/// `3·e^(0.5 − x) + 0.003`.
pub(crate) fn reciprocal<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    if let Some(y) = n.exactly(Function::Reciprocal, x) {
        return Ok(y);
    }
    let t = n.scale(x, -1.0)?;
    let t = n.shift(&t, 0.5)?;
    let e = exp(n, &t)?;
    let e = n.scale(&e, 3.0)?;
    let mut y = n.shift(&e, 0.003)?;
    for _ in 0..NEWTON_STEPS {
        let xy = n.mul(x, &y)?;
        let t = n.scale(&xy, -1.0)?;
        let t = n.shift(&t, 2.0)?;
        y = n.mul(&y, &t)?;
    }
    Ok(y)
}

/// `σ(x) = 1/(1 + e^(−x))` by [`odd_piecewise`] about 1/2: [`SIGMOID_POLYNOMIAL`] of |x|
/// held at [`SIGMOID_CUT`] (beyond it the polynomial's value there, within 7.7·10⁻⁵ of σ).
pub(crate) fn sigmoid<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    if let Some(y) = n.exactly(Function::Sigmoid, x) {
        return Ok(y);
    }
    odd_piecewise(n, x, (SIGMOID_CUT, &SIGMOID_POLYNOMIAL), 0.5)
}

/// `c + sign(x)·(p(|x|) − c)` for a function symmetric about `(0, c)` (σ about 1/2, erf about
/// 0) whose values on x ≥ 0 the polynomial `p` gives on [0, cut], |x| held at the cut and
/// mapped to [−1, 1]: the piecewise-polynomial method of PUMA (Dong et al. 2023, §4.3) and
/// BOLT (Pang et al., S&P 2024, §5) as for [`gelu`]. Two comparisons (the sign, the cut),
/// three bit products, degree − 1 products in ⌈log₂ degree⌉ rounds; all in [−1, 1], so that
/// it fits ℓ = 32 too.
fn odd_piecewise<N: Numbers>(
    n: &mut N,
    x: &N::V,
    (cut, p): (f32, &[f32]),
    c: f32,
) -> Result<N::V, Error> {
    let (positive, magnitude) = magnitude(n, x)?;
    // v = 2·min(|x|, cut)/cut − 1 = 1 − 2·ReLU(cut − |x|)/cut.
    let (_, short) = room_below(n, &magnitude, cut)?;
    let v = n.scale(&short, -2.0 / cut)?;
    let v = n.shift(&v, 1.0)?;
    let s = polynomial(n, &v, p)?;
    // c + (2·[x ≥ 0] − 1)·(s − c) = 2·[x ≥ 0]·(s − c) + 2c − s.
    let twice = n.scale(&s, 2.0)?;
    let odd = n.shift(&twice, -2.0 * c)?;
    let chosen = n.times(&positive, &odd)?;
    let below = n.scale(&s, -1.0)?;
    let below = n.shift(&below, 2.0 * c)?;
    n.add(&below, &chosen)
}

/// Sigmoid's window: |x| ≤ 10, beyond which σ is 1 within 4.6·10⁻⁵.
const SIGMOID_CUT: f32 = 10.0;
/// `σ(x)` on [0, [`SIGMOID_CUT`]] in v = 2x/cut − 1 ∈ [−1, 1], lowest power first: the
/// minimax fit of degree 11 (Lawson's iterated weighted least squares on 20 001 points),
/// within 3.2·10⁻⁵.
const SIGMOID_POLYNOMIAL: [f32; 12] = [
    0.993_335_65,
    0.033_074_96,
    -0.084_095_86,
    0.137_232_28,
    -0.132_369_75,
    0.106_668_88,
    -0.191_355_37,
    0.136_294_56,
    0.209_993_17,
    -0.244_660_23,
    -0.045_498_99,
    0.081_366_85,
];
/// Products per element of sigmoid (and tanh): v², …, v¹¹.
pub(crate) const SIGMOID_PRODUCTS: usize = SIGMOID_POLYNOMIAL.len() - 2;

/// `([x ≥ 0], |x|)`: one comparison, and |x| = 2·[x ≥ 0]·x − x.
fn magnitude<N: Numbers>(n: &mut N, x: &N::V) -> Result<(N::Bit, N::V), Error> {
    let positive = n.nonnegative(x)?;
    let kept = n.times(&positive, x)?;
    let twice = n.scale(&kept, 2.0)?;
    let magnitude = n.sub(&twice, x)?;
    Ok((positive, magnitude))
}

/// `([t ≤ c], ReLU(c − t))` for a public `c`: one comparison; `c − min(t, c)`.
fn room_below<N: Numbers>(n: &mut N, t: &N::V, c: f32) -> Result<(N::Bit, N::V), Error> {
    let negated = n.scale(t, -1.0)?;
    let room = n.shift(&negated, c)?;
    let inside = n.nonnegative(&room)?;
    let short = n.times(&inside, &room)?;
    Ok((inside, short))
}

/// `tanh(x) = 2·σ(2x) − 1`.
pub(crate) fn tanh<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    if let Some(y) = n.exactly(Function::Tanh, x) {
        return Ok(y);
    }
    let doubled = n.scale(x, 2.0)?;
    let s = sigmoid(n, &doubled)?;
    let twice = n.scale(&s, 2.0)?;
    n.shift(&twice, -1.0)
}

/// `1/√x` for x in [0.01, 200]: [`NEWTON_STEPS`] of Newton's `y ← y·(3 − x·y²)/2` from
/// CrypTen's start `y₀ = 2.2·e^(−x/2 − 0.2) + 0.2 − x/1024`.
pub(crate) fn rsqrt<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    if let Some(root) = n.exactly(Function::Sqrt, x) {
        return n
            .exactly(Function::Reciprocal, &root)
            .ok_or_else(|| Error::Graph("a number system exact in √x but not in 1/x".to_owned()));
    }
    let t = n.scale(x, -0.5)?;
    let t = n.shift(&t, -0.2)?;
    let e = exp(n, &t)?;
    let e = n.scale(&e, 2.2)?;
    let e = n.shift(&e, 0.2)?;
    let lean = n.scale(x, 1.0 / 1024.0)?;
    let mut y = n.sub(&e, &lean)?;
    for _ in 0..NEWTON_STEPS {
        let yy = n.mul(&y, &y)?;
        let xyy = n.mul(x, &yy)?;
        let t = n.scale(&xyy, -0.5)?;
        let t = n.shift(&t, 1.5)?;
        y = n.mul(&y, &t)?;
    }
    Ok(y)
}

/// `√x = x·(1/√x)` for x in [0.01, 200].
pub(crate) fn sqrt<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    if let Some(y) = n.exactly(Function::Sqrt, x) {
        return Ok(y);
    }
    let r = rsqrt(n, x)?;
    n.mul(x, &r)
}

/// `erf(x)` by [`odd_piecewise`] about 0: [`ERF_POLYNOMIAL`] of |x| held at [`ERF_CUT`].
pub(crate) fn erf<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    if let Some(y) = n.exactly(Function::Erf, x) {
        return Ok(y);
    }
    odd_piecewise(n, x, (ERF_CUT, &ERF_POLYNOMIAL), 0.0)
}

/// Erf's window: |x| ≤ 3, beyond which erf is ±1 within 2.3·10⁻⁵.
const ERF_CUT: f32 = 3.0;
/// `erf(x)` on [0, [`ERF_CUT`]] in v = 2x/cut − 1 ∈ [−1, 1], lowest power first: the minimax
/// fit of degree 9 (as [`SIGMOID_POLYNOMIAL`]), within 2.3·10⁻⁵.
const ERF_POLYNOMIAL: [f32; 10] = [
    0.966_117,
    0.178_197_62,
    -0.402_025_46,
    0.471_915_75,
    -0.220_653_2,
    -0.132_083_22,
    0.206_900_64,
    -0.037_832_156,
    -0.050_372_38,
    0.019_790_962,
];
/// Products per element of erf: v², …, v⁹.
pub(crate) const ERF_PRODUCTS: usize = ERF_POLYNOMIAL.len() - 2;

/// `GELU(x) = (x + h(x))/2` with `h(x) = x·erf(x/√2)`, even and smooth, which is |x| to
/// 2.5·10⁻⁴ beyond [`GELU_CUT`] and [`GELU_POLYNOMIAL`] inside: the piecewise-polynomial
/// method of PUMA (Dong et al. 2023, §4.3) and BOLT (Pang et al., S&P 2024, §5), on |x| so
/// that one polynomial covers both sides. Two comparisons (the sign, the window), three bit
/// products, [`GELU_PRODUCTS`] products for the powers, in [−1, 1] (the polynomial's variable
/// is |x| held at the cut and mapped there), so that it fits ℓ = 32 too. Both ONNX forms: the
/// tanh one is within 4.7·10⁻⁴ of this.
pub(crate) fn gelu<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    if let Some(y) = n.exactly(Function::Gelu, x) {
        return Ok(y);
    }
    let (_, magnitude) = magnitude(n, x)?;
    // w = [|x| ≤ cut]; cut − min(|x|, cut) = w·(cut − |x|); v = 2·min(|x|, cut)/cut − 1.
    let (inside, short) = room_below(n, &magnitude, GELU_CUT)?;
    let v = n.scale(&short, -2.0 / GELU_CUT)?;
    let v = n.shift(&v, 1.0)?;
    let h = polynomial(n, &v, &GELU_POLYNOMIAL)?;
    // h(x) inside the window, |x| outside.
    let difference = n.sub(&h, &magnitude)?;
    let gated = n.times(&inside, &difference)?;
    let h = n.add(&magnitude, &gated)?;
    let sum = n.add(x, &h)?;
    n.scale(&sum, 0.5)
}

/// GELU's window: |x| ≤ 4, outside which `x·erf(x/√2)` is |x| within 2.5·10⁻⁴.
const GELU_CUT: f32 = 4.0;
/// `x·erf(x/√2)` on [0, [`GELU_CUT`]] in v = 2x/cut − 1 ∈ [−1, 1], lowest power first: the
/// minimax fit of degree 7 (Lawson's iterated weighted least squares on 20 001 points),
/// within 4.0·10⁻⁴ (2.0·10⁻⁴ of GELU).
const GELU_POLYNOMIAL: [f32; 8] = [
    1.909_297_7,
    2.343_150_8,
    -0.443_714_2,
    -0.028_487_467,
    0.651_521_8,
    -0.478_188,
    -0.116_835_43,
    0.163_397_52,
];
/// Products per element of GELU: v², …, v⁷.
pub(crate) const GELU_PRODUCTS: usize = GELU_POLYNOMIAL.len() - 2;

/// `Σ cₖ·vᵏ` for v in [−1, 1]: its powers each the product of the two halves' (vᵏ =
/// v^⌈k/2⌉·v^⌊k/2⌋), ⌈log₂ degree⌉ rounds of products, then a local sum.
fn polynomial<N: Numbers>(n: &mut N, v: &N::V, c: &[f32]) -> Result<N::V, Error> {
    let [c0, c1, higher @ ..] = c else {
        return Err(Error::Graph(format!(
            "a polynomial of {} coefficients",
            c.len()
        )));
    };
    // powers[i] = v^(i + 1).
    let mut powers = vec![v.clone()];
    for k in 2..c.len() {
        let (high, low) = (&powers[k.div_ceil(2) - 1], &powers[k / 2 - 1]);
        let product = n.mul(high, low)?;
        powers.push(product);
    }
    let linear = n.scale(v, *c1)?;
    let mut sum = n.shift(&linear, *c0)?;
    for (power, &ck) in powers[1..].iter().zip(higher) {
        let term = n.scale(power, ck)?;
        sum = n.add(&sum, &term)?;
    }
    Ok(sum)
}

/// Which function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// `e^x`.
    Exp,
    /// `1/(1 + e^(−x))`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `1/x`.
    Reciprocal,
    /// `√x`.
    Sqrt,
    /// `erf(x)`.
    Erf,
    /// `x·(1 + erf(x/√2))/2`.
    Gelu,
    /// GELU's tanh form, `x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2` (the same method).
    GeluTanh,
}

/// A smooth function of each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Smooth(pub Function);

impl Smooth {
    /// The function's method on `x`.
    fn apply<N: Numbers>(&self, n: &mut N, x: &N::V) -> Result<N::V, Error> {
        if let Some(y) = n.exactly(self.0, x) {
            return Ok(y);
        }
        match self.0 {
            Function::Exp => exp(n, x),
            Function::Sigmoid => sigmoid(n, x),
            Function::Tanh => tanh(n, x),
            Function::Reciprocal => reciprocal(n, x),
            Function::Sqrt => sqrt(n, x),
            Function::Erf => erf(n, x),
            Function::Gelu | Function::GeluTanh => gelu(n, x),
        }
    }
}

/// `x^p` for a constant p in {−1, −1/2, 1/2, 1, 2, 3}: products, `sqrt`, `rsqrt` or
/// `reciprocal` (ONNX's Pow; LayerNorm's `Pow(x − μ, 2)` as PyTorch exports it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Power(pub f32);

/// The exponents [`Power`] takes.
const EXPONENTS: [f32; 6] = [-1.0, -0.5, 0.5, 1.0, 2.0, 3.0];

impl Power {
    fn apply<N: Numbers>(&self, n: &mut N, x: &N::V) -> Result<N::V, Error> {
        match self.0 {
            2.0 => n.mul(x, x),
            3.0 => {
                let square = n.mul(x, x)?;
                n.mul(&square, x)
            }
            0.5 => sqrt(n, x),
            -0.5 => rsqrt(n, x),
            -1.0 => reciprocal(n, x),
            _ => Ok(x.clone()),
        }
    }
}

impl Operator for Power {
    fn ring_bits(&self) -> u32 {
        if self.0 < 1.0 { 64 } else { 32 }
    }

    fn kind(&self) -> &'static str {
        "Pow"
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let (per, relus) = match self.0 {
            2.0 => (1, 0),
            3.0 => (2, 0),
            0.5 => (RSQRT_PRODUCTS + 1, 1),
            -0.5 => (RSQRT_PRODUCTS, 1),
            -1.0 => (RECIPROCAL_PRODUCTS, 1),
            _ => (0, 0),
        };
        let n = io.output_len()?;
        Some(LayerCost {
            products: n.checked_mul(per)?,
            relus: n.checked_mul(relus)?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        self.apply(c, &args[0])
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        w.floats("exponent", &[], &[self.0]);
        "Pow"
    }
}

impl<A: Arith> Evaluate<A> for Power {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        let x = args[0].to_vec();
        // The reference's arithmetic cannot fail.
        self.apply(&mut Plain::new(a), &x).unwrap_or_default()
    }
}

/// Pow of a computed tensor by a constant scalar exponent of [`EXPONENTS`] (an input the
/// architecture keeps: [`super::ARCHITECTURE_INPUTS`]).
fn pow<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let (_, exponent) = crate::import::args::weight(imp, at, 1, "the exponent")?;
    match exponent[..] {
        [p] if EXPONENTS.contains(&p) => imp.push(at, super::Op::Power(Power(p)), vec![x], shape),
        _ => Err(
            format!("exponent {exponent:?}: one of {EXPONENTS:?} (1/x, 1/√x, √x, x, x², x³)")
                .into(),
        ),
    }
}

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Pow",
        import: pow,
        supported: "Pow (by a constant −1, −1/2, 1/2, 1, 2 or 3)",
    },
    Family {
        name: "Exp",
        import,
        supported: "Exp, Sigmoid, Tanh, Reciprocal (CrypTen's methods: limit form, Newton; ranges in the README)",
    },
    Family {
        name: "Sigmoid",
        import,
        supported: "",
    },
    Family {
        name: "Tanh",
        import,
        supported: "",
    },
    Family {
        name: "Reciprocal",
        import,
        supported: "",
    },
    Family {
        name: "Sqrt",
        import,
        supported: "Sqrt, Erf, Gelu (opset 20, both forms)",
    },
    Family {
        name: "Erf",
        import,
        supported: "",
    },
    Family {
        name: "Gelu",
        import,
        supported: "",
    },
];

impl Operator for Smooth {
    fn ring_bits(&self) -> u32 {
        match self.0 {
            Function::Exp | Function::Reciprocal | Function::Sqrt => 64,
            _ => 32,
        }
    }

    fn class(&self) -> &'static str {
        match self.0 {
            Function::Gelu | Function::GeluTanh => "GELU",
            _ => "Smooth",
        }
    }

    fn kind(&self) -> &'static str {
        match self.0 {
            Function::Exp => "Exp",
            Function::Sigmoid => "Sigmoid",
            Function::Tanh => "Tanh",
            Function::Reciprocal => "Reciprocal",
            Function::Sqrt => "Sqrt",
            Function::Erf => "Erf",
            Function::Gelu | Function::GeluTanh => "Gelu",
        }
    }

    /// Products per element: exp's squarings, Newton's two per step; sigmoid's comparisons
    /// and bit products counted as ReLUs.
    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let n = io.output_len()?;
        // Comparisons: exp's floor (and through it 1/x's and 1/√x's); sigmoid's sign and
        // cut.
        let (products, relus) = match self.0 {
            Function::Exp => (EXP_PRODUCTS, 1),
            Function::Reciprocal => (RECIPROCAL_PRODUCTS, 1),
            Function::Sigmoid | Function::Tanh => (SIGMOID_PRODUCTS, 2),
            Function::Sqrt => (RSQRT_PRODUCTS + 1, 1),
            Function::Erf => (ERF_PRODUCTS, 2),
            Function::Gelu | Function::GeluTanh => (GELU_PRODUCTS, 2),
        };
        Some(LayerCost {
            products: n.checked_mul(products)?,
            relus: n.checked_mul(relus)?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        self.apply(c, &args[0])
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        if self.0 == Function::GeluTanh {
            w.string("approximate", "tanh");
        }
        self.kind()
    }
}

impl<A: Arith> Evaluate<A> for Smooth {
    /// Float computes the function itself, as onnxruntime does; fixed point the method.
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        let x = args[0].to_vec();
        // The reference's arithmetic cannot fail.
        self.apply(&mut Plain::new(a), &x).unwrap_or_default()
    }
}

fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if crate::import::args::constant_input(imp, at, 0).is_some() {
        return super::fold::unary(imp, at);
    }
    let function = match at.node.op_type.as_str() {
        "Exp" => Function::Exp,
        "Sigmoid" => Function::Sigmoid,
        "Tanh" => Function::Tanh,
        "Sqrt" => Function::Sqrt,
        "Erf" => Function::Erf,
        "Gelu" => match Attributes::of(at.node).string("approximate")? {
            None | Some(b"none") => Function::Gelu,
            Some(b"tanh") => Function::GeluTanh,
            Some(_) => return Err("approximate must be none or tanh".into()),
        },
        _ => Function::Reciprocal,
    };
    let (x, shape) = computed(imp, at)?;
    imp.push(at, super::Op::Smooth(Smooth(function)), vec![x], shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{Fixed, Float};

    /// A method on 401 points of [lo, hi] in `a`, decoded, against `f`: the largest error,
    /// absolute or relative to 1 + the value's magnitude.
    fn worst<A: Arith>(
        a: &A,
        method: Function,
        (lo, hi): (f32, f32),
        f: fn(f64) -> f64,
        relative: bool,
    ) -> f64 {
        let xs: Vec<f32> = (0..=400)
            .map(|i| lo + (hi - lo) * i as f32 / 400.0)
            .collect();
        let encoded: Vec<A::E> = xs.iter().map(|&x| a.encode(x)).collect();
        let mut method_only = Plain::methods(a);
        let got = Smooth(method).apply(&mut method_only, &encoded).unwrap();
        xs.iter()
            .zip(got)
            .map(|(&x, g)| {
                let want = f(f64::from(x));
                let err = (f64::from(a.decode(g)) - want).abs();
                if relative {
                    err / (1.0 + want.abs())
                } else {
                    err
                }
            })
            .fold(0.0, f64::max)
    }

    /// The bounds the module states, in float (the methods' own error) and in the fixed point
    /// they want (ℓ = 64, f = 16: the truncations' error on top, amplified by exp's squarings).
    #[test]
    fn the_methods_keep_their_stated_error() {
        let fixed = Fixed::new(64, 16).unwrap();
        let sigma = |x: f64| 1.0 / (1.0 + (-x).exp());
        let reciprocal = |x: f64| 1.0 / x;
        type Case = (Function, (f32, f32), fn(f64) -> f64, bool, [f64; 2]);
        let erf: fn(f64) -> f64 = crate::fixed::tests_erf;
        let gelu: fn(f64) -> f64 = |x| 0.5 * x * (1.0 + crate::fixed::tests_erf(x / 2f64.sqrt()));
        let cases: [Case; 8] = [
            (Function::Exp, (-16.0, 0.0), f64::exp, false, [5e-6, 2.5e-3]),
            (Function::Exp, (0.0, 4.0), f64::exp, true, [1e-4, 4e-3]),
            (
                Function::Reciprocal,
                (0.05, 250.0),
                reciprocal,
                true,
                [1e-7, 1e-4],
            ),
            (Function::Sigmoid, (-40.0, 40.0), sigma, false, [8e-5, 3e-4]),
            (
                Function::Tanh,
                (-20.0, 20.0),
                f64::tanh,
                false,
                [1.6e-4, 5e-4],
            ),
            (Function::Sqrt, (0.01, 200.0), f64::sqrt, true, [1e-5, 2e-3]),
            (Function::Erf, (-6.0, 6.0), erf, false, [5e-5, 3e-4]),
            (Function::Gelu, (-6.0, 6.0), gelu, false, [3e-4, 4e-4]),
        ];
        for (function, range, f, relative, [float_bound, fixed_bound]) in cases {
            let float = worst(&Float, function, range, f, relative);
            let fixed = worst(&fixed, function, range, f, relative);
            eprintln!("{function:?} on {range:?}: float {float:.2e}, fixed {fixed:.2e}");
            assert!(
                float < float_bound,
                "{function:?} on {range:?}: float {float}"
            );
            assert!(
                fixed < fixed_bound,
                "{function:?} on {range:?}: fixed {fixed}"
            );
        }
    }

    /// The piecewise polynomials run in [−1, 1], so ℓ = 32 holds them: at f = 12 GELU within
    /// 2·10⁻³, sigmoid and erf within 3·10⁻³, tanh (twice sigmoid's) within 4·10⁻³.
    #[test]
    fn piecewise_polynomials_fit_the_32_bit_ring() {
        let gelu: fn(f64) -> f64 = |x| 0.5 * x * (1.0 + crate::fixed::tests_erf(x / 2f64.sqrt()));
        let sigma: fn(f64) -> f64 = |x| 1.0 / (1.0 + (-x).exp());
        let narrow = Fixed::new(32, 12).unwrap();
        type Case = (Function, fn(f64) -> f64, f64);
        let cases: [Case; 4] = [
            (Function::Gelu, gelu, 2e-3),
            (Function::Sigmoid, sigma, 3e-3),
            (Function::Tanh, f64::tanh, 4e-3),
            (Function::Erf, crate::fixed::tests_erf, 3e-3),
        ];
        for (function, f, bound) in cases {
            let error = worst(&narrow, function, (-20.0, 20.0), f, false);
            eprintln!("{function:?} at ℓ = 32, f = 12: {error:.2e}");
            assert!(error < bound, "{function:?}: {error}");
        }
    }
}
