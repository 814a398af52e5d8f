//! Pad with zeros in constant mode (ONNX Operators: Pad), the batch axis unpadded: a gather
//! whose padded places read [`linear::ZERO`].

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{computed, constant_input, real};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::linear;

/// Zeros added before and after each per-sample axis: `(before, after)` per axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pad(pub Vec<(usize, usize)>);

pub(super) const FAMILY: &[Family] = &[Family {
    name: "Pad",
    import,
    supported: "Pad (constant mode, zeros)",
}];

impl Operator for Pad {
    fn kind(&self) -> &'static str {
        "Pad"
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let n: usize = io.input().iter().product();
        let idx: Vec<u32> = (0..n as u32).collect();
        c.gather(
            args[0],
            kernels::pad(&idx, io.input(), &self.0, linear::ZERO),
        )
    }

    /// Pads as ONNX lists them: every axis's start, then every axis's end, the batch axis's 0.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let begin = self.0.iter().map(|&(b, _)| b as i64);
        let end = self.0.iter().map(|&(_, e)| e as i64);
        let all: Vec<i64> = std::iter::once(0)
            .chain(begin)
            .chain(std::iter::once(0))
            .chain(end)
            .collect();
        w.int64s("pads", &all);
        "Pad"
    }
}

impl<A: Arith> Evaluate<A> for Pad {
    fn eval(&self, _a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        kernels::pad(args[0], io.input(), &self.0, A::E::default())
    }
}

/// Pads and the value from inputs (opset 11 on) or attributes.
fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    let mode = a.string("mode")?.unwrap_or(b"constant");
    if mode != b"constant" {
        return Err(format!("mode {} (only constant)", String::from_utf8_lossy(mode)).into());
    }
    let (pads, value) = if imp.opset < 11 {
        let pads = a
            .ints("pads")?
            .ok_or("the pads attribute is missing")?
            .to_vec();
        (pads, a.float("value", 0.0)?)
    } else {
        let c = constant_input(imp, at, 1).ok_or("the pads are computed at run time")?;
        let pads = super::constant::integers(imp, c)
            .map_err(|_| "pads of real numbers")?
            .0;
        if at.node.input.get(3).is_some_and(|n| !n.is_empty()) {
            return Err("pads only some axes (the axes input)".into());
        }
        let value = match constant_input(imp, at, 2) {
            Some(c) => real(imp, c, "the padding value")?
                .1
                .first()
                .copied()
                .unwrap_or(0.0),
            None => 0.0,
        };
        (pads, value)
    };
    if value != 0.0 {
        return Err(format!("pads with {value} (only zeros)").into());
    }
    let (x, shape) = computed(imp, at)?;
    let (lead, rank) = (imp.lead, imp.onnx_rank(shape.len()));
    let pad = |i: usize| {
        usize::try_from(pads[i])
            .ok()
            .filter(|&p| p <= imp.ceiling.axis)
    };
    if pads.len() != 2 * rank || (lead == 1 && (pads[0] != 0 || pads[rank] != 0)) {
        return Err(format!("pads {pads:?}: two per axis, none on the batch axis").into());
    }
    let per_axis = (lead..rank)
        .map(|i| Some((pad(i)?, pad(i + rank)?)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            format!(
                "pads {pads:?}: each from 0 to {} (no cropping)",
                imp.ceiling.axis
            )
        })?;
    let out = shape
        .iter()
        .zip(&per_axis)
        .map(|(&d, &(b, e))| d + b + e)
        .collect();
    imp.push(at, super::Op::Pad(Pad(per_axis)), vec![x], out)
}
