//! Opening a value to one party or both, and the barrier that times a program's parts apart.

use super::{OnlineCost, Op, Operation, Program, bad};
use crate::Error;
use crate::hybrid::algebra;
use crate::hybrid::online::{Garbling, Run, words_plain, zip_map};
use crate::hybrid::{Output, Reveal, Sharing};

/// Opens value `a` to `reveal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Open {
    a: usize,
    reveal: Reveal,
}

/// Both parties wait for each other: one byte each way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Barrier;

impl Program {
    /// Opens `a` to `reveal`: the other party sends its share (B, A, the colours of Y's
    /// labels) or its mask share (β, α). One message.
    pub fn output(&mut self, a: crate::hybrid::Value, reveal: Reveal) -> Result<Output, Error> {
        self.ty(a)?;
        if let Reveal::To(p) = reveal
            && p > 1
        {
            return Err(bad(format!("party {p} of two")));
        }
        self.ops.push(Op::Output(Open { a: a.0, reveal }));
        self.outputs.push(a.0);
        Ok(Output(self.outputs.len() - 1))
    }

    /// Both parties wait for each other here (one byte each way, one round): for timing the
    /// operations after it apart from a peer still busy with those before.
    pub fn barrier(&mut self) {
        self.ops.push(Op::Barrier(Barrier));
    }
}

impl Operation for Open {
    fn uses(&self) -> Vec<usize> {
        vec![self.a]
    }

    fn name(&self) -> &'static str {
        "output"
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        let bytes = algebra::wire_bytes(p.types[self.a].field());
        match self.reveal {
            Reveal::To(party) => OnlineCost::one_way(1 - party, bytes),
            Reveal::Both => OnlineCost::swap(bytes),
        }
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let (a, side) = (self.a, run.side);
        let t = run.ty(a);
        let f = t.field();
        // Y opens as the B sharing of its labels' colours.
        if t.sharing == Sharing::Y {
            run.data[a] = Garbling::new(run.delta, t.n).colours(&run.data[a], t.width());
        }
        // B, A: the share; β, α: the mask share.
        let share = if t.sharing.is_masked() {
            &run.masks[a]
        } else {
            &run.data[a]
        };
        if self.reveal != Reveal::To(side) {
            let mut bytes = Vec::new();
            algebra::encode(f, share, &mut bytes);
            run.link.send(&bytes)?;
        }
        if self.reveal == Reveal::To(1 - side) {
            run.outputs.push(None);
            return Ok(());
        }
        let mut theirs = vec![0u64; f.words()];
        let bytes = run.link.recv(algebra::wire_bytes(f))?;
        if !algebra::combine(f, &mut theirs, &bytes) {
            return Err(run.link.malformed());
        }
        let (x, masks) = (&run.data[a], &run.masks[a]);
        let x: Vec<u64> = match t.sharing {
            Sharing::B | Sharing::Y => zip_map(x, &theirs, |x, y| x ^ y),
            Sharing::A => zip_map(x, &theirs, u64::wrapping_add),
            Sharing::Beta => (0..theirs.len())
                .map(|i| x[i] ^ masks[i] ^ theirs[i])
                .collect(),
            Sharing::Alpha => (0..theirs.len())
                .map(|i| x[i].wrapping_sub(masks[i]).wrapping_sub(theirs[i]))
                .collect(),
        };
        run.outputs.push(Some(words_plain(t, &x)));
        Ok(())
    }
}

impl Operation for Barrier {
    fn uses(&self) -> Vec<usize> {
        Vec::new()
    }

    fn name(&self) -> &'static str {
        "barrier"
    }

    fn traffic(&self, _: &Program) -> OnlineCost {
        OnlineCost::swap(1)
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        run.link.send(&[1])?;
        run.link.recv(1)?;
        Ok(())
    }
}
