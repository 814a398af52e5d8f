//! The online phase's core: inputs, one exchange per AND layer, outputs.

use super::bits::{self, words};
use super::layers::Layers;
use super::{
    BoolCircuit, BoolSharing, INPUTS, Incoming, OPEN, OUTPUT, Outputs, Packed, Prepared, Reveal,
    bytes_of, read_bits,
};
use crate::Error;
use tessera_net::role::{Next, Outbox, Role};

/// One party's online phase; see the module documentation of [`super`].
pub(super) struct Online<'c> {
    c: &'c BoolCircuit,
    peer: usize,
    side: usize,
    reveal: Reveal,
    prepared: Prepared,
    /// Per wire, `simd` bits in `words(simd)` words: B this party's share; β the public Δ.
    v: Vec<u64>,
    /// The next AND layer to open.
    layer: usize,
    layers: Layers,
}

impl<'c> Online<'c> {
    pub(super) fn new(
        c: &'c BoolCircuit,
        peer: usize,
        prepared: Prepared,
        inputs: &[Vec<Vec<bool>>],
        reveal: Reveal,
    ) -> Result<Self, Error> {
        let side = prepared.side;
        let owned: Vec<usize> = c.owned(side).collect();
        if inputs.len() != c.simd {
            return Err(Error::Input(format!(
                "{} SIMD copies of the inputs, the circuit was compiled for {}",
                inputs.len(),
                c.simd
            )));
        }
        let w = words(c.simd);
        let mut v = vec![0u64; c.circuit.num_wires as usize * w];
        v[..prepared.inputs.len()].copy_from_slice(&prepared.inputs);
        for (copy, values) in inputs.iter().enumerate() {
            if values.len() != owned.len() {
                return Err(Error::Input(format!(
                    "copy {copy}: {} input values, this party owns {} of the circuit's",
                    values.len(),
                    owned.len()
                )));
            }
            for (bits, &value) in values.iter().zip(&owned) {
                let width = c.circuit.inputs[value] as usize;
                if bits.len() != width {
                    return Err(Error::Input(format!(
                        "copy {copy}: input value {value} has {width} bits, got {}",
                        bits.len()
                    )));
                }
                let start = c.circuit.input_start(value) as usize;
                for (k, &b) in bits.iter().enumerate() {
                    v[(start + k) * w + copy / 64] ^= u64::from(b) << (copy % 64);
                }
            }
        }
        Ok(Online {
            c,
            peer,
            side,
            reveal,
            prepared,
            v,
            layer: 1,
            layers: Layers::new(c),
        })
    }

    fn wire(&self, wire: usize) -> &[u64] {
        let w = words(self.c.simd);
        &self.v[wire * w..(wire + 1) * w]
    }

    /// The values of `wires`, packed.
    fn pack(&self, wires: impl ExactSizeIterator<Item = usize>) -> Vec<u64> {
        let s = self.c.simd;
        let mut out = vec![0u64; words(wires.len() * s)];
        for (i, wire) in wires.enumerate() {
            bits::put(&mut out, i * s, self.wire(wire), s);
        }
        out
    }

    /// Runs the free gates before the next layer, then opens it or the outputs.
    fn advance<O: Outbox>(&mut self, out: &mut O) -> Result<Next<Option<Outputs>>, Error> {
        let c = self.c;
        Layers::free(c, self.side, self.layer - 1, &mut self.v);
        if self.layer > c.layered.depth() {
            return self.open_outputs(out);
        }
        let mine = self
            .layers
            .open(c, self.side, self.layer, &self.v, &self.prepared.and);
        out.post(&Packed::<{ OPEN.id }> {
            bits: 64 * mine.len(),
            words: mine,
        })?;
        out.flush()?;
        Ok(Next::exact(OPEN, 8 * mine.len()))
    }

    /// Completes the open layer with the peer's opening.
    fn close_layer(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let (c, l) = (self.c, self.layer);
        let theirs = self.layers.theirs(c, l);
        read_bits(self.peer, OPEN, bytes, 64 * theirs.len(), theirs)?;
        self.layers
            .close(c, self.side, l, &mut self.v, &self.prepared.and);
        self.layer += 1;
        Ok(())
    }

    fn output_wires(&self) -> std::ops::Range<usize> {
        self.c.circuit.output_start() as usize..self.c.circuit.num_wires as usize
    }

    /// Posts this party's output shares if the peer learns; waits for the peer's if it does.
    fn open_outputs<O: Outbox>(&mut self, out: &mut O) -> Result<Next<Option<Outputs>>, Error> {
        let n = self.output_wires().len() * self.c.simd;
        if self.reveal.learns(1 - self.side) {
            // B: the shares; β: the mask shares (Δ is public).
            let shares = match self.c.sharing {
                BoolSharing::Gmw => self.pack(self.output_wires()),
                BoolSharing::Aby2 => {
                    let (s, w) = (self.c.simd, words(self.c.simd));
                    let mut all = vec![0u64; words(n)];
                    for (i, share) in self.prepared.outputs.chunks_exact(w).enumerate() {
                        bits::put(&mut all, i * s, share, s);
                    }
                    all
                }
            };
            out.post(&Packed::<{ OUTPUT.id }> {
                bits: n,
                words: &shares,
            })?;
            out.flush()?;
        }
        if self.reveal.learns(self.side) {
            Ok(Next::exact(OUTPUT, bytes_of(n)))
        } else {
            Ok(Next::Done(None))
        }
    }

    /// The outputs from the peer's shares.
    fn outputs(&self, bytes: &[u8]) -> Result<Outputs, Error> {
        let (s, w) = (self.c.simd, words(self.c.simd));
        let wires = self.output_wires();
        let mut theirs = vec![0u64; words(wires.len() * s)];
        read_bits(self.peer, OUTPUT, bytes, wires.len() * s, &mut theirs)?;
        // Per output wire: its value in all copies.
        let mut value = vec![0u64; w];
        let mut plain = Vec::with_capacity(wires.len() * w);
        for (i, wire) in wires.enumerate() {
            bits::get(&theirs, i * s, s, &mut value);
            for (k, v) in value.iter_mut().enumerate() {
                *v ^= self.wire(wire)[k];
                if self.c.sharing == BoolSharing::Aby2 {
                    *v ^= self.prepared.outputs[i * w + k];
                }
            }
            plain.extend_from_slice(&value);
        }
        Ok((0..s)
            .map(|copy| {
                let mut at = 0;
                self.c
                    .circuit
                    .outputs
                    .iter()
                    .map(|&width| {
                        let bits = (at..at + width as usize)
                            .map(|i| bits::bit(&plain[i * w..(i + 1) * w], copy))
                            .collect();
                        at += width as usize;
                        bits
                    })
                    .collect()
            })
            .collect())
    }
}

impl Role for Online<'_> {
    type Incoming<'a> = Incoming<'a>;
    type Output = Option<Outputs>;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Incoming<'_>>,
        out: &mut O,
    ) -> Result<Next<Option<Outputs>>, Error> {
        let s = self.c.simd;
        match incoming {
            None if self.c.sharing == BoolSharing::Aby2 => {
                // The owner's Δ of its inputs (its wire values hold them already).
                let own = self.c.input_wires(self.side);
                let packed = self.pack(own.iter().copied());
                out.post(&Packed::<{ INPUTS.id }> {
                    bits: own.len() * s,
                    words: &packed,
                })?;
                out.flush()?;
                let theirs = self.c.input_wires(1 - self.side).len() * s;
                return Ok(Next::exact(INPUTS, bytes_of(theirs)));
            }
            None => {}
            Some(m) if m.kind == INPUTS.id => {
                let wires = self.c.input_wires(1 - self.side);
                let w = words(s);
                let mut theirs = vec![0u64; words(wires.len() * s)];
                read_bits(self.peer, INPUTS, m.bytes, wires.len() * s, &mut theirs)?;
                for (i, wire) in wires.into_iter().enumerate() {
                    bits::get(&theirs, i * s, s, &mut self.v[wire * w..(wire + 1) * w]);
                }
            }
            Some(m) if m.kind == OPEN.id => self.close_layer(m.bytes)?,
            Some(m) => return Ok(Next::Done(Some(self.outputs(m.bytes)?))),
        }
        self.advance(out)
    }
}
