//! Products (ONNX Operators: Mul, Div, Neg): of two computed tensors, elementwise with
//! NumPy broadcasting (squeeze-excite's per-channel scale, gates such as HardSwish's
//! `x·HardSigmoid(x)`), one Beaver triple per element on A and one mask product on α (ABY2.0
//! §3.3), 1 round; of a computed tensor and a constant (Mul, or Div by its reciprocal), a
//! private linear map of the server's with one coefficient per distinct constant
//! ([`tessera_protocols::hybrid::linear`]): the constants are weights, held private like a
//! BatchNormalization's scale; negation, local. A product leaves the value at scale 2^2f, its
//! truncation deferred as a linear layer's is (ℓ = 32) or done at once (ℓ = 64).

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{computed, constant_input, weight};
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::LinearMap;

/// The elementwise product of two computed tensors, either broadcast to the output's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mul;

/// A computed tensor times constants: `factors` of per-sample shape `shape` (of the output's
/// rank, broadcast to it). Div by a constant is the product by its reciprocal.
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    /// The factors' shape: each axis 1 or the output's.
    pub shape: Vec<usize>,
    /// The factors, row-major.
    pub factors: Vec<f32>,
}

/// `−x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Neg;

/// The elementwise quotient of two computed tensors, either broadcast: `x·(1/y)`, the
/// reciprocal by `super::smooth::reciprocal` (y in [0.05, 250]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divide;

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Mul",
        import: mul,
        supported: "Mul (of computed tensors, broadcast; by a constant)",
    },
    Family {
        name: "Div",
        import: div,
        supported: "Div (by a constant; by a computed tensor in [0.05, 250], broadcast)",
    },
    Family {
        name: "Neg",
        import: neg,
        supported: "Neg",
    },
];

/// `x` (of shape `from`) read at every place of `to`: the gather of broadcasting, or `None`
/// where the shapes are equal.
pub(super) fn spread(from: &[usize], to: &[usize]) -> Option<Vec<u32>> {
    (from != to).then(|| {
        let at = kernels::broadcast_indices(from, to);
        at.into_iter().map(|i| i as u32).collect()
    })
}

/// A product at scale 2^2f: its truncation deferred or done at once
/// ([`crate::secure::Truncation`]).
pub(super) fn product(c: &mut Compiler, y: Shared) -> Result<Shared, Error> {
    if c.defers_truncation() {
        Ok(y)
    } else {
        c.settle(y)
    }
}

impl Operator for Mul {
    fn kind(&self) -> &'static str {
        "Mul"
    }

    fn class(&self) -> &'static str {
        "Mul"
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        Some(LayerCost {
            products: io.output_len()?,
            ..LayerCost::default()
        })
    }

    /// Both at scale 2^f and in one sharing, each broadcast by a local gather.
    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let mut xy = [c.settle(args[0])?, c.settle(args[1])?];
        for (v, shape) in xy.iter_mut().zip(&io.inputs) {
            if let Some(at) = spread(shape, io.output) {
                *v = c.gather(*v, at)?;
            }
        }
        let (a, b) = c.same(xy[0], xy[1])?;
        let y = Shared {
            v: c.p.mul(a, b).map_err(Error::Compile)?,
            double: true,
            nonnegative: xy[0].nonnegative && xy[1].nonnegative,
        };
        product(c, y)
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "Mul"
    }
}

impl<A: Arith> Evaluate<A> for Mul {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let at = |k: usize| kernels::broadcast_indices(io.inputs[k], io.output);
        let (x, y) = (at(0), at(1));
        let pairs = x.into_iter().zip(y);
        pairs
            .map(|(i, j)| a.rescale(a.mul(args[0][i], args[1][j])))
            .collect()
    }
}

impl Scale {
    /// Its linear map: one group per factor, that factor's one coefficient times the output
    /// places it multiplies (as many for each factor), then the gather back to the output's
    /// order.
    fn map(&self, out: &[usize]) -> Result<(LinearMap, Vec<u32>), Error> {
        let cell = kernels::broadcast_indices(&self.shape, out);
        let groups = self.factors.len();
        let per_group = cell.len() / groups.max(1);
        let mut places: Vec<Vec<u32>> = vec![Vec::with_capacity(per_group); groups];
        let mut back = Vec::with_capacity(cell.len());
        for (q, &g) in cell.iter().enumerate() {
            back.push((g * per_group + places[g].len()) as u32);
            places[g].push(q as u32);
        }
        let gather = places.concat();
        let map = LinearMap::grouped(groups, (groups, 1, per_group), cell.len(), gather)
            .map_err(Error::Compile)?;
        Ok((map, back))
    }
}

impl Operator for Scale {
    fn kind(&self) -> &'static str {
        "Mul (constant)"
    }

    fn weights(&self) -> Vec<&[f32]> {
        vec![&self.factors]
    }

    fn ranges(&self) -> [&[f32]; 2] {
        [&self.factors, &[]]
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        Some(LayerCost {
            multiplications: io.output_len()?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let (map, back) = self.map(io.output)?;
        let zeros = vec![0.0; self.factors.len()];
        let y = c.linear(args[0], map, &self.factors, &zeros)?;
        c.gather(y, back)
    }

    /// The factors with the batch axis of 1.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let shape: Vec<usize> = std::iter::once(1).chain(self.shape.clone()).collect();
        w.floats("factor", &shape, &self.factors);
        "Mul"
    }
}

impl<A: Arith> Evaluate<A> for Scale {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        vec![a.encode_all(&self.factors)]
    }

    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let cell = kernels::broadcast_indices(&self.shape, io.output);
        let pairs = args[0].iter().zip(cell);
        pairs.map(|(&x, g)| a.rescale(a.mul(k[0][g], x))).collect()
    }
}

impl Operator for Neg {
    fn kind(&self) -> &'static str {
        "Neg"
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        let x = args[0];
        let v = c.p.neg(x.v).map_err(Error::Compile)?;
        Ok(Shared {
            nonnegative: false,
            ..x.like(v)
        })
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "Neg"
    }
}

impl<A: Arith> Evaluate<A> for Neg {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        let zero = A::E::default();
        args[0].iter().map(|&v| a.sub(zero, v)).collect()
    }
}

/// Mul: of constants (folded), of two computed tensors, or of a computed
/// tensor and a constant.
fn mul<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let constants = (constant_input(imp, at, 0), constant_input(imp, at, 1));
    match constants {
        (Some(_), Some(_)) => super::fold::binary(imp, at),
        (None, None) => {
            let [a, b] = [0, 1].map(|k| at.node.input.get(k).map_or("", String::as_str));
            let (a, b) = (imp.value(a)?, imp.value(b)?);
            let out = super::broadcast_shape(&imp.shapes[a], &imp.shapes[b])?;
            imp.push(at, super::Op::Mul(Mul), vec![a, b], out)
        }
        (first, _) => scale(imp, at, usize::from(first.is_none()), false),
    }
}

/// Div: a computed tensor by a constant, as its product by the reciprocals (a stripped
/// architecture's zeros stay zeros: only the shape counts there), or by a computed tensor.
fn div<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    match (constant_input(imp, at, 0), constant_input(imp, at, 1)) {
        (Some(_), Some(_)) => return super::fold::binary(imp, at),
        (Some(_), None) => return Err("divides a constant".into()),
        _ => {}
    }
    if constant_input(imp, at, 1).is_some() {
        return scale(imp, at, 1, true);
    }
    let [a, b] = [0, 1].map(|k| at.node.input.get(k).map_or("", String::as_str));
    let (a, b) = (imp.value(a)?, imp.value(b)?);
    let out = super::broadcast_shape(&imp.shapes[a], &imp.shapes[b])?;
    imp.push(at, super::Op::Divide(Divide), vec![a, b], out)
}

impl Operator for Divide {
    fn ring_bits(&self) -> u32 {
        64
    }

    fn kind(&self) -> &'static str {
        "Div"
    }

    /// The reciprocal's products per divisor, one per quotient.
    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let divisors: usize = io.inputs[1].iter().product();
        let reciprocals = divisors.checked_mul(super::smooth::RECIPROCAL_PRODUCTS)?;
        Some(LayerCost {
            products: io.output_len()?.checked_add(reciprocals)?,
            relus: divisors,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let r = super::smooth::reciprocal(c, &args[1])?;
        Mul.lower(c, &[args[0], r], io)
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "Div"
    }
}

impl<A: Arith> Evaluate<A> for Divide {
    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let y = args[1].to_vec();
        let mut plain = super::smooth::Plain::new(a);
        // The reference's arithmetic cannot fail.
        let r = super::smooth::reciprocal(&mut plain, &y).unwrap_or_default();
        Mul.eval(a, k, &[args[0], &r], io)
    }
}

/// The computed input times the constant input `k` (or its reciprocal), broadcast to the
/// computed input's shape.
fn scale<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    k: usize,
    reciprocal: bool,
) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let (cshape, mut factors) = weight(imp, at, k, "the constant")?;
    let aligned = kernels::aligned(&cshape, &shape)
        .ok_or_else(|| format!("a constant of shape {cshape:?} does not broadcast to {shape:?}"))?;
    if reciprocal && imp.zeros.is_none() {
        if let Some(zero) = factors.iter().position(|&f| f == 0.0) {
            return Err(format!("divides by zero (element {zero} of the constant)").into());
        }
        factors.iter_mut().for_each(|f| *f = 1.0 / *f);
    }
    let op = super::Op::Scale(Scale {
        shape: aligned,
        factors,
    });
    imp.push(at, op, vec![x], shape)
}

fn neg<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if constant_input(imp, at, 0).is_some() {
        return super::fold::unary(imp, at);
    }
    let (x, shape) = computed(imp, at)?;
    imp.push(at, super::Op::Neg(Neg), vec![x], shape)
}
