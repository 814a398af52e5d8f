//! Where with a constant condition (ONNX Operators: Where): attention's masks. Each output place
//! takes one branch's element by a condition fixed in the architecture, so the lowering is
//! local in every sharing: each computed branch gathered to the places it fills (zeros
//! elsewhere), a constant branch the server's A input there, and the two added.
//!
//! The condition and a constant branch are the architecture's, not the server's weights (`nn
//! strip` keeps them: a client compiles with them). A constant branch may be infinite, as the
//! masks before a Softmax are (−∞, or float's lowest: at least [`MASK`]): those are held at
//! [`FILL_LIMIT`], where `exp` is 0 in fixed point and below 10⁻²⁷ in float, so the Softmax
//! after it is unchanged to any precision it shows.

use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{broadcast, constant_input, reals};
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::linear;

/// The largest magnitude of a constant branch: 64. A mask's −∞ becomes −64, where fixed
/// point's `exp` is held at 0 and float's is 1.6·10⁻²⁸ (onnxruntime's 0 to any precision a
/// softmax shows); and −64 less a row's maximum stays inside the ring at the products' scale
/// wherever ℓ − 2f ≥ 8 (ℓ = 32 with f ≤ 11; every ℓ = 64 format).
pub const FILL_LIMIT: f32 = 64.0;

/// The smallest magnitude of a constant that is read as a mask: 2^64 (−∞, float's lowest; a
/// weight this large could not be represented in fixed point anyway).
pub const MASK: f32 = 18_446_744_073_709_551_616.0;

/// `v`, or a mask's ±[`FILL_LIMIT`] for a magnitude of at least [`MASK`].
pub fn held(v: f32) -> f32 {
    if v.abs() >= MASK {
        FILL_LIMIT.copysign(v)
    } else {
        v
    }
}

/// Each output place from one of two branches, by a constant condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Where {
    /// Per output place: whether it takes the first branch (ONNX's X) rather than the second.
    pub mask: Vec<bool>,
    /// The branch that is a constant, if one is (the node's inputs are the computed ones).
    pub constant: Option<Fill>,
}

/// A constant branch of a [`Where`].
#[derive(Clone, Debug, PartialEq)]
pub struct Fill {
    /// Whether it is the first branch (X).
    pub first: bool,
    /// Its values broadcast to the output, masks held at ±[`FILL_LIMIT`] (`held`).
    pub values: Vec<f32>,
}

pub(super) const FAMILY: &[Family] = &[Family {
    name: "Where",
    import,
    supported: "Where with a constant condition (masks; infinite fills held at ±64)",
}];

impl Where {
    /// The output places each branch fills, first then second.
    fn fills(&self, first: bool) -> impl Iterator<Item = bool> + '_ {
        self.mask.iter().map(move |&m| m == first)
    }

    /// Which of the node's computed inputs each branch is (`None`: the constant).
    fn inputs(&self) -> [Option<usize>; 2] {
        match &self.constant {
            None => [Some(0), Some(1)],
            Some(f) if f.first => [None, Some(0)],
            Some(_) => [Some(0), None],
        }
    }
}

impl Operator for Where {
    fn kind(&self) -> &'static str {
        "Where"
    }

    fn ranges(&self) -> [&[f32]; 2] {
        [self.constant.as_ref().map_or(&[], |f| &f.values), &[]]
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let e = Error::Compile;
        let mut parts = Vec::with_capacity(2);
        for (branch, input) in [true, false].into_iter().zip(self.inputs()) {
            let fills = self.fills(branch);
            match input {
                Some(j) => {
                    let x = c.settle(args[j])?;
                    let from = kernels::broadcast_indices(io.inputs[j], io.output);
                    let places = from.into_iter().zip(fills);
                    let at = places.map(|(i, f)| if f { i as u32 } else { linear::ZERO });
                    parts.push(c.gather(x, at.collect())?);
                }
                None => {
                    let fill = self.constant.as_ref().map_or(&[][..], |f| &f.values);
                    let fixed = c.fixed;
                    let values = fill.iter().zip(fills);
                    let encoded = values.map(|(&v, f)| if f { fixed.encode(v) } else { 0 });
                    let k = c.public(encoded.collect())?;
                    parts.push(Shared::plain(k));
                }
            }
        }
        let (a, b) = c.same(parts[0], parts[1])?;
        let sum = c.p.add(a, b).map_err(e)?;
        Ok(Shared::plain(sum))
    }

    /// `Where(condition, X, Y)`, the constant branch (if any) as Y: the condition inverted
    /// where the constant was X.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let invert = self.constant.as_ref().is_some_and(|f| f.first);
        let condition: Vec<bool> = self.mask.iter().map(|&m| m != invert).collect();
        let dims = w.sample_dims();
        w.leading_bools("condition", &dims, &condition);
        if let Some(f) = &self.constant {
            w.floats("fill", &dims, &f.values);
        }
        "Where"
    }
}

impl<A: Arith> Evaluate<A> for Where {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        self.constant
            .iter()
            .map(|f| a.encode_all(&f.values))
            .collect()
    }

    fn eval(&self, _a: &A, k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let branch = |input: Option<usize>| -> Vec<A::E> {
            match input {
                Some(j) => kernels::broadcast_indices(io.inputs[j], io.output)
                    .into_iter()
                    .map(|i| args[j][i])
                    .collect(),
                None => k[0].clone(),
            }
        };
        let [x, y] = self.inputs().map(branch);
        let picks = self.mask.iter().zip(x).zip(y);
        picks.map(|((&m, x), y)| if m { x } else { y }).collect()
    }
}

/// Where: the condition a constant (Boolean or integer), each branch computed or a constant
/// (not both constants), all broadcasting to the computed branches' shape.
fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if at.node.input.len() != 3 {
        return Err("needs three inputs: a condition and two branches".into());
    }
    let condition = constant_input(imp, at, 0)
        .ok_or("the condition is computed at run time: only constant conditions (masks)")?;
    let branches = [1, 2].map(|k| constant_input(imp, at, k));
    let computed: Vec<usize> = (1..=2)
        .filter(|&k| branches[k - 1].is_none())
        .map(|k| imp.value(&at.node.input[k]))
        .collect::<Result<_, _>>()?;
    let out = match (computed.first(), computed.get(1)) {
        (None, _) => return super::fold::select(imp, at),
        (Some(&x), None) => imp.shapes[x].clone(),
        (Some(&x), Some(&y)) => super::broadcast_shape(&imp.shapes[x], &imp.shapes[y])?,
    };
    let (cshape, flags) = super::fold::integers_shaped(imp, condition)?;
    let flags: Vec<f32> = flags.iter().map(|&v| f32::from(u8::from(v != 0))).collect();
    let flags = broadcast(&cshape, &flags, &out)
        .ok_or_else(|| format!("a condition of shape {cshape:?} does not broadcast to {out:?}"))?;
    let mask = flags.iter().map(|&v| v != 0.0).collect();
    let constant = match branches {
        [Some(c), _] | [_, Some(c)] => {
            let first = branches[0].is_some();
            let (shape, values) = reals(imp, c, "the constant branch")?;
            if values.iter().any(|v| v.is_nan()) {
                return Err("the constant branch holds NaN".into());
            }
            let values = broadcast(&shape, &values, &out).ok_or_else(|| {
                format!("a constant branch of shape {shape:?} does not broadcast to {out:?}")
            })?;
            Some(Fill {
                first,
                values: values.into_iter().map(held).collect(),
            })
        }
        _ => None,
    };
    let op = super::Op::Where(Where { mask, constant });
    imp.push(at, op, computed, out)
}
