//! Moves of data (ONNX Operators: Flatten, Reshape, Identity, Dropout, Transpose): a new
//! shape costs nothing; a permutation of axes is a gather of copies, local in every sharing.
//! The batch axis stays first: Flatten from axis 1, Reshape keeping the first axis, Transpose
//! fixing axis 0.

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{computed, constant_input};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal, output};
use crate::kernels;
use crate::secure::{Compiler, Shared};

/// The same elements in a new shape (Flatten, Reshape).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reshape;

/// Axes permuted: output axis `i` is input axis `perm[i]` (per sample).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transpose(pub Vec<usize>);

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Flatten",
        import: flatten,
        supported: "Flatten",
    },
    Family {
        name: "Reshape",
        import: reshape,
        supported: "Reshape",
    },
    Family {
        name: "Transpose",
        import: transpose,
        supported: "Transpose",
    },
    Family {
        name: "Identity",
        import: alias,
        supported: "Identity",
    },
    Family {
        name: "Dropout",
        import: alias,
        supported: "Dropout",
    },
];

impl Operator for Reshape {
    fn kind(&self) -> &'static str {
        "Reshape"
    }

    fn lower(&self, _c: &mut Compiler, args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        Ok(args[0])
    }

    /// The target with its batch axis of 1.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let target: Vec<i64> = std::iter::once(1)
            .chain(w.out_shape.iter().map(|&d| d as i64))
            .collect();
        w.int64s("shape", &target);
        "Reshape"
    }
}

impl<A: Arith> Evaluate<A> for Reshape {
    fn eval(&self, _a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        args[0].to_vec()
    }
}

impl Operator for Transpose {
    fn kind(&self) -> &'static str {
        "Transpose"
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let n: usize = io.input().iter().product();
        let idx: Vec<u32> = (0..n as u32).collect();
        c.gather(args[0], kernels::transpose(&idx, io.input(), &self.0))
    }

    /// The permutation with the batch axis first.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let perm: Vec<i64> = std::iter::once(0)
            .chain(self.0.iter().map(|&p| p as i64 + 1))
            .collect();
        w.ints("perm", &perm);
        "Transpose"
    }
}

impl<A: Arith> Evaluate<A> for Transpose {
    fn eval(&self, _a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        kernels::transpose(args[0], io.input(), &self.0)
    }
}

/// Flatten from axis 1 (the batch axis whole); where the sample keeps the batch axis, from
/// any axis, to the two axes ONNX's Flatten makes.
fn flatten<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let axis = Attributes::of(at.node).int("axis", 1)?;
    let (x, shape) = computed(imp, at)?;
    let out = match imp.sample_axis(axis, shape.len()) {
        _ if imp.lead == 1 && axis == 1 => vec![shape.iter().product()],
        Some(a) if imp.lead == 0 => vec![shape[..a].iter().product(), shape[a..].iter().product()],
        _ => {
            return Err(
                format!("axis {axis} would mix the batch axis; only axis 1 is supported").into(),
            );
        }
    };
    imp.push(at, super::Op::Reshape(Reshape), vec![x], out)
}

fn reshape<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if constant_input(imp, at, 0).is_some() {
        return super::fold::reshape(imp, at);
    }
    let target = if imp.opset < 5 {
        let shape = Attributes::of(at.node).ints("shape")?;
        shape
            .ok_or("the target shape attribute is missing")?
            .to_vec()
    } else {
        let c = constant_input(imp, at, 1).ok_or("the target shape is computed at run time")?;
        super::constant::integers(imp, c)
            .map_err(|_| "a target shape of real numbers")?
            .0
    };
    let (x, shape) = computed(imp, at)?;
    let batch = (imp.lead == 1).then_some(imp.batch);
    let out =
        reshaped(batch, &shape, &target).map_err(|why| format!("target {target:?}: {why}"))?;
    imp.push(at, super::Op::Reshape(Reshape), vec![x], out)
}

/// A Reshape's per-sample target: the first entry is the batch axis (−1, 0, 1 or the
/// declared batch size; `batch` is `None` where the sample keeps that axis and the whole
/// target is the sample's), the rest may hold one −1 and copies (0) of the input's axes.
pub(super) fn reshaped(
    batch: Option<Option<usize>>,
    input: &[usize],
    target: &[i64],
) -> Result<Vec<usize>, String> {
    let rest = match batch {
        Some(batch) => {
            let Some((&first, rest)) = target.split_first() else {
                return Err("empty".to_owned());
            };
            let batch_ok =
                matches!(first, -1..=1) || batch.is_some_and(|b| i64::try_from(b) == Ok(first));
            if !batch_ok {
                return Err("the first axis must stay the batch axis".to_owned());
            }
            rest
        }
        None => target,
    };
    let total: usize = input.iter().product();
    let mut out = Vec::with_capacity(rest.len().min(16));
    let mut infer = None;
    for (i, &d) in rest.iter().enumerate() {
        out.push(match d {
            -1 if infer.is_none() => {
                infer = Some(i);
                1
            }
            // A 0 copies the input's axis at the same position (counting the batch axis).
            0 => *input.get(i).ok_or("0 past the input's axes")?,
            d if d > 0 => usize::try_from(d).map_err(|_| "an axis too large")?,
            _ => return Err("more than one −1 or a negative axis".to_owned()),
        });
    }
    let known = out.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if let Some(i) = infer {
        let known = known.filter(|&k| k != 0 && total.is_multiple_of(k));
        out[i] = total / known.ok_or(format!("cannot infer −1 for {total} elements"))?;
    } else if known != Some(total) {
        return Err(format!("{out:?} does not hold the {total} elements"));
    }
    Ok(out)
}

/// Squeeze and Unsqueeze of a computed tensor (the folded ones of shape subgraphs are
/// [`super::constant`]'s): a new shape, axes of 1 taken out or put in, never the batch axis.
pub(super) fn squeeze<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let unsqueeze = at.node.op_type == "Unsqueeze";
    let (x, shape) = computed(imp, at)?;
    let Some(axes) = super::constant::squeeze_axes(imp, at)? else {
        return Err("no axes: the batch axis of 1 would go too; name the axes".into());
    };
    // Axes are of the output for Unsqueeze.
    let rank = shape.len() + if unsqueeze { axes.len() } else { 0 };
    let mut at_axes = Vec::with_capacity(axes.len());
    for &a in &axes {
        match imp.sample_axis(a, rank) {
            Some(a) if !at_axes.contains(&a) => at_axes.push(a),
            _ => {
                return Err(format!(
                    "axes {axes:?}: each once, an axis of the sample (not the batch)"
                )
                .into());
            }
        }
    }
    let out: Vec<usize> = if unsqueeze {
        let mut dims = shape.iter().copied();
        (0..rank)
            .map(|i| {
                if at_axes.contains(&i) {
                    1
                } else {
                    dims.next().unwrap_or(1)
                }
            })
            .collect()
    } else {
        if let Some(&a) = at_axes.iter().find(|&&a| shape[a] != 1) {
            return Err(format!("squeezes axis {} of size {}", a + imp.lead, shape[a]).into());
        }
        let kept = (0..shape.len()).filter(|i| !at_axes.contains(i));
        kept.map(|i| shape[i]).collect()
    };
    imp.push(at, super::Op::Reshape(Reshape), vec![x], out)
}

/// Identity and Dropout: the same value, or the same constant (PyTorch shares one weight
/// among layers so), under the output's name.
fn alias<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if let Some(c) = constant_input(imp, at, 0) {
        return imp.alias_constant(output(at)?, c);
    }
    let (x, _) = computed(imp, at)?;
    imp.alias(output(at)?, x)
}

fn transpose<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let (lead, rank) = (imp.lead, imp.onnx_rank(shape.len()));
    let reversed: Vec<i64> = (0..rank as i64).rev().collect();
    let perm = Attributes::of(at.node).ints("perm")?.unwrap_or(&reversed);
    let mut seen = vec![false; rank];
    let ok = perm.len() == rank
        && perm[..lead].iter().all(|&p| p == 0)
        && perm.iter().all(|&p| {
            usize::try_from(p)
                .ok()
                .filter(|&p| p < rank)
                .is_some_and(|p| !std::mem::replace(&mut seen[p], true))
        });
    if !ok {
        return Err(
            format!("perm {perm:?} must permute the axes and keep the batch axis first").into(),
        );
    }
    let perm: Vec<usize> = perm[lead..].iter().map(|&p| p as usize - lead).collect();
    let out = perm.iter().map(|&p| shape[p]).collect();
    imp.push(at, super::Op::Transpose(Transpose(perm)), vec![x], out)
}
