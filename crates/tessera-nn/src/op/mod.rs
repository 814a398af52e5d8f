//! The operators of a network, one module per ONNX operator family (ONNX Operators,
//! `docs/Operators.md`): each holds its import (attributes, constants and shapes checked), its
//! cost in the units that cost in secure evaluation, its plaintext evaluation in any number
//! system, its lowering to a hybrid program, its ONNX export and its strip rule (the numbers
//! that are the server's), behind [`Operator`] and [`Evaluate`]. [`Op`] and [`FAMILIES`] are the
//! one registry of them: the layer kinds, and the ONNX names the importer reads.
//!
//! Adding an operator is one module here and its line in each list.

mod add;
mod batch_norm;
mod clip;
mod concat;
mod condition;
mod constant;
mod conv;
mod dense;
mod embedding;
mod fold;
mod hard;
mod matmul;
mod movement;
mod mul;
mod normalize;
mod output;
mod pad;
mod pool;
mod reduce;
mod relu;
mod select;
mod smooth;

pub use add::{Add, AddConst, Sub};
pub(crate) use batch_norm::fold_batch_norms;
pub use clip::Clip;
pub use concat::{Concat, Tensor};
pub use condition::{FILL_LIMIT, Fill, MASK, Where};
pub use conv::Conv;
pub use dense::Dense;
pub use hard::{HardSigmoid, HardSwish};
pub use matmul::MatMul;
pub use movement::{Reshape, Transpose};
pub use mul::{Divide, Mul, Neg, Scale};
pub use normalize::{LayerNorm, Softmax};
pub use pad::Pad;
pub use pool::{AvgPool, GlobalAvgPool, MaxPool, Pool};
pub use reduce::{Reduce, Reduction};
pub use relu::Relu;
pub use select::{Expand, Gather, Slice};
pub use smooth::{Function, Power, Smooth};

use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::{At, Importer, Refusal};
use crate::model::{LayerCost, Model, Node};
use crate::secure::{Compiler, Shared};

/// One operator of a [`crate::model::Model`]: everything but its plaintext arithmetic
/// ([`Evaluate`]).
pub(crate) trait Operator {
    /// The operator as ONNX names it, for tables and errors.
    fn kind(&self) -> &'static str;

    /// Its class in VASA's per-operator table (seed 000, Table 7; [`crate::infer::CLASSES`]).
    fn class(&self) -> &'static str {
        "other"
    }

    /// Its strip rule: the numbers it carries that are the server's (weights, biases,
    /// constants), which `nn strip` removes and a stripped architecture holds as zeros.
    fn weights(&self) -> Vec<&[f32]> {
        Vec::new()
    }

    /// The numbers that fixed point must represent: those that multiply (held below
    /// [`crate::fixed::Fixed::max_value`]) and those added at a product's scale (held below
    /// [`crate::fixed::Fixed::max_product`]).
    fn ranges(&self) -> [&[f32]; 2] {
        [&[], &[]]
    }

    /// Its size in the units that cost in secure evaluation, in checked arithmetic (`None`
    /// on overflow).
    fn cost(&self, _io: &Io<'_>) -> Option<LayerCost> {
        Some(LayerCost::default())
    }

    /// The largest matrix its evaluation builds (a Conv's image-to-column matrix), in
    /// elements: held to [`crate::model::Ceiling::tensor_elements`].
    fn matrix_elements(&self, _io: &Io<'_>) -> Option<usize> {
        Some(0)
    }

    /// The smallest ring its method computes in (ℓ): 64 for the functions whose methods
    /// amplify a truncation's unit (exp's squarings, Newton's steps), which at ℓ = 32 leave
    /// too few fractional bits (at f = 10 e^x came out 6 % off, and 1/x of x = 1 wrong in 12 of
    /// 20 inferences).
    fn ring_bits(&self) -> u32 {
        32
    }

    /// Its lowering to the hybrid program: the output from `args` (one per input, in order).
    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error>;

    /// Writes it as an ONNX node: attributes and constants into `w`; its `op_type`.
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str;
}

/// An operator's plaintext arithmetic in the number system `A`: the reference the secure
/// lowering computes exactly in fixed point.
pub(crate) trait Evaluate<A: Arith> {
    /// Its constants in `A`, made once per model and handed back to [`Evaluate::eval`].
    fn encode(&self, _a: &A) -> Vec<Vec<A::E>> {
        Vec::new()
    }

    /// Its output from `args` (one per input, in order).
    fn eval(&self, a: &A, constants: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E>;
}

/// A node's shapes: its inputs' and its output's, per sample.
pub(crate) struct Io<'a> {
    /// The node's name.
    pub(crate) name: &'a str,
    /// Each input's shape.
    pub(crate) inputs: Vec<&'a [usize]>,
    /// The output's shape.
    pub(crate) output: &'a [usize],
}

impl<'a> Io<'a> {
    /// The shapes of `node` in `model` (`None` if it names a value the model does not have).
    pub(crate) fn of(model: &'a Model, node: &'a Node) -> Option<Self> {
        let shape = |v: usize| model.shapes.get(v).map(Vec::as_slice);
        Some(Io {
            name: &node.name,
            inputs: node
                .inputs
                .iter()
                .map(|&v| shape(v))
                .collect::<Option<_>>()?,
            output: shape(node.output)?,
        })
    }

    /// The first input's shape.
    pub(crate) fn input(&self) -> &'a [usize] {
        self.inputs.first().copied().unwrap_or_default()
    }

    /// Elements of the output, in checked arithmetic.
    pub(crate) fn output_len(&self) -> Option<usize> {
        self.output
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
    }

    /// The first input as `[channels, height, width]` (an importer checked its rank).
    pub(crate) fn spatial(&self) -> Result<[usize; 3], Error> {
        spatial(self.input()).map_err(|why| Error::Graph(format!("node {:?}: {why}", self.name)))
    }
}

/// A node's arguments, one per input from the values computed so far (`get`), and its shapes;
/// an error where it reads a value not yet computed or names one the model lacks (a model
/// built in code).
pub(crate) fn arguments<'m, T>(
    model: &'m Model,
    node: &'m Node,
    get: impl Fn(usize) -> Option<T>,
) -> Result<(Vec<T>, Io<'m>), Error> {
    let broken = |what: &str| Error::Graph(format!("node {:?} {what}", node.name));
    let args = node.inputs.iter().map(|&v| get(v)).collect::<Option<_>>();
    let args = args.ok_or_else(|| broken("reads a value not yet computed"))?;
    let io = Io::of(model, node).ok_or_else(|| broken("names a value the model lacks"))?;
    Ok((args, io))
}

/// The shape two computed tensors of one rank broadcast to, or why not (a lower rank would
/// align the batch axis with another: refused).
pub(crate) fn broadcast_shape(x: &[usize], y: &[usize]) -> Result<Vec<usize>, Refusal> {
    let refused = || Refusal::from(format!("shapes {x:?} and {y:?} do not broadcast"));
    if x.len() != y.len() {
        return Err(refused());
    }
    x.iter()
        .zip(y)
        .map(|(&a, &b)| match (a, b) {
            (a, b) if a == b || b == 1 => Ok(a),
            (1, b) => Ok(b),
            _ => Err(refused()),
        })
        .collect()
}

/// A `[channels, height, width]` shape, or why not.
pub(crate) fn spatial(shape: &[usize]) -> Result<[usize; 3], String> {
    match shape {
        &[c, h, w] => Ok([c, h, w]),
        _ => Err(format!(
            "an input of shape {shape:?}; [channels, height, width] is needed"
        )),
    }
}

/// What imports one ONNX node.
pub(crate) type Import = for<'a> fn(&mut Importer<'a>, &At<'a>) -> Result<(), Refusal>;

/// An ONNX operator the importer reads: its name, its import, and what `nn info` and errors
/// say of it (empty for the names of a family said once).
pub(crate) struct Family {
    /// The ONNX `op_type`.
    pub(crate) name: &'static str,
    /// Its import.
    pub(crate) import: Import,
    /// What is supported, for [`supported`].
    pub(crate) supported: &'static str,
}

/// Every ONNX operator the importer reads, by module.
pub(crate) const FAMILIES: &[&[Family]] = &[
    dense::FAMILY,
    matmul::FAMILY,
    conv::FAMILY,
    relu::FAMILY,
    clip::FAMILY,
    hard::FAMILY,
    smooth::FAMILY,
    normalize::FAMILY,
    pool::FAMILY,
    batch_norm::FAMILY,
    movement::FAMILY,
    concat::FAMILY,
    pad::FAMILY,
    add::FAMILY,
    mul::FAMILY,
    reduce::FAMILY,
    select::FAMILY,
    condition::FAMILY,
    constant::FAMILY,
    fold::FAMILY,
    output::FAMILY,
];

/// The constant inputs that are the architecture's, not the server's weights, by operator
/// and input position: `nn strip` keeps them, and a client compiles with them (a Pow's
/// exponent decides its method; Where's condition and constant branch are its masks; an
/// embedding table is the client's; a
/// constant that is divided, or whose square root or cast is taken, is folded at import).
pub(crate) const ARCHITECTURE_INPUTS: &[(&str, usize)] = &[
    ("Pow", 1),
    ("Gather", 0),
    ("Where", 0),
    ("Where", 1),
    ("Where", 2),
    ("Div", 0),
    ("Sqrt", 0),
    ("Cast", 0),
    ("Mod", 0),
    ("Mod", 1),
];

/// The family that imports `op_type`.
pub(crate) fn family(op_type: &str) -> Option<&'static Family> {
    FAMILIES
        .iter()
        .flat_map(|f| f.iter())
        .find(|f| f.name == op_type)
}

/// What the importer supports, one line per family, for error messages and `nn info`.
pub fn supported() -> impl Iterator<Item = &'static str> {
    FAMILIES
        .iter()
        .flat_map(|f| f.iter())
        .map(|f| f.supported)
        .filter(|s| !s.is_empty())
}

/// The layer kinds: one variant per operator, and the dispatch to its module.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// What a node computes: one operator of `crate::op`'s registry.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Op {
            $($(#[$doc])* $variant($ty),)*
        }

        impl Op {
            /// The operator behind the variant.
            pub(crate) fn operator(&self) -> &dyn Operator {
                match self {
                    $(Op::$variant(o) => o,)*
                }
            }

            /// Its plaintext arithmetic in `A`.
            pub(crate) fn evaluator<A: Arith>(&self) -> &dyn Evaluate<A> {
                match self {
                    $(Op::$variant(o) => o,)*
                }
            }
        }
    };
}

registry! {
    /// Gemm, MatMul by a constant, or ONNX's Linear form of them.
    Dense(Dense),
    /// The matrix product of two computed tensors, batched over leading axes.
    MatMul(MatMul),
    /// Conv.
    Conv(Conv),
    /// max(x, 0).
    Relu(Relu),
    /// The maximum over each window, channel by channel.
    MaxPool(MaxPool),
    /// The mean over each window, channel by channel.
    AvgPool(AvgPool),
    /// The mean over each channel: `[C, H, W]` to `[C, 1, 1]`.
    GlobalAvgPool(GlobalAvgPool),
    /// The same elements in a new shape (Flatten, Reshape).
    Reshape(Reshape),
    /// Axes permuted.
    Transpose(Transpose),
    /// The sum of two computed tensors of one shape.
    Add(Add),
    /// The difference of two computed tensors of one shape.
    Sub(Sub),
    /// A constant added to a computed tensor.
    AddConst(AddConst),
    /// The inputs joined along a per-sample axis.
    Concat(Concat),
    /// A constant tensor of the server's joined to computed ones.
    Tensor(Tensor),
    /// Zeros added before and after each per-sample axis.
    Pad(Pad),
    /// The value held between bounds.
    Clip(Clip),
    /// The elementwise product of two computed tensors.
    Mul(Mul),
    /// A computed tensor times constants.
    Scale(Scale),
    /// The negation.
    Neg(Neg),
    /// A sum, mean or maximum over per-sample axes.
    Reduce(Reduce),
    /// A part of a computed tensor.
    Slice(Slice),
    /// Elements of a computed tensor at constant indices along an axis.
    Gather(Gather),
    /// A computed tensor broadcast to a larger shape.
    Expand(Expand),
    /// `clip(α·x + β, 0, 1)`.
    HardSigmoid(HardSigmoid),
    /// `x·HardSigmoid(x)`.
    HardSwish(HardSwish),
    /// A smooth function of each element.
    Smooth(Smooth),
    /// A softmax over per-sample axes.
    Softmax(Softmax),
    /// A layer normalisation.
    LayerNorm(LayerNorm),
    /// The quotient of two computed tensors.
    Divide(Divide),
    /// A power of each element.
    Power(Power),
    /// Each element from one of two branches by a constant condition.
    Where(Where),
}

impl Op {
    /// The numbers the operation carries: weights, biases, constants (`Operator::weights`).
    pub fn weights(&self) -> Vec<&[f32]> {
        self.operator().weights()
    }

    /// A short name for tables: the operator as ONNX would call it.
    pub fn kind(&self) -> &'static str {
        self.operator().kind()
    }

    /// Its class in VASA's per-operator table ([`crate::infer::CLASSES`]).
    pub fn class(&self) -> &'static str {
        self.operator().class()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One import per ONNX name, each found by [`family`], and something said of every
    /// family (the first line is what an error lists first).
    #[test]
    fn the_registry_names_each_onnx_operator_once() {
        let names: Vec<&str> = FAMILIES
            .iter()
            .flat_map(|f| f.iter())
            .map(|f| f.name)
            .collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(
            names
                .iter()
                .all(|n| family(n).is_some_and(|f| f.name == *n))
        );
        assert!(family("STFT").is_none());
        assert!(FAMILIES.iter().all(|f| !f[0].supported.is_empty()));
        assert_eq!(supported().next(), Some("Gemm"));
    }
}
