//! One operator on many elements (`op-NAME`), for `nn bench` and `nn info`: the per-operator
//! rounds, bytes and time per element of issue 60. The protocols are data-oblivious, so the
//! values do not change the cost; where an operator wants positive inputs (1/x, √x), a
//! constant the server adds (local) takes the bench's values in [−1, 1] to [1, 3]. Sizes are
//! bert-tiny's: 16 384 elements, rows of 128, attention's products of one layer.

use crate::model::{AddConst, Function, LayerNorm, MatMul, Model, Mul, Op, Relu, Smooth};
use crate::model::{Slice, Softmax, Transpose};

/// The operator models: name and what each computes.
pub const OPERATORS: &[(&str, &str)] = &[
    ("op-relu", "ReLU of 16 384 elements"),
    (
        "op-mul",
        "the product of two computed tensors, 8 192 elements each",
    ),
    ("op-exp", "e^x of 16 384 elements"),
    ("op-reciprocal", "1/x of 16 384 elements in [1, 3]"),
    ("op-sqrt", "√x of 16 384 elements in [1, 3]"),
    ("op-sigmoid", "σ(x) of 16 384 elements"),
    ("op-tanh", "tanh(x) of 16 384 elements"),
    ("op-erf", "erf(x) of 16 384 elements"),
    ("op-gelu", "GELU of 16 384 elements"),
    ("op-softmax", "Softmax over 128 rows of 128"),
    ("op-layernorm", "LayerNorm over 128 rows of 128"),
    (
        "op-matmul",
        "attention's products: [2, 128, 64] × [2, 64, 128] of two computed tensors",
    ),
];

/// Elements of the elementwise operators.
const ELEMENTS: usize = 1 << 14;
/// Rows and their length for Softmax and LayerNorm.
const ROWS: [usize; 2] = [128, 128];

/// The model `name` (one of [`OPERATORS`]).
pub fn operator(name: &str) -> Option<Model> {
    let smooth = |f: Function| Op::Smooth(Smooth(f));
    let elementwise = |op: Op| chain(vec![ELEMENTS], vec![(op, vec![ELEMENTS])]);
    let positive = |f: Function| {
        let shift = Op::AddConst(AddConst(vec![2.0; ELEMENTS]));
        let one = vec![ELEMENTS];
        chain(one.clone(), vec![(shift, one.clone()), (smooth(f), one)])
    };
    Some(match name {
        "op-relu" => elementwise(Op::Relu(Relu)),
        "op-mul" => products(),
        "op-exp" => elementwise(smooth(Function::Exp)),
        "op-reciprocal" => positive(Function::Reciprocal),
        "op-sqrt" => positive(Function::Sqrt),
        "op-sigmoid" => elementwise(smooth(Function::Sigmoid)),
        "op-tanh" => elementwise(smooth(Function::Tanh)),
        "op-erf" => elementwise(smooth(Function::Erf)),
        "op-gelu" => elementwise(smooth(Function::Gelu)),
        "op-softmax" => chain(ROWS.to_vec(), vec![(softmax(), ROWS.to_vec())]),
        "op-layernorm" => chain(ROWS.to_vec(), vec![(layer_norm(), ROWS.to_vec())]),
        "op-matmul" => attention(),
        _ => return None,
    })
}

fn softmax() -> Op {
    Op::Softmax(Softmax { axes: vec![1] })
}

fn layer_norm() -> Op {
    Op::LayerNorm(LayerNorm {
        axis: 1,
        epsilon: 1e-5,
        scale: vec![1.0; ROWS[1]],
        bias: vec![0.0; ROWS[1]],
    })
}

/// The input's two halves multiplied element by element.
fn products() -> Model {
    let half = ELEMENTS / 2;
    let part = |start: usize| {
        Op::Slice(Slice {
            ranges: vec![(start, half, 1)],
        })
    };
    Model::from_layers(
        vec![ELEMENTS],
        vec![
            (part(0), vec![0], vec![half]),
            (part(half), vec![0], vec![half]),
            (Op::Mul(Mul), vec![1, 2], vec![half]),
        ],
    )
}

/// Q·Kᵀ of two heads of 64 over 128 tokens, Q and K the input's two halves.
fn attention() -> Model {
    let (heads, tokens, width) = (2, 128, 64);
    let half = |start: usize| {
        Op::Slice(Slice {
            ranges: vec![(0, heads, 1), (0, tokens, 1), (start, width, 1)],
        })
    };
    let q = vec![heads, tokens, width];
    Model::from_layers(
        vec![heads, tokens, 2 * width],
        vec![
            (half(0), vec![0], q.clone()),
            (half(width), vec![0], q),
            (
                Op::Transpose(Transpose(vec![0, 2, 1])),
                vec![2],
                vec![heads, width, tokens],
            ),
            (Op::MatMul(MatMul), vec![1, 3], vec![heads, tokens, tokens]),
        ],
    )
}

/// `layers` one after another on an input of `input`: (operator, output shape).
fn chain(input: Vec<usize>, layers: Vec<(Op, Vec<usize>)>) -> Model {
    let layers = layers
        .into_iter()
        .enumerate()
        .map(|(i, (op, shape))| (op, vec![i], shape))
        .collect();
    Model::from_layers(input, layers)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operator model is a valid model, each of its operator's kind.
    #[test]
    fn every_operator_model_checks() {
        for (name, _) in OPERATORS {
            let m = operator(name).unwrap_or_else(|| panic!("{name}"));
            m.check(&crate::model::CEILING).unwrap();
            let io = m.nodes.iter().all(|n| crate::op::Io::of(&m, n).is_some());
            assert!(io, "{name}");
        }
        assert!(operator("op-nothing").is_none());
    }
}
