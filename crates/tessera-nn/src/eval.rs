//! Plaintext evaluation of a [`Model`] in any [`Arith`]: `f32` for accuracy, fixed point as the
//! exact reference of the secure protocols. Weights are encoded once; each value is freed after
//! its last reader.

use crate::error::Error;
use crate::fixed::Arith;
use crate::kernels;
use crate::model::{Model, Op};

/// A layer's constants in the number system.
enum Weights<E> {
    /// A matrix (`rows × inner`) and a bias at the product's scale.
    Matrix(Vec<E>, Vec<E>),
    /// A constant to add.
    Constant(Vec<E>),
    /// Clip's bounds.
    Bounds(Option<E>, Option<E>),
    /// Nothing.
    None,
}

/// A model ready to evaluate in `A`.
pub struct Plain<'m, A: Arith> {
    model: &'m Model,
    arith: A,
    weights: Vec<Weights<A::E>>,
    last_use: Vec<usize>,
}

impl<'m, A: Arith> Plain<'m, A> {
    /// Encodes `model`'s weights in `arith`; a stripped model has none to evaluate with.
    pub fn new(model: &'m Model, arith: A) -> Result<Self, Error> {
        if !model.has_weights {
            return Err(Error::Input(
                "the model is an architecture without weights (written by nn strip)".to_owned(),
            ));
        }
        arith.check_model(model)?;
        let enc = |v: &[f32]| v.iter().map(|&x| arith.encode(x)).collect::<Vec<_>>();
        let enc2 = |v: &[f32]| {
            v.iter()
                .map(|&x| arith.encode_product(x))
                .collect::<Vec<_>>()
        };
        let weights = model
            .nodes
            .iter()
            .map(|n| match &n.op {
                Op::Dense(d) => Weights::Matrix(enc(&d.weight), enc2(&d.bias)),
                Op::Conv(c) => Weights::Matrix(enc(&c.weight), enc2(&c.bias)),
                Op::AddConst(c) => Weights::Constant(enc(c)),
                Op::Clip(lo, hi) => {
                    Weights::Bounds(lo.map(|v| arith.encode(v)), hi.map(|v| arith.encode(v)))
                }
                _ => Weights::None,
            })
            .collect();
        Ok(Plain {
            model,
            arith,
            weights,
            last_use: model.last_uses(),
        })
    }

    /// The number system.
    pub fn arith(&self) -> &A {
        &self.arith
    }

    /// The output for a real input (encoded here).
    pub fn run(&self, input: &[f32]) -> Result<Vec<A::E>, Error> {
        self.arith.check_input(input)?;
        let encoded: Vec<A::E> = input.iter().map(|&x| self.arith.encode(x)).collect();
        self.run_encoded(encoded)
    }

    /// The output for an input already in the number system.
    pub fn run_encoded(&self, input: Vec<A::E>) -> Result<Vec<A::E>, Error> {
        let m = self.model;
        if input.len() != m.input_len() {
            return Err(Error::Input(format!(
                "{} values for an input of shape {:?} ({} values)",
                input.len(),
                m.shapes[m.input],
                m.input_len()
            )));
        }
        let a = &self.arith;
        let mut values: Vec<Option<Vec<A::E>>> = vec![None; m.shapes.len()];
        values[m.input] = Some(input);
        for (i, node) in m.nodes.iter().enumerate() {
            let arg = |k: usize| {
                values[node.inputs[k]]
                    .as_deref()
                    .expect("a model's nodes are in evaluation order")
            };
            let x = arg(0);
            let in_shape = &m.shapes[node.inputs[0]];
            let out_shape = &m.shapes[node.output];
            let y = match (&node.op, &self.weights[i]) {
                (Op::Dense(d), Weights::Matrix(w, b)) => {
                    kernels::matmul_bias(a, w, x, b, (d.outputs, d.inputs, 1), 1)
                }
                (Op::Conv(c), Weights::Matrix(w, b)) => {
                    let [ci, h, wd] = dims3(in_shape);
                    let [_, oh, ow] = dims3(out_shape);
                    let cols = kernels::im2col(x, [ci, h, wd], &c.window, [oh, ow]);
                    let k = ci / c.groups * c.window.kernel[0] * c.window.kernel[1];
                    let shape = (c.out_channels, k, oh * ow);
                    kernels::matmul_bias(a, w, &cols, b, shape, c.groups)
                }
                (Op::Relu, _) => x.iter().map(|&v| a.relu(v)).collect(),
                (Op::MaxPool(p) | Op::AvgPool(p), _) => {
                    let [_, oh, ow] = dims3(out_shape);
                    let max = matches!(node.op, Op::MaxPool(_));
                    kernels::pool(a, x, dims3(in_shape), p, max, [oh, ow])
                }
                (Op::GlobalAvgPool, _) => {
                    let [c, h, w] = dims3(in_shape);
                    x.chunks_exact(h * w)
                        .take(c)
                        .map(|plane| {
                            let sum = plane.iter().fold(A::E::default(), |s, &v| a.add(s, v));
                            a.mean(sum, h * w)
                        })
                        .collect()
                }
                (Op::Reshape, _) => x.to_vec(),
                (Op::Transpose(perm), _) => kernels::transpose(x, in_shape, perm),
                (Op::Add, _) => x.iter().zip(arg(1)).map(|(&u, &v)| a.add(u, v)).collect(),
                (Op::Sub, _) => x.iter().zip(arg(1)).map(|(&u, &v)| a.sub(u, v)).collect(),
                (Op::AddConst(_), Weights::Constant(c)) => {
                    x.iter().zip(c).map(|(&u, &v)| a.add(u, v)).collect()
                }
                (Op::Concat(axis), _) => {
                    let parts: Vec<&[A::E]> = (0..node.inputs.len()).map(arg).collect();
                    let shapes: Vec<&[usize]> =
                        node.inputs.iter().map(|&v| &m.shapes[v][..]).collect();
                    kernels::concat(&parts, &shapes, *axis)
                }
                (Op::Pad(pads), _) => kernels::pad(x, in_shape, pads, A::E::default()),
                // As the secure layers compute it: lo + ReLU(x − lo), hi − ReLU(hi − x).
                (Op::Clip(..), &Weights::Bounds(lo, hi)) => x
                    .iter()
                    .map(|&v| {
                        let v = lo.map_or(v, |lo| a.add(lo, a.relu(a.sub(v, lo))));
                        hi.map_or(v, |hi| a.sub(hi, a.relu(a.sub(hi, v))))
                    })
                    .collect(),
                (op, _) => unreachable!("{} has its weights encoded in new()", op.kind()),
            };
            debug_assert_eq!(y.len(), m.len(node.output));
            for &v in &node.inputs {
                if self.last_use[v] == i {
                    values[v] = None;
                }
            }
            values[node.output] = Some(y);
        }
        Ok(values[m.output].take().unwrap_or_default())
    }
}

/// A `[C, H, W]` shape (the importer checked the rank).
fn dims3(shape: &[usize]) -> [usize; 3] {
    match shape {
        &[c, h, w] => [c, h, w],
        _ => unreachable!("checked at import"),
    }
}

/// The largest difference between two vectors of the same values, decoded: how far a
/// result is from its reference.
pub fn max_difference<A: Arith>(a: &A, x: &[A::E], y: &[A::E]) -> f32 {
    x.iter()
        .zip(y)
        .map(|(&u, &v)| (a.decode(u) - a.decode(v)).abs())
        .fold(0.0, f32::max)
}

/// The index of the largest of `scores` (the first of equals), by `max`'s order.
pub fn argmax<A: Arith>(a: &A, scores: &[A::E]) -> usize {
    let mut best = 0;
    for (i, &s) in scores.iter().enumerate().skip(1) {
        if a.max(s, scores[best]) == s && s != scores[best] {
            best = i;
        }
    }
    best
}
