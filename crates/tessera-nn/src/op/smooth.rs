//! Smooth functions of each element (ONNX Operators: Exp, Sigmoid, Tanh, Reciprocal), by
//! CrypTen's methods (Knott et al., NeurIPS 2021, App. C.1): each written once over
//! [`Numbers`], which the fixed-point reference and the protocol both implement, so that the
//! two compute the same sequence of products and comparisons (each truncation a unit apart);
//! float computes the functions themselves, as onnxruntime does. Their error against float
//! (measured on 401 points by this module's test; method alone, then at ℓ = 64, f = 16):
//!
//! - exp by the limit `(1 + x/2^8)^(2^8)`, eight squarings: on [−16, 0] 1.1·10⁻³ / 3.4·10⁻³
//!   absolute; on [0, 4] 3.0 / 3.5 % of 1 + e^x. x must stay below 10 (the squares' range at
//!   f = 16) and above −256 (the base's sign);
//! - 1/x by ten Newton steps `y ← y·(2 − x·y)` from `y₀ = 3·e^(0.5 − x) + 0.003`, for x in
//!   [0.05, 250] (where the start is within the steps' reach): 7.7·10⁻⁸ / 4.6·10⁻⁵ of 1 + 1/x;
//! - sigmoid as `σ(|x|) = 1/(1 + e^(−|x|))` with |x| held below 16, then `1 − σ(|x|)` for
//!   negative x (one comparison, its bit used twice): 8.6·10⁻⁴ / 1.5·10⁻³ for every x;
//! - tanh as `2·σ(2x) − 1`: 1.7·10⁻³ / 3.0·10⁻³.
//!
//! The protocol is a further 2^8 units at most from the reference (exp's squarings double a
//! truncation's unit each). Cost per element: exp 8 products (8 rounds); 1/x 28 (28 rounds);
//! sigmoid and tanh 28 products, two comparisons and three bit products. They want ℓ = 64:
//! at ℓ = 32 the squares leave the ring past x ≈ 4 and f ≤ 10 loses their precision.

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::computed;
use crate::import::{At, Importer, Refusal};
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};

/// The squarings of exp's limit form.
const EXP_SQUARINGS: usize = 8;
/// Newton's steps for 1/x.
const NEWTON_STEPS: usize = 10;
/// The magnitude sigmoid's input is held to: σ(16) is 1 within 1.2·10⁻⁷.
const SIGMOID_CLIP: f32 = 16.0;

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
    /// `bit·x`.
    fn times(&mut self, bit: &Self::Bit, x: &Self::V) -> Result<Self::V, Error>;
}

/// The fixed-point (or float) reference.
pub(crate) struct Plain<'a, A: Arith>(pub(crate) &'a A);

impl<A: Arith> Numbers for Plain<'_, A> {
    type V = Vec<A::E>;
    type Bit = Vec<bool>;

    fn mul(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error> {
        let a = self.0;
        Ok(x.iter()
            .zip(y)
            .map(|(&u, &v)| a.rescale(a.mul(u, v)))
            .collect())
    }

    fn scale(&mut self, x: &Self::V, c: f32) -> Result<Self::V, Error> {
        let (a, k) = (self.0, self.0.encode(c));
        Ok(x.iter().map(|&u| a.rescale(a.mul(k, u))).collect())
    }

    fn shift(&mut self, x: &Self::V, c: f32) -> Result<Self::V, Error> {
        let (a, k) = (self.0, self.0.encode(c));
        Ok(x.iter().map(|&u| a.add(u, k)).collect())
    }

    fn add(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error> {
        let a = self.0;
        Ok(x.iter().zip(y).map(|(&u, &v)| a.add(u, v)).collect())
    }

    fn sub(&mut self, x: &Self::V, y: &Self::V) -> Result<Self::V, Error> {
        let a = self.0;
        Ok(x.iter().zip(y).map(|(&u, &v)| a.sub(u, v)).collect())
    }

    fn nonnegative(&mut self, x: &Self::V) -> Result<Self::Bit, Error> {
        let zero = A::E::default();
        Ok(x.iter().map(|&u| self.0.max(u, zero) == u).collect())
    }

    fn times(&mut self, bit: &Self::Bit, x: &Self::V) -> Result<Self::V, Error> {
        let zero = A::E::default();
        Ok(bit
            .iter()
            .zip(x)
            .map(|(&b, &u)| if b { u } else { zero })
            .collect())
    }
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

    fn scale(&mut self, x: &Shared, c: f32) -> Result<Shared, Error> {
        let x = self.settle(*x)?;
        let k = self.fixed.encode(c);
        let v = self.p.mul_const(x.v, k).map_err(Error::Compile)?;
        Ok(Shared {
            v,
            double: true,
            nonnegative: x.nonnegative && c >= 0.0,
        })
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
}

/// `e^x` ([`EXP_SQUARINGS`] squarings of `1 + x/2^8`).
pub(crate) fn exp<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    let base = n.scale(x, 1.0 / (1 << EXP_SQUARINGS) as f32)?;
    let mut y = n.shift(&base, 1.0)?;
    for _ in 0..EXP_SQUARINGS {
        y = n.mul(&y, &y)?;
    }
    Ok(y)
}

/// `1/x` for x in [0.05, 250] ([`NEWTON_STEPS`] of Newton's from `3·e^(0.5 − x) + 0.003`).
pub(crate) fn reciprocal<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
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

/// `σ(x) = 1/(1 + e^(−x))`, from σ(|x|) with |x| held below [`SIGMOID_CLIP`]: `σ(x) = 1 −
/// σ(|x|) + [x ≥ 0]·(2σ(|x|) − 1)`.
pub(crate) fn sigmoid<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    let positive = n.nonnegative(x)?;
    // |x| = 2·[x ≥ 0]·x − x.
    let kept = n.times(&positive, x)?;
    let twice = n.scale(&kept, 2.0)?;
    let magnitude = n.sub(&twice, x)?;
    // min(|x|, 16) = 16 − ReLU(16 − |x|).
    let negated = n.scale(&magnitude, -1.0)?;
    let room = n.shift(&negated, SIGMOID_CLIP)?;
    let inside = n.nonnegative(&room)?;
    let kept = n.times(&inside, &room)?;
    let negated = n.scale(&kept, -1.0)?;
    let held = n.shift(&negated, SIGMOID_CLIP)?;
    // σ(|x|) = 1/(1 + e^(−|x|)), in [1/2, 1).
    let negated = n.scale(&held, -1.0)?;
    let e = exp(n, &negated)?;
    let denominator = n.shift(&e, 1.0)?;
    let s = reciprocal(n, &denominator)?;
    let twice = n.scale(&s, 2.0)?;
    let odd = n.shift(&twice, -1.0)?;
    let chosen = n.times(&positive, &odd)?;
    let below = n.scale(&s, -1.0)?;
    let below = n.shift(&below, 1.0)?;
    n.add(&below, &chosen)
}

/// `tanh(x) = 2·σ(2x) − 1`.
pub(crate) fn tanh<N: Numbers>(n: &mut N, x: &N::V) -> Result<N::V, Error> {
    let doubled = n.scale(x, 2.0)?;
    let s = sigmoid(n, &doubled)?;
    let twice = n.scale(&s, 2.0)?;
    n.shift(&twice, -1.0)
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
}

/// A smooth function of each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Smooth(pub Function);

impl Smooth {
    /// The function's method on `x`.
    fn apply<N: Numbers>(&self, n: &mut N, x: &N::V) -> Result<N::V, Error> {
        match self.0 {
            Function::Exp => exp(n, x),
            Function::Sigmoid => sigmoid(n, x),
            Function::Tanh => tanh(n, x),
            Function::Reciprocal => reciprocal(n, x),
        }
    }
}

pub(super) const FAMILY: &[Family] = &[
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
];

impl Operator for Smooth {
    fn kind(&self) -> &'static str {
        match self.0 {
            Function::Exp => "Exp",
            Function::Sigmoid => "Sigmoid",
            Function::Tanh => "Tanh",
            Function::Reciprocal => "Reciprocal",
        }
    }

    /// Products per element: exp's squarings, Newton's two per step; sigmoid's comparisons
    /// and bit products counted as ReLUs.
    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let n = io.output_len()?;
        let exp = EXP_SQUARINGS;
        let reciprocal = exp + 2 * NEWTON_STEPS;
        let (products, relus) = match self.0 {
            Function::Exp => (exp, 0),
            Function::Reciprocal => (reciprocal, 0),
            Function::Sigmoid | Function::Tanh => (reciprocal, 2),
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

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        self.kind()
    }
}

impl<A: Arith> Evaluate<A> for Smooth {
    /// Float computes the function itself, as onnxruntime does; fixed point the method.
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        if let Some(exact) = a.exactly(self.0, args[0]) {
            return exact;
        }
        let x = args[0].to_vec();
        // The reference's arithmetic cannot fail.
        self.apply(&mut Plain(a), &x).unwrap_or_default()
    }
}

fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let function = match at.node.op_type.as_str() {
        "Exp" => Function::Exp,
        "Sigmoid" => Function::Sigmoid,
        "Tanh" => Function::Tanh,
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
        let got = Smooth(method).apply(&mut Plain(a), &encoded).unwrap();
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
        let cases: [Case; 5] = [
            (Function::Exp, (-16.0, 0.0), f64::exp, false, [1.1e-3, 4e-3]),
            (Function::Exp, (0.0, 4.0), f64::exp, true, [0.031, 0.037]),
            (
                Function::Reciprocal,
                (0.05, 250.0),
                reciprocal,
                true,
                [1e-7, 1e-4],
            ),
            (Function::Sigmoid, (-40.0, 40.0), sigma, false, [9e-4, 2e-3]),
            (
                Function::Tanh,
                (-20.0, 20.0),
                f64::tanh,
                false,
                [1.8e-3, 3.5e-3],
            ),
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
}
