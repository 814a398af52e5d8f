//! HardSigmoid and HardSwish (ONNX Operators; MobileNetV3, Howard et al., ICCV 2019, §5.2),
//! exactly as their pieces compute: `HardSigmoid(x) = clip(α·x + β, 0, 1)` is a product by a
//! constant ([`Scale`]), an addition of one ([`AddConst`]) and a [`Clip`]; `HardSwish(x) =
//! x·HardSigmoid(x)` with α = 1/6, β = 1/2 adds a product of computed tensors ([`Mul`]). Their
//! error is the pieces': a truncation each, ±1 ulp, and the constants' rounding to f bits.

use super::{AddConst, Clip, Evaluate, Family, Io, Mul, Operator, Scale};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::computed;
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};

/// `clip(α·x + β, 0, 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HardSigmoid {
    /// α.
    pub alpha: f32,
    /// β.
    pub beta: f32,
}

/// `x·HardSigmoid(x)` with α = 1/6, β = 1/2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HardSwish;

/// HardSwish's gate.
const GATE: HardSigmoid = HardSigmoid {
    alpha: 1.0 / 6.0,
    beta: 0.5,
};

/// The unit interval.
const UNIT: Clip = Clip {
    lo: Some(0.0),
    hi: Some(1.0),
};

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "HardSigmoid",
        import: hard_sigmoid,
        supported: "HardSigmoid, HardSwish (exactly: a product by a constant, an addition and a Clip)",
    },
    Family {
        name: "HardSwish",
        import: hard_swish,
        supported: "",
    },
];

impl HardSigmoid {
    /// Its pieces on a value of `io`'s shape: α for every element, β added to each.
    fn pieces(&self, io: &Io<'_>) -> (Scale, AddConst) {
        let n: usize = io.output.iter().product();
        let scale = Scale {
            shape: vec![1; io.output.len()],
            factors: vec![self.alpha],
        };
        (scale, AddConst(vec![self.beta; n]))
    }

    /// Its value on `x`, in `a`.
    fn eval_on<A: Arith>(&self, a: &A, x: &[A::E], io: &Io<'_>) -> Vec<A::E> {
        let (scale, shift) = self.pieces(io);
        let mut v = x.to_vec();
        let steps: [&dyn Evaluate<A>; 3] = [&scale, &shift, &UNIT];
        for step in steps {
            let k = step.encode(a);
            v = step.eval(a, &k, &[&v], io);
        }
        v
    }
}

impl Operator for HardSigmoid {
    fn kind(&self) -> &'static str {
        "HardSigmoid"
    }

    fn class(&self) -> &'static str {
        "ReLU"
    }

    fn weights(&self) -> Vec<&[f32]> {
        vec![
            std::slice::from_ref(&self.alpha),
            std::slice::from_ref(&self.beta),
        ]
    }

    fn ranges(&self) -> [&[f32]; 2] {
        [
            std::slice::from_ref(&self.alpha),
            std::slice::from_ref(&self.beta),
        ]
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let n = io.output_len()?;
        Some(LayerCost {
            multiplications: n,
            relus: n.checked_mul(2)?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let (scale, shift) = self.pieces(io);
        let mut v = args[0];
        let steps: [&dyn Operator; 3] = [&scale, &shift, &UNIT];
        for step in steps {
            v = step.lower(c, &[v], io)?;
        }
        Ok(v)
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        w.float("alpha", self.alpha);
        w.float("beta", self.beta);
        "HardSigmoid"
    }
}

impl<A: Arith> Evaluate<A> for HardSigmoid {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        self.eval_on(a, args[0], io)
    }
}

/// The product's shapes: the input twice.
fn squared<'a>(io: &Io<'a>) -> Io<'a> {
    Io {
        name: io.name,
        inputs: vec![io.input(); 2],
        output: io.output,
    }
}

impl Operator for HardSwish {
    fn kind(&self) -> &'static str {
        "HardSwish"
    }

    fn class(&self) -> &'static str {
        "ReLU"
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        Some(LayerCost {
            products: io.output_len()?,
            ..GATE.cost(io)?
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let gate = GATE.lower(c, args, io)?;
        Mul.lower(c, &[args[0], gate], &squared(io))
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "HardSwish"
    }
}

impl<A: Arith> Evaluate<A> for HardSwish {
    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let gate = GATE.eval_on(a, args[0], io);
        Mul.eval(a, k, &[args[0], &gate], &squared(io))
    }
}

fn hard_sigmoid<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    let (alpha, beta) = (a.float("alpha", 0.2)?, a.float("beta", 0.5)?);
    let (x, shape) = computed(imp, at)?;
    let op = super::Op::HardSigmoid(HardSigmoid { alpha, beta });
    imp.push(at, op, vec![x], shape)
}

fn hard_swish<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    imp.push(at, super::Op::HardSwish(HardSwish), vec![x], shape)
}
