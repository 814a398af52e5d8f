//! Parts and copies of a computed tensor by constant indices (ONNX Operators: Slice, Split
//! into Slices, Gather with constant indices, Expand): each a gather of the program ([`Compiler::gather`]), local
//! in every sharing; the indices are the architecture's integers, never the server's weights.

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{computed, constant_input};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::secure::{Compiler, Shared};

/// Every `step`-th element of each per-sample axis from `start`, `count` of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    /// Per axis: the first index, how many, and the step (negative: backwards).
    pub ranges: Vec<(usize, usize, i64)>,
}

/// The elements at constant `indices` along a per-sample `axis`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gather {
    /// The axis (ONNX's less one).
    pub axis: usize,
    /// The indices, each within the axis.
    pub indices: Vec<usize>,
    /// Their shape, which replaces the axis in the output's.
    pub indices_shape: Vec<usize>,
}

/// The input broadcast to the output's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expand;

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Slice",
        import: slice,
        supported: "Slice, Split, Gather (constant indices), Expand of computed tensors",
    },
    Family {
        name: "Split",
        import: split,
        supported: "",
    },
    Family {
        name: "Expand",
        import: expand,
        supported: "",
    },
];

/// A selection's input place for each output place.
trait Selection {
    fn places(&self, io: &Io<'_>) -> Vec<usize>;
}

/// A selection's plaintext: the input at each output place.
fn select<E: Copy>(s: &impl Selection, x: &[E], io: &Io<'_>) -> Vec<E> {
    s.places(io).into_iter().map(|i| x[i]).collect()
}

/// A selection's lowering: a gather.
fn gather(s: &impl Selection, c: &mut Compiler, x: Shared, io: &Io<'_>) -> Result<Shared, Error> {
    let places = s.places(io).into_iter().map(|i| i as u32).collect();
    c.gather(x, places)
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// For each place of `out`, the input place `at(axis, index)` along each axis summed.
fn places_by_axis(out: &[usize], at: impl Fn(usize, usize) -> usize) -> Vec<usize> {
    let n: usize = out.iter().product();
    let mut index = vec![0; out.len()];
    let mut places = Vec::with_capacity(n);
    for _ in 0..n {
        places.push(index.iter().enumerate().map(|(a, &i)| at(a, i)).sum());
        for axis in (0..out.len()).rev() {
            index[axis] += 1;
            if index[axis] < out[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    places
}

impl Selection for Slice {
    fn places(&self, io: &Io<'_>) -> Vec<usize> {
        let stride = strides(io.input());
        places_by_axis(io.output, |a, i| {
            let (start, _, step) = self.ranges[a];
            (start as i64 + i as i64 * step) as usize * stride[a]
        })
    }
}

impl Selection for Gather {
    fn places(&self, io: &Io<'_>) -> Vec<usize> {
        let input = io.input();
        let (outer, inner): (usize, usize) = (
            input[..self.axis].iter().product(),
            input[self.axis + 1..].iter().product(),
        );
        let len = input[self.axis];
        let mut places = Vec::with_capacity(outer * self.indices.len() * inner);
        for o in 0..outer {
            for &k in &self.indices {
                places.extend((0..inner).map(|i| (o * len + k) * inner + i));
            }
        }
        places
    }
}

impl Selection for Expand {
    fn places(&self, io: &Io<'_>) -> Vec<usize> {
        kernels::broadcast_indices(io.input(), io.output)
    }
}

/// The Operator and Evaluate impls of a selection, alike but for export.
macro_rules! selection {
    ($t:ty, $kind:literal) => {
        impl Operator for $t {
            fn kind(&self) -> &'static str {
                $kind
            }

            fn lower(
                &self,
                c: &mut Compiler,
                args: &[Shared],
                io: &Io<'_>,
            ) -> Result<Shared, Error> {
                gather(self, c, args[0], io)
            }

            fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
                self.write(w);
                $kind
            }
        }

        impl<A: Arith> Evaluate<A> for $t {
            fn eval(&self, _a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
                select(self, args[0], io)
            }
        }
    };
}

selection!(Slice, "Slice");
selection!(Gather, "Gather");
selection!(Expand, "Expand");

impl Slice {
    /// Opset 13: starts, ends, axes and steps as inputs, the batch axis whole.
    fn write(&self, w: &mut NodeWriter<'_>) {
        let end = |&(start, count, step): &(usize, usize, i64)| {
            let last = start as i64 + (count as i64 - 1) * step;
            // One past the last, or before the start when stepping back (−1: ONNX's "to
            // the front" is i64::MIN).
            if count == 0 {
                start as i64
            } else if step > 0 {
                last + 1
            } else if last == 0 {
                i64::MIN
            } else {
                last - 1
            }
        };
        let starts: Vec<i64> = self.ranges.iter().map(|r| r.0 as i64).collect();
        let ends: Vec<i64> = self.ranges.iter().map(end).collect();
        let axes: Vec<i64> = (1..=self.ranges.len() as i64).collect();
        let steps: Vec<i64> = self.ranges.iter().map(|r| r.2).collect();
        w.int64s("starts", &starts);
        w.int64s("ends", &ends);
        w.int64s("axes", &axes);
        w.int64s("steps", &steps);
    }
}

impl Gather {
    fn write(&self, w: &mut NodeWriter<'_>) {
        let indices: Vec<i64> = self.indices.iter().map(|&i| i as i64).collect();
        w.int64s_shaped("indices", &self.indices_shape, &indices);
        w.int("axis", self.axis as i64 + 1);
    }
}

impl Expand {
    /// The target with its batch axis of 1.
    fn write(&self, w: &mut NodeWriter<'_>) {
        let target: Vec<i64> = std::iter::once(1)
            .chain(w.out_shape.iter().map(|&d| d as i64))
            .collect();
        w.int64s("shape", &target);
    }
}

/// Integers of constant input `index`, or an error naming `what`.
fn integers<'a>(
    imp: &Importer<'a>,
    at: &At<'a>,
    index: usize,
    what: &str,
) -> Result<Vec<i64>, Refusal> {
    let c = constant_input(imp, at, index).ok_or_else(|| format!("{what} must be constants"))?;
    Ok(super::constant::integers(imp, c)?.0)
}

/// Slice (opset 10 on: starts, ends, axes and steps as inputs; before: attributes, step 1),
/// ends clamped as ONNX clamps them; the batch axis may not be sliced.
fn slice<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if constant_input(imp, at, 0).is_some() {
        return super::fold::slice(imp, at);
    }
    let (x, shape) = computed(imp, at)?;
    let (starts, ends, axes, steps) = if imp.opset < 10 {
        let a = Attributes::of(at.node);
        let list = |n: &str| a.ints(n).map(|v| v.map(<[i64]>::to_vec));
        let starts = list("starts")?.ok_or("the starts attribute is missing")?;
        let ends = list("ends")?.ok_or("the ends attribute is missing")?;
        (starts, ends, list("axes")?, None)
    } else {
        let given = |k: usize| at.node.input.get(k).is_some_and(|n| !n.is_empty());
        let axes = if given(3) {
            Some(integers(imp, at, 3, "the axes")?)
        } else {
            None
        };
        let steps = if given(4) {
            Some(integers(imp, at, 4, "the steps")?)
        } else {
            None
        };
        (
            integers(imp, at, 1, "the starts")?,
            integers(imp, at, 2, "the ends")?,
            axes,
            steps,
        )
    };
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err("starts, ends, axes and steps of different lengths".into());
    }
    let mut ranges: Vec<(usize, usize, i64)> = shape.iter().map(|&d| (0, d, 1)).collect();
    let mut seen = vec![false; shape.len()];
    for k in 0..starts.len() {
        let Some(a) = imp.sample_axis(axes[k], shape.len()) else {
            let batch = imp.lead == 1 && (axes[k] == 0 || axes[k] == -(shape.len() as i64 + 1));
            if batch && starts[k] == 0 && ends[k] >= 1 && steps[k] == 1 {
                continue; // the whole batch axis
            }
            return Err(format!("slices axis {} (the batch axis, or none)", axes[k]).into());
        };
        if std::mem::replace(&mut seen[a], true) {
            return Err(format!("slices axis {} twice", axes[k]).into());
        }
        ranges[a] = range(shape[a], starts[k], ends[k], steps[k])?;
        if ranges[a].1 == 0 {
            return Err("an empty slice".into());
        }
    }
    let out = ranges.iter().map(|r| r.1).collect();
    imp.push(at, super::Op::Slice(Slice { ranges }), vec![x], out)
}

/// ONNX Slice's clamping of `start` and `end` on an axis of `len` for `step`: the first index,
/// the count (perhaps 0) and the step.
pub(super) fn range(
    len: usize,
    start: i64,
    end: i64,
    step: i64,
) -> Result<(usize, usize, i64), Refusal> {
    if step == 0 {
        return Err("a step of 0".into());
    }
    let n = len as i64;
    let wrap = |v: i64| if v < 0 { v.saturating_add(n) } else { v };
    let (start, end) = (wrap(start), wrap(end));
    let (start, end) = if step > 0 {
        (start.clamp(0, n), end.clamp(0, n))
    } else {
        (start.clamp(-1, n - 1), end.clamp(-1, n - 1))
    };
    let span = if step > 0 { end - start } else { start - end };
    let count = if span <= 0 {
        0
    } else {
        (span - 1) / step.abs() + 1
    };
    Ok((start as usize, count as usize, step))
}

/// Split of a computed tensor along a per-sample axis into parts (the `split` input from opset
/// 13, the attribute before; else `num_outputs` or one part per output, equal but for a
/// smaller last one), each part a [`Slice`] writing one of the node's outputs.
fn split<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let a = Attributes::of(at.node);
    let axis = a.int("axis", 0)?;
    let Some(axis) = imp.sample_axis(axis, shape.len()) else {
        return Err("splits the batch axis (only the sample's)".into());
    };
    let outputs = &at.node.output;
    let len = shape[axis];
    let sizes = if at.node.input.get(1).is_some_and(|n| !n.is_empty()) {
        integers(imp, at, 1, "the split sizes")?
    } else if let Some(sizes) = a.ints("split")? {
        sizes.to_vec()
    } else {
        let parts = a.int("num_outputs", outputs.len() as i64)?;
        if parts < 1 || parts as usize != outputs.len() {
            return Err(format!("{parts} parts for {} outputs", outputs.len()).into());
        }
        let chunk = len.div_ceil(parts as usize).max(1);
        (0..parts as usize)
            .map(|k| len.saturating_sub(k * chunk).min(chunk) as i64)
            .collect()
    };
    let sizes = sizes
        .iter()
        .map(|&n| usize::try_from(n).ok().filter(|&n| n >= 1))
        .collect::<Option<Vec<usize>>>()
        .filter(|s| {
            s.len() == outputs.len()
                && s.iter().try_fold(0usize, |t, &n| t.checked_add(n)) == Some(len)
        })
        .ok_or_else(|| {
            format!(
                "split sizes {sizes:?}: {} positive sizes summing to {len}",
                outputs.len()
            )
        })?;
    let mut start = 0;
    for (output, size) in outputs.iter().zip(sizes) {
        let mut ranges: Vec<(usize, usize, i64)> = shape.iter().map(|&d| (0, d, 1)).collect();
        ranges[axis] = (start, size, 1);
        start += size;
        let mut out = shape.clone();
        out[axis] = size;
        if output.is_empty() {
            continue;
        }
        imp.push_to(at, output, super::Op::Slice(Slice { ranges }), vec![x], out)?;
    }
    Ok(())
}

/// Gather of a computed tensor along a per-sample axis by constant indices (negative from the
/// end); Gather of constant integers is a shape subgraph's ([`super::constant`]).
pub(super) fn gather_computed<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let axis = Attributes::of(at.node).int("axis", 0)?;
    let Some(axis) = imp.sample_axis(axis, shape.len()) else {
        return Err("gathers along the batch axis (only along the sample's)".into());
    };
    let c = constant_input(imp, at, 1).ok_or("the indices are computed at run time")?;
    let (indices_shape, indices) = super::fold::integers_shaped(imp, c)?;
    let len = shape[axis] as i64;
    let indices = indices
        .iter()
        .map(|&i| {
            usize::try_from(if i < 0 { i + len } else { i })
                .ok()
                .filter(|&i| i < shape[axis])
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("indices outside the {len} places of axis {}", axis + 1))?;
    let mut out = shape[..axis].to_vec();
    out.extend_from_slice(&indices_shape);
    out.extend_from_slice(&shape[axis + 1..]);
    let op = super::Op::Gather(Gather {
        axis,
        indices,
        indices_shape,
    });
    imp.push(at, op, vec![x], out)
}

/// Expand of a computed tensor to a constant shape (its batch axis 1 or the declared batch).
fn expand<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if constant_input(imp, at, 0).is_some() {
        return super::fold::expand(imp, at);
    }
    let (x, shape) = computed(imp, at)?;
    let target = integers(imp, at, 1, "the shape")?;
    let sizes = target
        .iter()
        .map(|&d| usize::try_from(d).ok().filter(|&d| d <= imp.ceiling.axis))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("shape {target:?}: sizes from 0 to {}", imp.ceiling.axis))?;
    let (batch, rest) = sizes.split_at(imp.lead.min(sizes.len()));
    if batch.iter().any(|&b| b != 1) || rest.len() < shape.len() || rest.is_empty() {
        return Err(format!("shape {target:?}: keep the batch axis first, as 1").into());
    }
    // NumPy's rules, both ways: the output takes the larger of each pair.
    let lead = rest.len() - shape.len();
    let mut out = Vec::with_capacity(rest.len());
    for (i, &t) in rest.iter().enumerate() {
        let s = if i < lead { 1 } else { shape[i - lead] };
        out.push(match (s, t) {
            (s, t) if s == t || t == 1 => s,
            (1, t) => t,
            _ => return Err(format!("shape {shape:?} does not expand to {target:?}").into()),
        });
    }
    imp.push(at, super::Op::Expand(Expand), vec![x], out)
}
