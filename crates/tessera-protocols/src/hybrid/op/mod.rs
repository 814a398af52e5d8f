//! The operations of a hybrid program, one module each: its type rules (the [`Program`]
//! methods that add it), what it needs from the setup and fixes there ([`Operation::setup`]),
//! and its online step ([`Operation::online`]). [`Op`] is the one registry of them.

mod arithmetic;
mod circuits;
mod conversions;
mod garbled;
mod gates;
mod input;
mod maps;
mod mixed;
mod output;
mod products;
mod truncation;

pub use conversions::route;
pub(super) use garbled::YCircuit;

use super::online::Run;
use super::prepare::{Slot, Walk};
use super::{Program, Type, Value};
use crate::Error;

/// One operation of a hybrid program.
pub(super) trait Operation {
    /// Its name, as [`Program::describe`] and [`super::Step::op`] give it.
    fn name(&self) -> &'static str;

    /// In the setup walk: fixes the masks of its β and α outputs and states what its online
    /// step needs from the setup, in the order it reads them.
    fn setup(&self, _walk: &mut Walk<'_>) -> Vec<Slot> {
        Vec::new()
    }

    /// Its online step on this party's shares, with its vectors from the setup.
    fn online(&self, run: &mut Run<'_, '_>, material: Vec<Vec<u64>>) -> Result<(), Error>;
}

/// Every operation a program can hold: the one place that names them all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Input(input::Input),
    Combine(arithmetic::Combine),
    Not(gates::Not),
    Wires(gates::Wires),
    Constant(arithmetic::Constant),
    Product(products::Product),
    BitMul(mixed::BitMul),
    BitProduct(mixed::BitProduct),
    Convert(conversions::Convert),
    Split(conversions::Split),
    Circuit(circuits::RunCircuit),
    Garbled(garbled::Garbled),
    Output(output::Open),
    Barrier(output::Barrier),
    Linear(maps::Linear),
    Gather(maps::Gather),
    Truncate(truncation::Truncate),
    TopBits(truncation::TopBits),
}

impl Op {
    /// The operation behind the variant.
    pub(super) fn operation(&self) -> &dyn Operation {
        match self {
            Op::Input(o) => o,
            Op::Combine(o) => o,
            Op::Not(o) => o,
            Op::Wires(o) => o,
            Op::Constant(o) => o,
            Op::Product(o) => o,
            Op::BitMul(o) => o,
            Op::BitProduct(o) => o,
            Op::Convert(o) => o,
            Op::Split(o) => o,
            Op::Circuit(o) => o,
            Op::Garbled(o) => o,
            Op::Output(o) => o,
            Op::Barrier(o) => o,
            Op::Linear(o) => o,
            Op::Gather(o) => o,
            Op::Truncate(o) => o,
            Op::TopBits(o) => o,
        }
    }
}

impl Program {
    /// A new value of type `t`.
    fn value(&mut self, t: Type) -> usize {
        self.types.push(t);
        self.types.len() - 1
    }

    /// A new value of type `t`, written by `op`.
    fn push(&mut self, t: Type, op: impl FnOnce(usize) -> Op) -> Value {
        let out = self.value(t);
        self.ops.push(op(out));
        Value(out)
    }

    fn ty(&self, v: Value) -> Result<Type, Error> {
        self.types
            .get(v.0)
            .copied()
            .ok_or_else(|| bad(format!("value {} is not of this program", v.0)))
    }

    /// Checks that `a` and `b` have one type, Boolean or not as `boolean` says.
    fn same(&self, a: Value, b: Value, boolean: bool) -> Result<Type, Error> {
        let (ta, tb) = (self.ty(a)?, self.ty(b)?);
        if ta != tb {
            return Err(bad(format!("operands of types {ta:?} and {tb:?}")));
        }
        if ta.sharing.is_boolean() != boolean {
            return Err(bad(format!(
                "a {} operation on {} values",
                if boolean { "Boolean" } else { "arithmetic" },
                ta.sharing.name()
            )));
        }
        Ok(ta)
    }
}

/// A program built against its type rules: the caller's misuse.
fn bad(what: String) -> Error {
    Error::Input(what)
}
