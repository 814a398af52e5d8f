//! The operations of a hybrid program, one module each: its type rules (the [`Program`]
//! methods that add it), what it needs from the setup and fixes there ([`Operation::setup`]),
//! and its online step ([`Operation::online`]). [`Op`] is the one registry of them.

mod arithmetic;
mod circuits;
mod comparison;
mod conversions;
mod garbled;
mod gates;
mod input;
mod maps;
mod matrices;
mod mixed;
mod output;
mod products;
mod selection;
mod truncation;

pub use conversions::route;
pub(super) use garbled::YCircuit;

use super::online::{Garbling, Run};
use super::prepare::{Slot, Walk};
use super::{Program, Type, Value};
use crate::Error;
use tessera_core::Block;
use tessera_net::FRAME_HEADER;

/// One operation of a hybrid program.
pub(super) trait Operation {
    /// Its name, as [`Program::describe`] and [`super::Step::op`] give it.
    fn name(&self) -> &'static str;

    /// The values its setup and online step read or write (their masks, their vectors):
    /// after the last operation that uses a value, neither phase needs it again.
    fn uses(&self) -> Vec<usize>;

    /// In the setup walk: fixes the masks of its β and α outputs and states what its online
    /// step needs from the setup, in the order it reads them.
    fn setup(&self, _walk: &mut Walk<'_>) -> Vec<Slot> {
        Vec::new()
    }

    /// Its online step on this party's shares, with its vectors from the setup.
    fn online(&self, run: &mut Run<'_, '_>, material: Vec<Vec<u64>>) -> Result<(), Error>;

    /// What its online step sends, from the same lengths [`Operation::online`] sends (a test
    /// holds the two equal); local operations send nothing.
    fn traffic(&self, _p: &Program) -> OnlineCost {
        OnlineCost::default()
    }
}

/// An operation's online traffic: the bytes both parties send (frame headers included), and
/// the messages each party (0, 1) waits for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnlineCost {
    /// Bytes, both parties together.
    pub bytes: u64,
    /// Messages party 0 and party 1 wait for.
    pub waits: [u64; 2],
}

impl OnlineCost {
    /// Both parties send `per_party` bytes at once: one round.
    fn swap(per_party: usize) -> Self {
        OnlineCost {
            bytes: 2 * (per_party + FRAME_HEADER) as u64,
            waits: [1, 1],
        }
    }

    /// Party `from` sends `bytes` to the other.
    fn one_way(from: usize, bytes: usize) -> Self {
        let mut waits = [0, 0];
        waits[1 - from] = 1;
        OnlineCost {
            bytes: (bytes + FRAME_HEADER) as u64,
            waits,
        }
    }

    /// [`crate::hybrid::online::Garbling::share`] of a Y value of type `t`: the evaluator's
    /// bits, then the garbler's blocks.
    fn share_y(t: Type) -> Self {
        let [garbler, evaluator] = Garbling::new(Block::ZERO, t.n).share_bytes(t.width());
        OnlineCost::one_way(1, evaluator).then(OnlineCost::one_way(0, garbler))
    }

    /// This cost, then `next`.
    fn then(self, next: OnlineCost) -> Self {
        OnlineCost {
            bytes: self.bytes + next.bytes,
            waits: [self.waits[0] + next.waits[0], self.waits[1] + next.waits[1]],
        }
    }

    /// Rounds: the messages the party that waits more waits for.
    pub fn rounds(&self) -> u64 {
        self.waits[0].max(self.waits[1])
    }
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
    MatProduct(matrices::MatProduct),
    Gather(maps::Gather),
    Truncate(truncation::Truncate),
    TopBits(truncation::TopBits),
    Leaves(comparison::Leaves),
    Selection(selection::Selection),
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
            Op::MatProduct(o) => o,
            Op::Gather(o) => o,
            Op::Truncate(o) => o,
            Op::TopBits(o) => o,
            Op::Leaves(o) => o,
            Op::Selection(o) => o,
        }
    }
}

impl Program {
    /// Per operation, the values it is the last to use ([`Operation::uses`]): what both phases
    /// drop after it, so that a run holds the values still to be read, not every value.
    pub(super) fn last_uses(&self) -> Vec<Vec<usize>> {
        let mut last = vec![None; self.types.len()];
        for (i, op) in self.ops.iter().enumerate() {
            for v in op.operation().uses() {
                last[v] = Some(i);
            }
        }
        let mut after = vec![Vec::new(); self.ops.len()];
        for (v, op) in last.into_iter().enumerate() {
            if let Some(i) = op {
                after[i].push(v);
            }
        }
        after
    }

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
