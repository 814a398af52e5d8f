//! Plaintext evaluation of a [`Model`] in any [`Arith`]: `f32` for accuracy, fixed point as the
//! exact reference of the secure protocols. Weights are encoded once; each value is freed after
//! its last reader.

use crate::error::Error;
use crate::fixed::Arith;
use crate::model::Model;
use crate::op::arguments;

/// A model ready to evaluate in `A`.
pub struct Plain<'m, A: Arith> {
    model: &'m Model,
    arith: A,
    /// Each node's constants in `A` ([`crate::op::Evaluate::encode`]).
    constants: Vec<Vec<Vec<A::E>>>,
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
        let constants = model
            .nodes
            .iter()
            .map(|n| n.op.evaluator::<A>().encode(&arith))
            .collect();
        Ok(Plain {
            model,
            arith,
            constants,
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
        let mut values: Vec<Option<Vec<A::E>>> = vec![None; m.shapes.len()];
        values[m.input] = Some(input);
        for (i, node) in m.nodes.iter().enumerate() {
            let (args, io) = arguments(m, node, |v| values[v].as_deref())?;
            let y = node
                .op
                .evaluator::<A>()
                .eval(&self.arith, &self.constants[i], &args, &io);
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
