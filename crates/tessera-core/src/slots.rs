//! A batch of independent gates over a slot array (the labels of the live wires, VASA §4.2.1's
//! register-oriented gather): which slots each gate reads, and where its output label goes.

use core::cell::Cell;

/// A batch of gates whose input labels are read in place from a slot array: gate k reads
/// slots `a[k]` and `b[k]`, its output goes to slot `out[k]` (or to place k of a buffer, see
/// [`Labels`]), and `ids[k]` is its index, unique within `domain` (its tweaks are derived from
/// both).
#[derive(Clone, Copy, Debug)]
pub struct SlotGates<'a> {
    /// First input slot of each gate.
    pub a: &'a [u32],
    /// Second input slot of each gate.
    pub b: &'a [u32],
    /// Output slot of each gate.
    pub out: &'a [u32],
    /// Each gate's index, unique within the domain.
    pub ids: &'a [u32],
    /// The high 64 bits of every tweak: tells apart gates of equal index garbled under one
    /// secret (the steps of a streamed circuit, which repeat one plan's indices).
    pub domain: u64,
}

/// The slot array a batch reads, and where its outputs go.
#[derive(Debug)]
pub enum Labels<'a, W: Copy> {
    /// The slot array, read and written by one thread: gate k's output goes straight to slot
    /// `out[k]`, with no staging buffer and no second pass. The outputs are written while
    /// other gates of the batch are still being read, so no output slot of a batch may be one
    /// of the slots it reads (a plan's batches are laid out so); otherwise the results are
    /// wrong, but every access stays in bounds.
    InPlace(&'a [Cell<W>]),
    /// A slot array shared with other threads and only read; gate k's output goes to
    /// `out[k]`.
    Buffered {
        /// The slot array.
        slots: &'a [W],
        /// One output per gate, in gate order.
        out: &'a mut [W],
    },
}

impl<'a, W: Copy> Labels<'a, W> {
    /// Labels over `slots`, written in place.
    pub fn in_place(slots: &'a mut [W]) -> Self {
        Labels::InPlace(Cell::from_mut(slots).as_slice_of_cells())
    }

    /// Read access to the slot array, and write access for gates whose output slots are `out`.
    pub fn split(self, out: &'a [u32]) -> (SlotReader<'a, W>, OutputWriter<'a, W>) {
        match self {
            Labels::InPlace(slots) => {
                (SlotReader::Cells(slots), OutputWriter::Slots { slots, out })
            }
            Labels::Buffered { slots, out } => {
                (SlotReader::Plain(slots), OutputWriter::Buffer(out))
            }
        }
    }

    /// The labels of the next `n` gates: the same slot array and, buffered, the first `n`
    /// places of the output buffer (this keeps the rest).
    ///
    /// # Panics
    /// If the buffer holds fewer than `n` places.
    pub fn take(&mut self, n: usize) -> Labels<'a, W> {
        match self {
            Labels::InPlace(slots) => Labels::InPlace(slots),
            Labels::Buffered { slots, out } => {
                let (now, rest) = std::mem::take(out).split_at_mut(n);
                *out = rest;
                Labels::Buffered { slots, out: now }
            }
        }
    }

    /// Slots in the slot array.
    pub fn slots(&self) -> usize {
        match self {
            Labels::InPlace(s) => s.len(),
            Labels::Buffered { slots, .. } => slots.len(),
        }
    }
}

/// Reads labels from a slot array ([`Labels::split`]).
#[derive(Clone, Copy, Debug)]
pub enum SlotReader<'a, W: Copy> {
    /// An array this thread also writes.
    Cells(&'a [Cell<W>]),
    /// An array shared with other threads.
    Plain(&'a [W]),
}

impl<W: Copy> SlotReader<'_, W> {
    /// The label in `slot`.
    ///
    /// # Panics
    /// If `slot` is out of bounds.
    #[inline]
    pub fn get(&self, slot: u32) -> W {
        match self {
            SlotReader::Cells(s) => s[slot as usize].get(),
            SlotReader::Plain(s) => s[slot as usize],
        }
    }
}

/// Writes a batch's output labels ([`Labels::split`]).
#[derive(Debug)]
pub enum OutputWriter<'a, W: Copy> {
    /// Gate k's output to slot `out[k]`.
    Slots {
        /// The slot array.
        slots: &'a [Cell<W>],
        /// Each gate's output slot.
        out: &'a [u32],
    },
    /// Gate k's output to place k.
    Buffer(&'a mut [W]),
}

impl<W: Copy> OutputWriter<'_, W> {
    /// Gate k's output label `w`.
    ///
    /// # Panics
    /// If k or its slot is out of bounds.
    #[inline]
    pub fn put(&mut self, k: usize, w: W) {
        match self {
            OutputWriter::Slots { slots, out } => slots[out[k] as usize].set(w),
            OutputWriter::Buffer(b) => b[k] = w,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_writes_reach_the_slots_and_buffers_keep_them() {
        let mut slots = [1u32, 2, 3, 4];
        let (read, mut write) = Labels::in_place(&mut slots).split(&[3, 0]);
        write.put(0, read.get(1) + read.get(2));
        write.put(1, read.get(3));
        assert_eq!(slots, [5, 2, 3, 5]);
        let mut out = [0u32; 2];
        let labels = Labels::Buffered {
            slots: &slots,
            out: &mut out,
        };
        let (read, mut write) = labels.split(&[3, 0]);
        write.put(0, read.get(0) * 2);
        write.put(1, read.get(1));
        assert_eq!((slots, out), ([5, 2, 3, 5], [10, 2]));
    }
}
