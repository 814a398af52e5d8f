//! Inputs: B and A by a random share from the owner, β and α by the owner's public Δ, Y by a
//! random correlated OT of the setup derandomised online.

use super::{OnlineCost, Op, Operation, Program, bad};
use crate::Error;
use crate::boolean::bits::{self, words};
use crate::hybrid::algebra::{self, Field};
use crate::hybrid::online::{Run, clear_tails, zip_map};
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Kind, Sharing, Type, Value, ring};

/// An input of party `owner` as value `out`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Input {
    out: usize,
    owner: usize,
}

impl Program {
    /// An input of party `owner` (0: the lower-numbered of the two). Online B and A: the
    /// owner sends the peer a random share; β and α: the owner, who alone knows the mask from
    /// the setup, sends Δ (one message, owner to peer). Y: party 0 (the garbler) sends the
    /// labels of its bits (one block per bit); party 1's by a random correlated OT per bit from
    /// the setup, derandomised online (one bit to the garbler, one block back per bit).
    pub fn input(&mut self, owner: usize, t: Type) -> Result<Value, Error> {
        if owner > 1 || t.n == 0 {
            return Err(bad(format!("input of party {owner} with {} copies", t.n)));
        }
        match (t.sharing.is_boolean(), t.kind) {
            (true, Kind::Bits(w)) if w > 0 => {}
            (false, Kind::Ring(b)) if ring::RING_BITS.contains(&b) => {}
            _ => {
                return Err(bad(format!(
                    "{:?} values cannot be {} shared",
                    t.kind,
                    t.sharing.name()
                )));
            }
        }
        Ok(self.push(t, |out| Op::Input(Input { out, owner })))
    }
}

impl Operation for Input {
    fn uses(&self) -> Vec<usize> {
        vec![self.out]
    }

    fn name(&self) -> &'static str {
        "input"
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        let t = p.types[self.out];
        if t.sharing == Sharing::Y && self.owner == 0 {
            // The garbler's labels of its bits.
            OnlineCost::one_way(0, 16 * t.width() * t.n)
        } else if t.sharing == Sharing::Y {
            OnlineCost::share_y(t)
        } else {
            OnlineCost::one_way(self.owner, algebra::wire_bytes(t.field()))
        }
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let t = walk.ty(self.out);
        if t.sharing == Sharing::Y {
            let mut slots = walk.y_labels(self.out);
            if self.owner == 0 {
                // The garbler sends its labels online: no OT.
                slots.clear();
            }
            return slots;
        }
        if t.sharing.is_masked() {
            walk.masks[self.out] = if self.owner == walk.side {
                walk.fresh(self.out)
            } else {
                vec![0; t.field().words()]
            };
        }
        Vec::new()
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        let t = run.ty(self.out);
        let mine = self.owner == run.side;
        let x = if mine {
            run.plain_input(self.out)?
        } else if t.sharing == Sharing::Y {
            // Zero bits on the other side.
            vec![0; t.width() * words(t.n)]
        } else {
            Vec::new()
        };
        run.data[self.out] = if t.sharing == Sharing::Y && self.owner == 0 {
            run.own_y(self.out, &x)?
        } else if t.sharing == Sharing::Y {
            run.share_y(self.out, &m[0], &x)?
        } else if mine {
            let (sent, kept) = self.shares(run, t, x);
            let mut bytes = Vec::new();
            algebra::encode(t.field(), &sent, &mut bytes);
            run.link.send(&bytes)?;
            kept
        } else {
            let field = t.field();
            let bytes = run.link.recv(algebra::wire_bytes(field))?;
            let mut v = vec![0u64; field.words()];
            if !algebra::combine(field, &mut v, &bytes) {
                return Err(run.link.malformed());
            }
            if let Field::Bits { n, .. } = field {
                clear_tails(&mut v, n);
            }
            v
        };
        Ok(())
    }
}

impl Input {
    /// The owner's message for its plaintext `x` and the share it keeps: B and A the peer's
    /// random share r, keeping x ⊕ r (x − r); β and α the public Δ = x ⊕ δ (x + δ).
    fn shares(&self, run: &mut Run<'_, '_>, t: Type, x: Vec<u64>) -> (Vec<u64>, Vec<u64>) {
        let field = t.field();
        match t.sharing {
            Sharing::Beta => {
                let d = zip_map(&x, &run.masks[self.out], |x, d| x ^ d);
                (d.clone(), d)
            }
            Sharing::Alpha => {
                let d = zip_map(&x, &run.masks[self.out], u64::wrapping_add);
                (d.clone(), d)
            }
            Sharing::B | Sharing::A | Sharing::Y => {
                let mut r = vec![0u64; field.words()];
                match field {
                    Field::Bits { n, .. } => {
                        for wire in r.chunks_mut(words(n)) {
                            bits::random(run.prg, n, wire);
                        }
                    }
                    Field::Ring { bits, .. } => {
                        for e in r.iter_mut() {
                            *e = run.prg.random_block().low() & ring::mask(bits);
                        }
                    }
                }
                let kept = match field {
                    Field::Bits { .. } => zip_map(&x, &r, |x, r| x ^ r),
                    Field::Ring { .. } => zip_map(&x, &r, u64::wrapping_sub),
                };
                (r, kept)
            }
        }
    }
}
