//! bit × number on random OT (the multiplexer of CrypTFlow2, Rathee et al., CCS 2020,
//! §3.2.3 and Cheetah, Huang et al., USENIX Security 2022, on silent OT): for a B bit
//! b = b₀ ⊕ b₁ and an A number x = x₀ + x₁, b·x = b₀x₀ + b₁x₁ + b₁·(1 − 2b₀)x₀ + b₀·(1 − 2b₁)x₁,
//! each cross term the receiver's bit times the sender's number by one random 1-out-of-2 OT
//! of ℓ-bit messages (M₀, M₁) from the setup, derandomised as in Gilboa's product: the
//! receiver, holding its random choice c and M_c, sends e = b ⊕ c; the sender sends
//! τ = M_e + y − M_(1⊕e) for its number y and keeps −M_e; the receiver keeps M_c + b·τ.
//! One bit and ℓ bits per element and direction, one correlated OT each in the setup; the
//! daBit product ([`Program::bit_mul`]) sends 2(ℓ + 1) bits online and about 3ℓ in the setup.

use super::{OnlineCost, Op, Operation, Program, bad};
use crate::Error;
use crate::hybrid::online::{Run, bit_of};
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Kind, Sharing, Type, Value};
use tessera_ot::one_of_n::{Fields, OneOfN};

/// The terms a [`Selection`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::hybrid) enum Terms {
    /// The whole product b·x: both cross terms, each party sending in one.
    Product,
    /// Party 1's share of the bit times party 0's share of the number (b₁·x₀): party 0
    /// sends.
    Cross,
}

impl Terms {
    /// The parties that send a cross term (as the OT's sender).
    fn senders(self) -> &'static [usize] {
        match self {
            Terms::Product => &[0, 1],
            Terms::Cross => &[0],
        }
    }
}

/// bit × number of a one-wire B `bit` and an A `x` on random OT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Selection {
    bit: usize,
    x: usize,
    terms: Terms,
    out: usize,
}

impl Program {
    /// b·x for a one-wire B bit and an A number of as many copies, on random OT: online two
    /// rounds, 1 + ℓ bits per element and party; setup two random OTs per element (this
    /// module). Where bytes count more than a round, cheaper than [`Program::bit_mul`].
    pub fn select(&mut self, bit: Value, x: Value) -> Result<Value, Error> {
        self.selection(bit, x, Terms::Product)
    }

    /// b₁·x₀: party 1's share of a one-wire B bit times party 0's share of an A number, as
    /// an A value (the other shares count for nothing): online one round, 1 bit from party 1
    /// and ℓ from party 0 per element; setup one random OT per element.
    pub fn cross_select(&mut self, bit: Value, x: Value) -> Result<Value, Error> {
        self.selection(bit, x, Terms::Cross)
    }

    fn selection(&mut self, bit: Value, x: Value, terms: Terms) -> Result<Value, Error> {
        let (tb, tx) = (self.ty(bit)?, self.ty(x)?);
        if tb.sharing != Sharing::B
            || tb.kind != Kind::Bits(1)
            || tx.sharing != Sharing::A
            || tb.n != tx.n
        {
            return Err(bad(format!(
                "bit × number on OT takes a one-wire B bit and an A number of as many copies, got {tb:?} and {tx:?}"
            )));
        }
        let (bit, x) = (bit.0, x.0);
        Ok(self.push(tx, |out| Op::Selection(Selection { bit, x, terms, out })))
    }
}

/// The shape of the random OTs: 1-out-of-2 of ℓ-bit messages.
fn shape(t: Type) -> OneOfN {
    OneOfN {
        choice_bits: 1,
        message_bits: t.ring_bits(),
    }
}

impl Operation for Selection {
    fn uses(&self) -> Vec<usize> {
        vec![self.bit, self.x, self.out]
    }

    fn name(&self) -> &'static str {
        "bit × number by OT"
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        let t = p.types[self.x];
        let (choices, tau) = (t.n.div_ceil(8), (t.n * t.ring_bits() as usize).div_ceil(8));
        match self.terms {
            Terms::Product => OnlineCost::swap(choices).then(OnlineCost::swap(tau)),
            Terms::Cross => OnlineCost::one_way(1, choices).then(OnlineCost::one_way(0, tau)),
        }
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let t = walk.ty(self.x);
        let slot = |sender| Slot::OneOfN {
            shape: shape(t),
            instances: t.n,
            sender,
        };
        self.terms.senders().iter().map(|&s| slot(s)).collect()
    }

    fn online(&self, run: &mut Run<'_, '_>, material: Vec<Vec<u64>>) -> Result<(), Error> {
        let t = run.ty(self.x);
        let (n, side, width) = (t.n, run.side, t.ring_bits());
        let bits: Vec<u64> = (0..n).map(|k| bit_of(&run.data[self.bit], k)).collect();
        // This party's OTs: as the sender (M₀, M₁ per element) where it sends a cross term,
        // as the receiver (its choices, its chosen messages) where the peer does, in the
        // order of [`Terms::senders`].
        let mut material = material.into_iter();
        let (mut sender, mut receiver) = (None, None);
        for &from in self.terms.senders() {
            if from == side {
                sender = Some(take(&mut material, width, 2 * n)?);
            } else {
                let choices = take(&mut material, 1, n)?;
                receiver = Some((choices, take(&mut material, width, n)?));
            }
        }
        // Flight 1: the receiver's e = b ⊕ c, the sender's peer's e.
        if let Some((choices, _)) = &receiver {
            let mut e = Fields::zeros(1, n);
            (0..n).for_each(|k| e.set(k, bits[k] ^ choices.get(k)));
            run.link.send(&e.to_bytes())?;
        }
        let x = &run.data[self.x];
        let own = self.terms == Terms::Product;
        let mut z: Vec<u64> = (0..n)
            .map(|k| if own { bits[k].wrapping_mul(x[k]) } else { 0 })
            .collect();
        // Flight 2: the sender's τ, the receiver's M_c + b·τ.
        if let Some(m) = &sender {
            let bytes = run.link.recv(n.div_ceil(8))?;
            let e = Fields::from_bytes(1, n, &bytes).ok_or_else(|| run.link.malformed())?;
            let mut tau = Fields::zeros(width, n);
            for k in 0..n {
                let y = if own {
                    1u64.wrapping_sub(2 * bits[k]).wrapping_mul(x[k])
                } else {
                    x[k]
                };
                let e = e.get(k) as usize;
                let (pad, other) = (m.get(2 * k + e), m.get(2 * k + (1 ^ e)));
                tau.set(k, pad.wrapping_add(y).wrapping_sub(other));
                z[k] = z[k].wrapping_sub(pad);
            }
            run.link.send(&tau.to_bytes())?;
        }
        if let Some((_, chosen)) = &receiver {
            let bytes = run.link.recv((n * width as usize).div_ceil(8))?;
            let tau = Fields::from_bytes(width, n, &bytes).ok_or_else(|| run.link.malformed())?;
            for k in 0..n {
                let keep = 0u64.wrapping_sub(bits[k]) & tau.get(k);
                z[k] = z[k].wrapping_add(chosen.get(k)).wrapping_add(keep);
            }
        }
        run.data[self.out] = z;
        Ok(())
    }
}

/// The next vector of the setup's material as `count` fields of `width` bits.
fn take(
    material: &mut impl Iterator<Item = Vec<u64>>,
    width: u32,
    count: usize,
) -> Result<Fields, Error> {
    Fields::from_words(width, count, material.next().unwrap_or_default())
        .ok_or_else(|| Error::Input("the setup's OTs do not fit the selection".into()))
}
