//! Relu (ONNX Operators: Relu): `max(x, 0)` as the NOT of the sign times the value
//! (MOTION2NX, Braun et al., App. A.3; [`Compiler::relu`]).

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::computed;
use crate::import::{At, Importer, Refusal};
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};

/// `max(x, 0)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relu;

pub(super) const FAMILY: &[Family] = &[Family {
    name: "Relu",
    import,
    supported: "Relu",
}];

impl Operator for Relu {
    fn kind(&self) -> &'static str {
        "Relu"
    }

    fn class(&self) -> &'static str {
        "ReLU"
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        Some(LayerCost {
            relus: io.output_len()?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        c.relu(args[0])
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "Relu"
    }
}

impl<A: Arith> Evaluate<A> for Relu {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        args[0].iter().map(|&v| a.relu(v)).collect()
    }
}

fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    imp.push(at, super::Op::Relu(Relu), vec![x], shape)
}
