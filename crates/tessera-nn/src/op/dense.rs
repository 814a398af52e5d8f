//! Gemm and MatMul by a constant (ONNX Operators: Gemm, MatMul): `y = W·x + b`, a private
//! linear map of the server's on α (MOTION2NX, Braun et al., App. A.3), its bias at the
//! products' scale.

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{bias, computed, constant_input, weight};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::LinearMap;

/// A dense layer: `y = W·x + b` with `W` of `outputs × inputs`, row-major.
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

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Gemm",
        import: gemm,
        supported: "Gemm",
    },
    Family {
        name: "MatMul",
        import: matmul,
        supported: "MatMul (by a constant)",
    },
];

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

    fn cost(&self, _io: &Io<'_>) -> Option<LayerCost> {
        Some(LayerCost {
            multiplications: self.inputs.checked_mul(self.outputs)?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        let map = LinearMap::dense(self.inputs, self.outputs).map_err(Error::Compile)?;
        c.linear(args[0], map, &self.weight, &self.bias)
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        w.floats("weight", &[self.outputs, self.inputs], &self.weight);
        w.floats("bias", &[self.outputs], &self.bias);
        w.int("transB", 1);
        "Gemm"
    }
}

impl<A: Arith> Evaluate<A> for Dense {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        vec![a.encode_all(&self.weight), a.encode_products(&self.bias)]
    }

    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        let shape = (self.outputs, self.inputs, 1);
        kernels::matmul_bias(a, &k[0], args[0], &k[1], shape, 1)
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

fn matmul<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if constant_input(imp, at, 0).is_some() {
        return Err("the constant must be the second operand".into());
    }
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
    if shape != [inputs] {
        return Err(format!(
            "an input of shape {shape:?} for a weight of {inputs} inputs; Flatten or Reshape it first"
        )
        .into());
    }
    let dense = Dense {
        inputs,
        outputs,
        weight,
        bias,
    };
    imp.push(at, super::Op::Dense(dense), vec![x], vec![outputs])
}
