//! Add and Sub (ONNX Operators): of two computed tensors of one rank, either broadcast (a
//! gather), local in A and α (both brought to one scale and sharing first); of a computed tensor and a constant (broadcast at
//! import), the constant the server's A input at the tensor's scale.

use super::condition::held;
use super::{Evaluate, Family, Io, Operator};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{broadcast, computed, constant_input, reals};
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::secure::{Compiler, Shared};

/// The sum of two computed tensors of one shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Add;

/// The difference of two computed tensors of one shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sub;

/// A constant (broadcast to the output's shape) added to a computed tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct AddConst(pub Vec<f32>);

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Add",
        import,
        supported: "Add",
    },
    Family {
        name: "Sub",
        import,
        supported: "Sub",
    },
];

/// `x ± y` of two computed tensors, each broadcast to the output by a gather, at one scale (a
/// value at 2^f lifted to 2^2f if the other is there) and in one sharing.
fn combine(
    c: &mut Compiler,
    args: &[Shared],
    io: &Io<'_>,
    subtract: bool,
) -> Result<Shared, Error> {
    let mut xy = [args[0], args[1]];
    for (v, shape) in xy.iter_mut().zip(&io.inputs) {
        if *shape != io.output {
            let at = kernels::broadcast_indices(shape, io.output);
            *v = c.gather(*v, at.into_iter().map(|i| i as u32).collect())?;
        }
    }
    let (x, y) = c.align(xy[0], xy[1])?;
    let (a, b) = c.same(x, y)?;
    let v = if subtract {
        c.p.sub(a, b)
    } else {
        c.p.add(a, b)
    };
    Ok(Shared {
        v: v.map_err(Error::Compile)?,
        double: x.double,
        nonnegative: !subtract && x.nonnegative && y.nonnegative,
    })
}

impl Operator for Add {
    fn kind(&self) -> &'static str {
        "Add"
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        combine(c, args, io, false)
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "Add"
    }
}

/// `f` of each pair of elements of the two inputs, broadcast to the output.
fn pairwise<E: Copy>(args: &[&[E]], io: &Io<'_>, f: impl Fn(E, E) -> E) -> Vec<E> {
    let at = |k: usize| kernels::broadcast_indices(io.inputs[k], io.output);
    let (x, y) = (at(0), at(1));
    x.into_iter()
        .zip(y)
        .map(|(i, j)| f(args[0][i], args[1][j]))
        .collect()
}

impl<A: Arith> Evaluate<A> for Add {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        pairwise(args, io, |u, v| a.add(u, v))
    }
}

impl Operator for Sub {
    fn kind(&self) -> &'static str {
        "Sub"
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        combine(c, args, io, true)
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "Sub"
    }
}

impl<A: Arith> Evaluate<A> for Sub {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        pairwise(args, io, |u, v| a.sub(u, v))
    }
}

impl Operator for AddConst {
    fn kind(&self) -> &'static str {
        "Add (constant)"
    }

    fn weights(&self) -> Vec<&[f32]> {
        vec![&self.0]
    }

    fn ranges(&self) -> [&[f32]; 2] {
        [&[], &self.0]
    }

    /// The constants are the server's (weights): its A input at `x`'s scale.
    fn lower(&self, c: &mut Compiler, args: &[Shared], _io: &Io<'_>) -> Result<Shared, Error> {
        let x = args[0];
        let a = c.a(x)?;
        let fixed = c.fixed;
        let encode = |v: f32| {
            if x.double {
                fixed.encode_product(v)
            } else {
                fixed.encode(v)
            }
        };
        let k = c.public(self.0.iter().map(|&v| encode(v)).collect())?;
        Ok(Shared {
            v: c.p.add(a, k).map_err(Error::Compile)?,
            double: x.double,
            nonnegative: false,
        })
    }

    /// The constant with its batch axis of 1.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let dims = w.sample_dims();
        w.floats("constant", &dims, &self.0);
        "Add"
    }
}

impl<A: Arith> Evaluate<A> for AddConst {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        vec![a.encode_all(&self.0)]
    }

    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], _io: &Io<'_>) -> Vec<A::E> {
        let pairs = args[0].iter().zip(&k[0]);
        pairs.map(|(&u, &v)| a.add(u, v)).collect()
    }
}

/// The constant input `k` of an Add or Sub: finite, but for masks added before a Softmax
/// (−∞, or float's lowest), held as Where's are ([`held`]).
fn masks<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    k: usize,
) -> Result<(Vec<usize>, Vec<f32>), Refusal> {
    let c = constant_input(imp, at, k).ok_or("the constant must be an initializer")?;
    let (shape, values) = reals(imp, c, "the constant")?;
    if values.iter().any(|v| v.is_nan()) {
        return Err("the constant holds NaN".into());
    }
    Ok((shape, values.into_iter().map(held).collect()))
}

/// Add or Sub: of two computed tensors of one shape, or of a computed tensor and a constant
/// that broadcasts to it (a constant minus a computed tensor is not supported).
fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let sub = at.node.op_type == "Sub";
    let args = &at.node.input;
    if args.len() != 2 {
        return Err("needs two inputs".into());
    }
    match (constant_input(imp, at, 0), constant_input(imp, at, 1)) {
        (None, None) => {
            let (a, b) = (imp.value(&args[0])?, imp.value(&args[1])?);
            let shape = super::broadcast_shape(&imp.shapes[a], &imp.shapes[b])?;
            let op = if sub {
                super::Op::Sub(Sub)
            } else {
                super::Op::Add(Add)
            };
            imp.push(at, op, vec![a, b], shape)
        }
        (Some(_), Some(_)) => super::fold::binary(imp, at),
        (Some(_), None) if sub => Err("a constant minus a computed tensor is not supported".into()),
        (first, _) => {
            let (x, shape) = computed(imp, at)?;
            let k = usize::from(first.is_none());
            let (cshape, mut c) = masks(imp, at, k)?;
            if sub {
                c.iter_mut().for_each(|v| *v = -*v);
            }
            let c = broadcast(&cshape, &c, &shape).ok_or_else(|| {
                format!("a constant of shape {cshape:?} does not broadcast to {shape:?}")
            })?;
            imp.push(at, super::Op::AddConst(AddConst(c)), vec![x], shape)
        }
    }
}
