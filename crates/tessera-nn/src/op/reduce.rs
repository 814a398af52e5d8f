//! Reductions over per-sample axes (ONNX Operators: ReduceSum, ReduceMean, ReduceMax): sums
//! are local, a mean is the sum times the public ⌊2^f/k⌉ (truncated where the value settles,
//! as an average pooling's), a maximum a tree of `a + ReLU(b − a)` (one ReLU layer per level,
//! as MaxPool's).

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{computed, constant_input};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};

/// What a [`Reduce`] computes over its axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// The sum.
    Sum,
    /// The mean.
    Mean,
    /// The maximum.
    Max,
}

/// A reduction over per-sample `axes` (ONNX's less one); the output keeps them as 1 or drops
/// them, as its shape says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduce {
    /// What it computes.
    pub reduction: Reduction,
    /// The axes reduced, ascending.
    pub axes: Vec<usize>,
    /// Whether the output keeps them (as 1).
    pub keepdims: bool,
}

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "ReduceSum",
        import: reduce_sum,
        supported: "ReduceSum, ReduceMean, ReduceMax (over per-sample axes)",
    },
    Family {
        name: "ReduceMean",
        import: reduce_mean,
        supported: "",
    },
    Family {
        name: "ReduceMax",
        import: reduce_max,
        supported: "",
    },
];

impl Reduce {
    /// The elements reduced into each output.
    fn count(&self, input: &[usize]) -> usize {
        self.axes.iter().map(|&a| input[a]).product()
    }

    /// [`kernels::reduction_groups`] of the input.
    fn groups(&self, io: &Io<'_>) -> Vec<Vec<usize>> {
        kernels::reduction_groups(io.input(), &self.axes)
    }
}

impl Operator for Reduce {
    fn kind(&self) -> &'static str {
        match self.reduction {
            Reduction::Sum => "ReduceSum",
            Reduction::Mean => "ReduceMean",
            Reduction::Max => "ReduceMax",
        }
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let out = io.output_len()?;
        Some(match self.reduction {
            Reduction::Sum => LayerCost::default(),
            Reduction::Mean => LayerCost {
                divisions: out,
                ..LayerCost::default()
            },
            Reduction::Max => LayerCost {
                maxima: out.checked_mul(self.count(io.input()).checked_sub(1)?)?,
                ..LayerCost::default()
            },
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let groups: Vec<Vec<u32>> = self
            .groups(io)
            .into_iter()
            .map(|g| g.into_iter().map(|i| i as u32).collect())
            .collect();
        match self.reduction {
            Reduction::Sum => c.sum(args[0], groups),
            Reduction::Mean => c.mean(args[0], groups, self.count(io.input())),
            Reduction::Max => c.maximum(args[0], groups),
        }
    }

    /// Opset 13: ReduceSum's axes an input, the others' an attribute.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let axes: Vec<i64> = self.axes.iter().map(|&a| a as i64 + 1).collect();
        if self.reduction == Reduction::Sum {
            w.int64s("axes", &axes);
        } else {
            w.ints("axes", &axes);
        }
        w.int("keepdims", i64::from(self.keepdims));
        self.kind()
    }
}

impl<A: Arith> Evaluate<A> for Reduce {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let x = args[0];
        let groups = self.groups(io);
        let Some((first, rest)) = groups.split_first() else {
            return Vec::new();
        };
        let mut acc: Vec<A::E> = first.iter().map(|&i| x[i]).collect();
        for g in rest {
            for (s, &i) in acc.iter_mut().zip(g) {
                *s = match self.reduction {
                    Reduction::Max => a.max(*s, x[i]),
                    _ => a.add(*s, x[i]),
                };
            }
        }
        if self.reduction == Reduction::Mean {
            let count = self.count(io.input());
            acc.iter_mut().for_each(|s| *s = a.mean(*s, count));
        }
        acc
    }
}

fn reduce_sum<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    import(imp, at, Reduction::Sum, 13)
}

fn reduce_mean<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    import(imp, at, Reduction::Mean, 18)
}

fn reduce_max<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    import(imp, at, Reduction::Max, 18)
}

/// The axes (an input from opset `axes_input` on, else an attribute), keepdims and
/// noop_with_empty_axes; the batch axis may not be reduced.
fn import<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    reduction: Reduction,
    axes_input: i64,
) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    let (x, shape) = computed(imp, at)?;
    let listed = if imp.opset >= axes_input {
        match constant_input(imp, at, 1) {
            Some(c) => Some(super::constant::integers(imp, c)?.0),
            None if at.node.input.get(1).is_some_and(|n| !n.is_empty()) => {
                return Err("the axes are computed at run time".into());
            }
            None => None,
        }
    } else {
        a.ints("axes")?.map(<[i64]>::to_vec)
    };
    let rank = imp.onnx_rank(shape.len()) as i64;
    let axes: Vec<i64> = match listed {
        Some(l) if !l.is_empty() => l,
        _ if a.int("noop_with_empty_axes", 0)? != 0 => {
            return Err("noop_with_empty_axes with no axes (an Identity)".into());
        }
        _ => (0..rank).collect(),
    };
    let mut per_sample = Vec::with_capacity(axes.len());
    for &axis in &axes {
        let Some(axis) = imp.sample_axis(axis, shape.len()) else {
            return Err(format!(
                "axes {axes:?}: each must be an axis of the sample (not the batch)"
            )
            .into());
        };
        per_sample.push(axis);
    }
    per_sample.sort_unstable();
    per_sample.dedup();
    let keep = a.int("keepdims", 1)? != 0;
    let out: Vec<usize> = (0..shape.len())
        .filter_map(|i| match per_sample.contains(&i) {
            true if keep => Some(1),
            true => None,
            false => Some(shape[i]),
        })
        .collect();
    let op = super::Op::Reduce(Reduce {
        reduction,
        axes: per_sample,
        keepdims: keep,
    });
    imp.push(at, op, vec![x], out)
}
