//! Steps over a slot array of labels whose indices are checked once, when the steps are built:
//! the free XOR gates of a garbling plan (VASA §4.2.1 keeps labels in a slot array; tessera's
//! plans run the free gates between two batches as one stream). Running [`SlotSteps::xor`]
//! then checks one length, not three indices per step. Where every slot index is below 2^17,
//! a step is one 64-bit word of three byte offsets, so the x86 kernel spends one load on the
//! indices and one vector load, XOR and store on the labels: the loop is bound by loads and
//! stores (on Zen 4, AES-128's free steps ran as fast with every output sent to one dummy
//! slot, so not by the chains between them).

use crate::Block;
use crate::simd::Simd;
use core::ops::Range;

/// Bits of one byte offset in a packed step.
const OFFSET_BITS: u32 = 21;
/// The mask of one packed byte offset.
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;
/// Slots whose byte offsets fit a packed step (16-byte labels).
const PACKED_SLOTS: u32 = 1 << (OFFSET_BITS - 4);

/// A stream of steps, step k reading slots `a[k]` and `b[k]` and writing slot `out[k]`, with
/// every index below [`SlotSteps::slots`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotSteps {
    stream: Stream,
    slots: usize,
}

/// How the steps are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stream {
    /// Every index below [`PACKED_SLOTS`]: step k is the byte offsets 16·a | 16·b << 21 |
    /// 16·out << 42.
    Packed(Vec<u64>),
    /// Struct-of-arrays slot indices.
    Wide {
        a: Vec<u32>,
        b: Vec<u32>,
        out: Vec<u32>,
    },
}

impl Default for SlotSteps {
    fn default() -> Self {
        SlotSteps {
            stream: Stream::Packed(Vec::new()),
            slots: 0,
        }
    }
}

fn pack([a, b, out]: [u32; 3]) -> u64 {
    let offset = |s: u32| u64::from(s) << 4;
    offset(a) | offset(b) << OFFSET_BITS | offset(out) << (2 * OFFSET_BITS)
}

fn unpack(w: u64) -> [u32; 3] {
    let slot = |shift: u32| ((w >> shift) & OFFSET_MASK) as u32 >> 4;
    [slot(0), slot(OFFSET_BITS), slot(2 * OFFSET_BITS)]
}

impl SlotSteps {
    /// No steps.
    pub fn new() -> Self {
        SlotSteps::default()
    }

    /// No steps, with room for `n` (packed; see [`SlotSteps`]).
    pub fn with_capacity(n: usize) -> Self {
        SlotSteps {
            stream: Stream::Packed(Vec::with_capacity(n)),
            slots: 0,
        }
    }

    /// Appends the step `out ← (a, b)`.
    #[inline]
    pub fn push(&mut self, a: u32, b: u32, out: u32) {
        let top = a.max(b).max(out);
        self.slots = self.slots.max(top as usize + 1);
        match &mut self.stream {
            Stream::Packed(words) if top < PACKED_SLOTS => words.push(pack([a, b, out])),
            _ => self.push_wide(a, b, out),
        }
    }

    /// [`SlotSteps::push`] to the struct-of-arrays stream, which a packed stream becomes at
    /// its first index of [`PACKED_SLOTS`] or more (out of line: the packed push is the one
    /// inlined into plan compilers' loops).
    #[inline(never)]
    fn push_wide(&mut self, a: u32, b: u32, out: u32) {
        if let Stream::Packed(words) = &self.stream {
            // Room for as many steps as the packed stream had.
            let mut wide = [(); 3].map(|()| Vec::with_capacity(words.capacity()));
            for &w in words {
                for (v, s) in wide.iter_mut().zip(unpack(w)) {
                    v.push(s);
                }
            }
            let [a, b, out] = wide;
            self.stream = Stream::Wide { a, b, out };
        }
        if let Stream::Wide {
            a: va,
            b: vb,
            out: vo,
        } = &mut self.stream
        {
            va.push(a);
            vb.push(b);
            vo.push(out);
        }
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        match &self.stream {
            Stream::Packed(words) => words.len(),
            Stream::Wide { out, .. } => out.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot array's least length: one more than the largest index (0 without steps).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Steps `range`, each as the slots it reads first and second and the slot it writes.
    ///
    /// # Panics
    /// If `range` is not within the steps.
    pub fn get(&self, range: Range<usize>) -> impl Iterator<Item = [u32; 3]> + '_ {
        assert!(
            range.start <= range.end && range.end <= self.len(),
            "slot steps: range out of bounds"
        );
        range.map(move |k| match &self.stream {
            Stream::Packed(words) => unpack(words[k]),
            Stream::Wide { a, b, out } => [a[k], b[k], out[k]],
        })
    }

    /// Runs steps `range` in order as free XOR gates, `slots[out] = slots[a] ⊕ slots[b]`, with
    /// the [`Simd::active`] kernel.
    ///
    /// # Panics
    /// If `range` is not within the steps or `slots` is shorter than [`SlotSteps::slots`].
    pub fn xor(&self, range: Range<usize>, slots: &mut [Block]) {
        self.xor_with(Simd::active(), range, slots);
    }

    /// [`SlotSteps::xor`] with a given kernel, the portable one where this CPU lacks it.
    ///
    /// # Panics
    /// As [`SlotSteps::xor`].
    pub fn xor_with(&self, simd: Simd, range: Range<usize>, slots: &mut [Block]) {
        assert!(
            slots.len() >= self.slots,
            "slot steps: {} slots, the steps use {}",
            slots.len(),
            self.slots
        );
        match (simd.usable(), &self.stream) {
            (Simd::Portable, _) => {
                for [a, b, out] in self.get(range) {
                    slots[out as usize] = slots[a as usize] ^ slots[b as usize];
                }
            }
            // SAFETY (both): `usable` checked the features (AVX-512F implies AVX2); every
            // index is below `self.slots` (`push`), which is at most `slots.len()`, and every
            // packed offset is 16 times such an index.
            #[cfg(target_arch = "x86_64")]
            (_, Stream::Packed(words)) => unsafe { x86::xor_packed(slots, &words[range]) },
            #[cfg(target_arch = "x86_64")]
            (_, Stream::Wide { a, b, out }) => unsafe {
                x86::xor_wide(slots, &a[range.clone()], &b[range.clone()], &out[range])
            },
            #[cfg(not(target_arch = "x86_64"))]
            _ => self.xor_with(Simd::Portable, range, slots),
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! # Safety
    //! The kernels run only where `Simd::usable` found AVX2, on indices checked against the
    //! slot array's length.

    use super::{OFFSET_BITS, OFFSET_MASK};
    use crate::Block;
    use core::arch::x86_64::*;

    /// [`super::SlotSteps::xor`] on packed steps: one load for the three offsets, one vector
    /// load, XOR and store for the labels.
    ///
    /// # Safety
    /// AVX2 is present and every offset in `steps` is 16 times an index below `slots.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn xor_packed(slots: &mut [Block], steps: &[u64]) {
        let p = slots.as_mut_ptr().cast::<u8>();
        for &w in steps {
            let a = (w & OFFSET_MASK) as usize;
            let b = ((w >> OFFSET_BITS) & OFFSET_MASK) as usize;
            let out = (w >> (2 * OFFSET_BITS)) as usize;
            // SAFETY: the offsets are whole labels in bounds (the caller's contract) and
            // `Block` is 16 bytes, 16-byte aligned.
            unsafe {
                let x = _mm_load_si128(p.add(a).cast());
                let y = _mm_load_si128(p.add(b).cast());
                _mm_store_si128(p.add(out).cast(), _mm_xor_si128(x, y));
            }
        }
    }

    /// [`super::SlotSteps::xor`] on slot indices.
    ///
    /// # Safety
    /// AVX2 is present and every index in `a`, `b` and `out` is below `slots.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn xor_wide(slots: &mut [Block], a: &[u32], b: &[u32], out: &[u32]) {
        let p = slots.as_mut_ptr().cast::<__m128i>();
        for ((&a, &b), &o) in a.iter().zip(b).zip(out) {
            // SAFETY: as above.
            unsafe {
                let x = _mm_load_si128(p.add(a as usize));
                let y = _mm_load_si128(p.add(b as usize));
                _mm_store_si128(p.add(o as usize), _mm_xor_si128(x, y));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every kernel matches plain Rust on random steps, packed and wide (some indices
        /// past 2^17), chains through earlier outputs included (the steps run in order).
        #[test]
        fn every_kernel_matches_plain_rust(
            labels in prop::collection::vec(any::<u128>(), 1..40),
            steps in prop::collection::vec((any::<u32>(), any::<u32>(), any::<u32>()), 0..200),
            wide in any::<bool>(),
            cut in any::<prop::sample::Index>(),
        ) {
            // Wide: the slot array's labels sit at the top of a 2^17 + 40 one.
            let base = if wide { PACKED_SLOTS } else { 0 };
            let n = labels.len() as u32;
            let mut s = SlotSteps::new();
            for &(a, b, o) in &steps {
                s.push(base + a % n, base + b % n, base + o % n);
            }
            prop_assert_eq!(matches!(s.stream, Stream::Wide { .. }), wide && !steps.is_empty());
            let cut = cut.index(s.len() + 1);
            let mut start = vec![Block::ZERO; (base + n) as usize];
            for (slot, &v) in start[base as usize..].iter_mut().zip(&labels) {
                *slot = Block::new(v);
            }
            let mut want = start.clone();
            for &(a, b, o) in &steps[cut..] {
                let at = |s: u32| (base + s % n) as usize;
                want[at(o)] = want[at(a)] ^ want[at(b)];
            }
            for simd in Simd::available() {
                let mut got = start.clone();
                s.xor_with(simd, cut..s.len(), &mut got);
                prop_assert!(got == want, "{}", simd.name());
            }
        }
    }

    #[test]
    fn steps_run_in_order() {
        let mut s = SlotSteps::new();
        s.push(0, 1, 2);
        s.push(2, 3, 0);
        assert_eq!(s.slots(), 4);
        for simd in Simd::available() {
            let mut slots = [5, 9, 0, 7].map(Block::new);
            s.xor_with(simd, 0..2, &mut slots);
            assert_eq!(slots, [12 ^ 7, 9, 12, 7].map(Block::new), "{}", simd.name());
        }
    }

    #[test]
    fn a_stream_turns_wide_at_the_first_large_index_and_keeps_its_steps() {
        let mut s = SlotSteps::new();
        s.push(3, PACKED_SLOTS - 1, 7);
        assert!(matches!(s.stream, Stream::Packed(_)));
        s.push(PACKED_SLOTS, 0, 1);
        assert!(matches!(s.stream, Stream::Wide { .. }));
        let steps: Vec<_> = s.get(0..2).collect();
        assert_eq!(steps, [[3, PACKED_SLOTS - 1, 7], [PACKED_SLOTS, 0, 1]]);
        assert_eq!(s.slots(), PACKED_SLOTS as usize + 1);
    }

    #[test]
    #[should_panic(expected = "slot steps")]
    fn a_short_slot_array_is_refused() {
        let mut s = SlotSteps::new();
        s.push(0, 1, 4);
        s.xor(0..1, &mut [Block::ZERO; 4]);
    }
}
