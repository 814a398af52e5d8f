//! Clip between constant bounds (ONNX Operators: Clip, opset 11 on): ReLU6 and the like, as
//! `max(x, lo) = lo + ReLU(x − lo)` and `min(·, hi) = hi − ReLU(hi − ·)`, each ReLU's output
//! truncated exactly (it is non-negative).

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{computed, weight};
use crate::import::{At, Importer, Refusal};
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};

/// The value held between bounds (`None`: no bound on that side): ReLU6 is `(0, 6)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clip {
    /// The lower bound.
    pub lo: Option<f32>,
    /// The upper bound.
    pub hi: Option<f32>,
}

pub(super) const FAMILY: &[Family] = &[Family {
    name: "Clip",
    import,
    supported: "Clip (constant bounds: ReLU6 and the like)",
}];

impl Operator for Clip {
    fn kind(&self) -> &'static str {
        "Clip"
    }

    fn class(&self) -> &'static str {
        "ReLU"
    }

    fn weights(&self) -> Vec<&[f32]> {
        [&self.lo, &self.hi]
            .into_iter()
            .flatten()
            .map(std::slice::from_ref)
            .collect()
    }

    /// `max(x, lo)` and `min(x, hi)` as ReLUs of `x − lo` and `hi − x`.
    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let sides = usize::from(self.lo.is_some()) + usize::from(self.hi.is_some());
        Some(LayerCost {
            relus: io.output_len()?.checked_mul(sides)?,
            ..LayerCost::default()
        })
    }

    /// The bounds are the server's constants, one element each broadcast locally: the
    /// program's shape does not depend on them, so a client holding the architecture without
    /// them compiles the same.
    fn lower(&self, c: &mut Compiler, args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        let mut y = args[0];
        if let Some(lo) = self.lo {
            y = side(c, y, lo, false)?;
        }
        if let Some(hi) = self.hi {
            y = side(c, y, hi, true)?;
        }
        Ok(Shared {
            nonnegative: false,
            ..y
        })
    }

    /// An absent bound is an empty input name, so the upper one keeps its place.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        match self.lo {
            Some(lo) => w.floats("min", &[], &[lo]),
            None if self.hi.is_some() => w.absent(),
            None => {}
        }
        if let Some(hi) = self.hi {
            w.floats("max", &[], &[hi]);
        }
        "Clip"
    }
}

/// `y` held on one side of the bound `k`: `k + ReLU(y − k)` below, `k − ReLU(k − y)` above,
/// the ReLU's output truncated exactly (it is non-negative).
fn side(c: &mut Compiler, y: Shared, k: f32, upper: bool) -> Result<Shared, Error> {
    let e = Error::Compile;
    let (a, bound) = (c.a(y)?, c.scalar(k, y)?);
    let shifted = if upper {
        c.p.sub(bound, a)
    } else {
        c.p.sub(a, bound)
    };
    let r = c.relu(y.like(shifted.map_err(e)?))?;
    let r = c.settle(r)?;
    let (a, bound) = (c.a(r)?, c.scalar(k, r)?);
    let held = if upper {
        c.p.sub(bound, a)
    } else {
        c.p.add(a, bound)
    };
    Ok(r.like(held.map_err(e)?))
}

impl<A: Arith> Evaluate<A> for Clip {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        let bound = |b: Option<f32>| b.map(|v| a.encode(v)).into_iter().collect();
        vec![bound(self.lo), bound(self.hi)]
    }

    /// As the secure layers compute it: `lo + ReLU(x − lo)`, `hi − ReLU(hi − x)`.
    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        let (lo, hi) = (k[0].first().copied(), k[1].first().copied());
        args[0]
            .iter()
            .map(|&v| {
                let v = lo.map_or(v, |lo| a.add(lo, a.relu(a.sub(v, lo))));
                hi.map_or(v, |hi| a.sub(hi, a.relu(a.sub(hi, v))))
            })
            .collect()
    }
}

/// Clip between constant bounds given as inputs (an empty name: no bound).
fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if imp.opset < 11 {
        return Err("bounds as attributes (before opset 11); export at opset 11 or later".into());
    }
    let (x, shape) = computed(imp, at)?;
    let mut bound = |index: usize, what: &str| -> Result<Option<f32>, Refusal> {
        if at.node.input.get(index).is_none_or(|n| n.is_empty()) {
            return Ok(None);
        }
        let (_, v) = weight(imp, at, index, what)?;
        match v[..] {
            [v] => Ok(Some(v)),
            _ => Err(format!("{what} must be one number").into()),
        }
    };
    let (lo, hi) = (bound(1, "the lower bound")?, bound(2, "the upper bound")?);
    if let (Some(lo), Some(hi)) = (lo, hi)
        && lo > hi
    {
        return Err(format!("bounds {lo} > {hi}").into());
    }
    imp.push(at, super::Op::Clip(Clip { lo, hi }), vec![x], shape)
}
