//! MatMul (ONNX Operators: MatMul, NumPy's `matmul`): by a constant, a dense layer
//! ([`super::Dense`]); of two computed tensors (attention's Q·Kᵀ and softmax·V), a batch of
//! matrix products over the leading axes, broadcast where one has 1, each product one matrix
//! triple on A (SecureML §4.1) or one mask product on α (ABY2.0 §3.3)
//! ([`tessera_protocols::hybrid::Program::matmul`]): 1 round; the product at scale 2^2f, its
//! truncation deferred (ℓ = 32) or done at once (ℓ = 64), as Mul's.

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::constant_input;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::MatShape;

/// The matrix product of two computed tensors over their last two axes, batched over the
/// leading ones (per sample, of one rank ≥ 2; each leading axis equal or 1 in one of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatMul;

pub(super) const FAMILY: &[Family] = &[Family {
    name: "MatMul",
    import: matmul,
    supported: "MatMul (by a constant; of two computed tensors, batched over leading axes)",
}];

/// The shape of the batch of products of `x` by `y` (per sample) into `out`, one sample's:
/// the product of the output's leading axes, and the matrices'; `None` where the shapes do
/// not fit (a model built in code: [`crate::model::Model::check`] refuses it).
fn shape_of(x: &[usize], y: &[usize], out: &[usize]) -> Option<MatShape> {
    let r = out.len();
    let fits = r >= 2 && x.len() == r && y.len() == r && x[r - 1] == y[r - 2];
    let fits = fits && out[r - 2..] == [x[r - 2], y[r - 1]];
    fits.then(|| MatShape {
        batch: out[..r - 2].iter().product(),
        rows: x[r - 2],
        inner: x[r - 1],
        cols: y[r - 1],
    })
}

/// The output's shape, or why there is none: ranks of at least 2, equal (a lower rank would
/// align the batch axis with another), the inner axes equal, the leading axes broadcast.
fn output_shape(x: &[usize], y: &[usize]) -> Result<Vec<usize>, Refusal> {
    let r = x.len();
    if r < 2 || y.len() != r {
        return Err(format!(
            "operands of per-sample shapes {x:?} and {y:?}: both need one rank of at least 2"
        )
        .into());
    }
    if x[r - 1] != y[r - 2] {
        return Err(format!("operands of shapes {x:?} and {y:?} do not multiply").into());
    }
    let mut out = super::broadcast_shape(&x[..r - 2], &y[..r - 2])?;
    out.extend([x[r - 2], y[r - 1]]);
    Ok(out)
}

/// The operand of shape `from` spread over the output's leading axes `lead` (its last two
/// axes kept): [`super::mul::spread`] to that shape.
fn spread(from: &[usize], lead: &[usize]) -> Option<Vec<u32>> {
    let to: Vec<usize> = lead
        .iter()
        .chain(&from[from.len() - 2..])
        .copied()
        .collect();
    super::mul::spread(from, &to)
}

impl Operator for MatMul {
    fn kind(&self) -> &'static str {
        "MatMul"
    }

    fn class(&self) -> &'static str {
        "MatMul (secret)"
    }

    /// A product of two computed values per multiply-add.
    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let s = shape_of(io.inputs[0], io.inputs[1], io.output)?;
        Some(LayerCost {
            products: s.out()?.checked_mul(s.inner)?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let one = shape_of(io.inputs[0], io.inputs[1], io.output).ok_or_else(|| {
            Error::Graph(format!("node {:?}: shapes that do not multiply", io.name))
        })?;
        let lead = &io.output[..io.output.len() - 2];
        let mut xy = [c.settle(args[0])?, c.settle(args[1])?];
        for (v, shape) in xy.iter_mut().zip(&io.inputs) {
            if let Some(at) = spread(shape, lead) {
                *v = c.gather(*v, at)?;
            }
        }
        let (a, b) = c.same(xy[0], xy[1])?;
        let shape = MatShape {
            batch: one.batch * c.batch,
            ..one
        };
        let y = Shared {
            v: c.p.matmul(a, b, shape).map_err(Error::Compile)?,
            double: true,
            nonnegative: false,
        };
        super::mul::product(c, y)
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "MatMul"
    }
}

impl<A: Arith> Evaluate<A> for MatMul {
    /// (The model's check refused shapes that do not multiply: nothing to compute then.)
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let Some(s) = shape_of(io.inputs[0], io.inputs[1], io.output) else {
            return Vec::new();
        };
        let lead = &io.output[..io.output.len() - 2];
        let operand = |k: usize| match spread(io.inputs[k], lead) {
            Some(at) => at.iter().map(|&i| args[k][i as usize]).collect(),
            None => args[k].to_vec(),
        };
        let (x, y) = (operand(0), operand(1));
        let zeros = vec![A::E::default(); s.batch * s.rows];
        let all = (s.batch * s.rows, s.inner, s.cols);
        kernels::matmul_bias(a, &x, &y, &zeros, all, s.batch)
    }
}

/// MatMul: by a constant second operand, a dense layer; of two computed tensors, [`MatMul`].
fn matmul<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    match (constant_input(imp, at, 0), constant_input(imp, at, 1)) {
        (None, Some(_)) => super::dense::by_constant(imp, at),
        (None, None) => {
            let [a, b] = [0, 1].map(|k| at.node.input.get(k).map_or("", String::as_str));
            let (a, b) = (imp.value(a)?, imp.value(b)?);
            let out = output_shape(&imp.shapes[a], &imp.shapes[b])?;
            imp.push(at, super::Op::MatMul(MatMul), vec![a, b], out)
        }
        _ => Err("the constant must be the second operand".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_multiply_and_broadcast_or_are_refused() {
        assert_eq!(
            output_shape(&[2, 3, 4], &[2, 4, 5]).ok().unwrap(),
            [2, 3, 5]
        );
        assert_eq!(
            output_shape(&[1, 3, 4], &[6, 4, 5]).ok().unwrap(),
            [6, 3, 5]
        );
        assert_eq!(output_shape(&[3, 4], &[4, 1]).ok().unwrap(), [3, 1]);
        for (x, y) in [
            (&[3, 4][..], &[5, 4][..]),
            (&[4][..], &[4][..]),
            (&[2, 3, 4][..], &[4, 5][..]),
            (&[2, 3, 4][..], &[3, 4, 5][..]),
        ] {
            assert!(output_shape(x, y).is_err(), "{x:?} {y:?}");
        }
        assert_eq!(spread(&[1, 3, 4], &[2]).unwrap().len(), 24);
        assert!(spread(&[2, 3, 4], &[2]).is_none());
    }
}
