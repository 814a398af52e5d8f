//! Gemm and MatMul by a constant (ONNX Operators: Gemm, MatMul; [`super::matmul`] imports the
//! latter): `y = W·x + b`, a private
//! linear map of the server's on α (MOTION2NX, Braun et al., App. A.3), its bias at the
//! products' scale.

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{bias, computed, weight};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::LinearMap;

/// A dense layer: `y = W·x + b` with `W` of `outputs × inputs`, row-major, on the input's
/// last axis (of `inputs`): at each position of the leading axes (each token of a sequence)
/// alike, one linear map whose columns are the positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Dense {
    /// Input features.
    pub inputs: usize,
    /// Output features.
    pub outputs: usize,
    /// `outputs × inputs`.
    pub weight: Vec<f32>,
    /// `outputs`.
    pub bias: Vec<f32>,
}

pub(super) const FAMILY: &[Family] = &[Family {
    name: "Gemm",
    import: gemm,
    supported: "Gemm",
}];

impl Operator for Dense {
    fn kind(&self) -> &'static str {
        "Gemm"
    }

    fn class(&self) -> &'static str {
        "MatMul"
    }

    fn weights(&self) -> Vec<&[f32]> {
        vec![&self.weight, &self.bias]
    }

    fn ranges(&self) -> [&[f32]; 2] {
        [&self.weight, &self.bias]
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let positions = self.positions(io)?;
        Some(LayerCost {
            multiplications: self
                .inputs
                .checked_mul(self.outputs)?
                .checked_mul(positions)?,
            ..LayerCost::default()
        })
    }

    /// One column per position; the outputs, feature by position, gathered back to position by
    /// feature.
    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let positions = self.positions(io).ok_or_else(|| {
            Error::Graph(format!("node {:?}: an input of {:?}", io.name, io.input()))
        })?;
        let (inputs, outputs) = (self.inputs, self.outputs);
        if positions == 1 {
            let map = LinearMap::dense(inputs, outputs).map_err(Error::Compile)?;
            return c.linear(args[0], map, &self.weight, &self.bias);
        }
        let at = |k: usize, s: usize| (s * inputs + k) as u32;
        let columns = (0..inputs).flat_map(|k| (0..positions).map(move |s| at(k, s)));
        let map = LinearMap::new(
            outputs,
            inputs,
            positions,
            inputs * positions,
            columns.collect(),
        );
        let y = c.linear(
            args[0],
            map.map_err(Error::Compile)?,
            &self.weight,
            &self.bias,
        )?;
        let back =
            (0..positions).flat_map(|s| (0..outputs).map(move |r| (r * positions + s) as u32));
        c.gather(y, back.collect())
    }

    /// Gemm on one position; MatMul by `Wᵀ` on several, its bias (if any) by an Add after it.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let (inputs, outputs) = (self.inputs, self.outputs);
        if w.out_shape.len() == 1 {
            w.floats("weight", &[outputs, inputs], &self.weight);
            w.floats("bias", &[outputs], &self.bias);
            w.int("transB", 1);
            return "Gemm";
        }
        let transposed = kernels::transpose(&self.weight, &[outputs, inputs], &[1, 0]);
        w.floats("weight", &[inputs, outputs], &transposed);
        if self.bias.iter().any(|&b| b != 0.0) {
            w.floats_added("bias", &[outputs], &self.bias);
        }
        "MatMul"
    }
}

impl Dense {
    /// Positions of the leading axes of the input (`None` if its last axis is not `inputs`
    /// long: a model built in code, which [`crate::model::Model::check`] refuses).
    fn positions(&self, io: &Io<'_>) -> Option<usize> {
        let shape = io.input();
        if shape.last() != Some(&self.inputs) {
            return None;
        }
        shape[..shape.len() - 1]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
    }
}

impl<A: Arith> Evaluate<A> for Dense {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        vec![a.encode_all(&self.weight), a.encode_products(&self.bias)]
    }

    /// Every position at once: `W · Xᵀ` for the positions as the columns of `Xᵀ`.
    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        let positions = args[0].len() / self.inputs.max(1);
        let x = &args[0][..positions * self.inputs];
        let columns = kernels::transpose(x, &[positions, self.inputs], &[1, 0]);
        let shape = (self.outputs, self.inputs, positions);
        let y = kernels::matmul_bias(a, &k[0], &columns, &k[1], shape, 1);
        kernels::transpose(&y, &[self.outputs, positions], &[1, 0])
    }
}

fn gemm<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    if a.int("transA", 0)? != 0 {
        return Err("transA = 1 would mix the batch axis".into());
    }
    let (x, shape) = computed(imp, at)?;
    let w = weight(imp, at, 1, "B")?;
    let (mut weight, outputs, inputs) = matrix(w, a.int("transB", 0)? != 0)?;
    let alpha = a.float("alpha", 1.0)?;
    weight.iter_mut().for_each(|w| *w *= alpha);
    let mut bias = bias(imp, at, 2, outputs)?;
    let beta = a.float("beta", 1.0)?;
    bias.iter_mut().for_each(|b| *b *= beta);
    push(imp, at, (x, &shape), weight, bias, [inputs, outputs])
}

/// MatMul of a computed tensor by a constant ([`super::matmul`] chose this).
pub(super) fn by_constant<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let w = weight(imp, at, 1, "the second operand")?;
    let (weight, outputs, inputs) = matrix(w, false)?;
    let bias = vec![0.0; outputs];
    push(imp, at, (x, &shape), weight, bias, [inputs, outputs])
}

/// A 2-D weight as `outputs × inputs`, row-major, from `[outputs, inputs]` (`transposed`) or
/// `[inputs, outputs]`.
fn matrix(
    (shape, values): (Vec<usize>, Vec<f32>),
    transposed: bool,
) -> Result<(Vec<f32>, usize, usize), Refusal> {
    let [r, c] = shape[..] else {
        return Err(format!("weight of shape {shape:?} is not a matrix").into());
    };
    if transposed {
        return Ok((values, r, c));
    }
    Ok((kernels::transpose(&values, &[r, c], &[1, 0]), c, r))
}

fn push<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    (x, shape): (usize, &[usize]),
    weight: Vec<f32>,
    bias: Vec<f32>,
    [inputs, outputs]: [usize; 2],
) -> Result<(), Refusal> {
    let Some((&last, leading)) = shape.split_last() else {
        return Err("a scalar input".into());
    };
    if last != inputs {
        return Err(format!(
            "an input of shape {shape:?} for a weight of {inputs} inputs; Flatten or Reshape it first"
        )
        .into());
    }
    let out: Vec<usize> = leading.iter().copied().chain([outputs]).collect();
    let dense = Dense {
        inputs,
        outputs,
        weight,
        bias,
    };
    imp.push(at, super::Op::Dense(dense), vec![x], out)
}
