//! Concat of computed tensors (ONNX Operators: Concat) along a per-sample axis: a gather from
//! all of them, in one scale and sharing. A constant among them (a learned token, as ViT's
//! class token) is a layer of its own first ([`Tensor`]: the server's input). A Concat of
//! constants only is a shape subgraph's, folded at import ([`super::constant`]).

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::Sharing;

/// The inputs joined along a per-sample axis (ONNX's axis less one: the batch axis is gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Concat {
    /// The axis.
    pub axis: usize,
}

/// A constant tensor of the server's joined to computed ones (ViT's class token): its A input,
/// at scale 2^f, one copy per input of the batch. Its values are weights (`nn strip` removes
/// them).
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor(pub Vec<f32>);

pub(super) const FAMILY: &[Family] = &[Family {
    name: "Concat",
    import,
    supported: "Concat (of computed tensors, and constants among them)",
}];

impl Operator for Tensor {
    fn kind(&self) -> &'static str {
        "Tensor"
    }

    fn weights(&self) -> Vec<&[f32]> {
        vec![&self.0]
    }

    fn ranges(&self) -> [&[f32]; 2] {
        [&self.0, &[]]
    }

    fn lower(&self, c: &mut Compiler, _args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        let fixed = c.fixed;
        let v = c.public(self.0.iter().map(|&v| fixed.encode(v)).collect())?;
        Ok(Shared::plain(v))
    }

    /// An Identity of the constant with its batch axis of 1 (read back as the constant).
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let dims = w.sample_dims();
        w.floats("value", &dims, &self.0);
        "Identity"
    }
}

impl<A: Arith> Evaluate<A> for Tensor {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        vec![a.encode_all(&self.0)]
    }

    fn eval(&self, _a: &A, k: &[Vec<A::E>], _args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        k[0].clone()
    }
}

impl Operator for Concat {
    fn kind(&self) -> &'static str {
        "Concat"
    }

    /// One scale and sharing first (the lowest common one), then a gather from all parts,
    /// input by input of the batch.
    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let double = args.iter().any(|p| p.double);
        let alpha = args.iter().all(|p| c.sharing(*p) == Sharing::Alpha);
        let mut values = Vec::with_capacity(args.len());
        for &part in args {
            let part = if double && !part.double {
                c.lift(part)?
            } else {
                part
            };
            values.push(if alpha { part.v } else { c.a(part)? });
        }
        // Part j holds the batch's inputs in turn, `len(j)` elements each, from `start(j)` of
        // the concatenation the gather reads: the kernel, run on those positions of input 0,
        // gives input b's at b·len(j) further.
        let lens: Vec<usize> = io.inputs.iter().map(|s| s.iter().product()).collect();
        let starts: Vec<usize> = lens
            .iter()
            .scan(0, |at, &len| {
                let start = *at;
                *at += c.batch * len;
                Some(start)
            })
            .collect();
        let positions: Vec<Vec<u32>> = starts
            .iter()
            .zip(&lens)
            .map(|(&start, &len)| (start..start + len).map(|i| i as u32).collect())
            .collect();
        let refs: Vec<&[u32]> = positions.iter().map(Vec::as_slice).collect();
        let first = kernels::concat(&refs, &io.inputs, self.axis);
        // Each position's part's length: how far input b's copy is from input 0's.
        let step: Vec<u32> = first
            .iter()
            .map(|&i| lens[starts.partition_point(|&s| s <= i as usize) - 1] as u32)
            .collect();
        let indices: Vec<u32> = (0..c.batch as u32)
            .flat_map(|b| first.iter().zip(&step).map(move |(&i, &d)| i + b * d))
            .collect();
        let v = c.p.gather_from(&values, indices).map_err(Error::Compile)?;
        Ok(Shared {
            v,
            double,
            nonnegative: args.iter().all(|p| p.nonnegative),
        })
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        w.int("axis", self.axis as i64 + 1);
        "Concat"
    }
}

impl<A: Arith> Evaluate<A> for Concat {
    fn eval(&self, _a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        kernels::concat(args, &io.inputs, self.axis)
    }
}

/// Concat of computed tensors of one rank, equal but on the axis (not the batch axis), and
/// constants of that rank among them (each a [`Tensor`] layer first).
fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let args: Vec<&str> = at.node.input.iter().map(String::as_str).collect();
    if args.is_empty() || args.iter().any(|a| a.is_empty()) {
        return Err("needs one or more inputs".into());
    }
    if args.iter().all(|a| imp.constants.contains_key(a)) {
        // A shape subgraph's join of integers.
        return super::constant::concat(imp, at);
    }
    let first = args
        .iter()
        .find(|a| !imp.constants.contains_key(*a))
        .map(|a| imp.value(a))
        .transpose()?
        .map(|v| imp.shapes[v].clone())
        .unwrap_or_default();
    let onnx_axis = Attributes::of(at.node).int("axis", i64::MAX)?;
    let Some(axis) = imp.sample_axis(onnx_axis, first.len()) else {
        return Err(
            format!("axis {onnx_axis} must be an axis of the sample (not the batch axis)").into(),
        );
    };
    let mut inputs = Vec::with_capacity(args.len());
    for (k, a) in args.iter().enumerate() {
        inputs.push(if imp.constants.contains_key(a) {
            constant_part(imp, at, k, &first)?
        } else {
            imp.value(a)?
        });
    }
    let mut out = first.clone();
    out[axis] = 0;
    for &v in &inputs {
        let shape = &imp.shapes[v];
        let fits = shape.len() == first.len()
            && shape
                .iter()
                .zip(&first)
                .enumerate()
                .all(|(i, (a, b))| i == axis || a == b);
        if !fits {
            return Err(
                format!("shapes {first:?} and {shape:?} do not join on axis {onnx_axis}").into(),
            );
        }
        out[axis] = out[axis]
            .checked_add(shape[axis])
            .ok_or("the joined axis overflows")?;
    }
    imp.push(at, super::Op::Concat(Concat { axis }), inputs, out)
}

/// Input `k`, a constant of the computed parts' rank (`like`) with a batch axis of 1, as a
/// [`Tensor`] layer.
fn constant_part<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    k: usize,
    like: &[usize],
) -> Result<usize, Refusal> {
    let (shape, values) = crate::import::args::weight(imp, at, k, "a joined constant")?;
    let lead = imp.onnx_rank(like.len()) - like.len();
    match shape.split_at_checked(lead) {
        Some((batch, sample)) if batch.iter().all(|&d| d == 1) && sample.len() == like.len() => {
            let sample = sample.to_vec();
            imp.unnamed(at, super::Op::Tensor(Tensor(values)), Vec::new(), sample)
        }
        _ => Err(format!("a constant of shape {shape:?} joined to tensors of {like:?}").into()),
    }
}
