//! The batched AES kernels, written once over [`Lanes`] and instantiated per backend (VASA
//! §4.2.1): each loads a batch of `N` registers, runs every AES round across the whole batch so
//! `N × BLOCKS` independent blocks are in the pipeline, and stores. Tails fall back to the
//! backend's one-block register, first 8 at a time, then one by one.

use super::RoundKeys;
use super::lanes::{Lanes, RCON};
use crate::Block;
use crate::slots::{Labels, SlotGates};

/// A kernel that processes items in chunks of `N × L::BLOCKS`.
trait Chunked {
    /// Processes the `N × L::BLOCKS` items starting at item `start`.
    ///
    /// # Safety
    /// The items `start..start + N × L::BLOCKS` are in bounds and `L`'s features are present.
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize);
}

/// Runs `k` over `len` items: full batches of `N` registers, then one-block registers.
///
/// # Safety
/// `k` is valid for `len` items and `L`'s features are present.
#[inline(always)]
unsafe fn drive<K: Chunked, L: Lanes, const N: usize>(k: &mut K, len: usize) {
    let mut i = 0;
    // SAFETY (all three loops): each chunk stays below `len`, which the caller vouches for.
    while i + N * L::BLOCKS <= len {
        unsafe { k.chunk::<L, N>(i) };
        i += N * L::BLOCKS;
    }
    while i + 8 <= len {
        unsafe { k.chunk::<L::Single, 8>(i) };
        i += 8;
    }
    while i < len {
        unsafe { k.chunk::<L::Single, 1>(i) };
        i += 1;
    }
}

/// Encrypts `N` registers in place under one expanded key, round by round across the batch.
#[inline(always)]
unsafe fn encrypt<L: Lanes, const N: usize>(rk: &RoundKeys, s: &mut [L; N]) {
    // SAFETY: the caller guarantees `L`'s features.
    unsafe {
        let k = L::splat(rk.0[0]);
        for x in s.iter_mut() {
            *x = x.xor(k);
        }
        for r in 1..10 {
            let k = L::splat(rk.0[r]);
            for x in s.iter_mut() {
                *x = x.aesenc(k);
            }
        }
        let k = L::splat(rk.0[10]);
        for x in s.iter_mut() {
            *x = x.aesenclast(k);
        }
    }
}

/// Loads `N` registers from consecutive blocks at `p`.
#[inline(always)]
unsafe fn load_n<L: Lanes, const N: usize>(p: *const Block) -> [L; N] {
    // SAFETY: the caller guarantees `N × L::BLOCKS` blocks at `p`.
    unsafe {
        let mut s = [L::load(p); N];
        for (j, x) in s.iter_mut().enumerate().skip(1) {
            *x = L::load(p.add(j * L::BLOCKS));
        }
        s
    }
}

/// Stores `N` registers to consecutive blocks at `p`.
#[inline(always)]
unsafe fn store_n<L: Lanes, const N: usize>(s: &[L; N], p: *mut Block) {
    for (j, x) in s.iter().enumerate() {
        // SAFETY: the caller guarantees `N × L::BLOCKS` blocks at `p`.
        unsafe { x.store(p.add(j * L::BLOCKS)) };
    }
}

struct Ecb<'a> {
    rk: &'a RoundKeys,
    blocks: *mut Block,
}

impl Chunked for Ecb<'_> {
    #[inline(always)]
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize) {
        // SAFETY: `drive` keeps the chunk in bounds.
        unsafe {
            let p = self.blocks.add(start);
            let mut s = load_n::<L, N>(p);
            encrypt(self.rk, &mut s);
            store_n(&s, p);
        }
    }
}

/// AES-128 in ECB mode, in place.
///
/// # Safety
/// `L`'s CPU features are present.
#[inline(always)]
pub(crate) unsafe fn ecb<L: Lanes, const N: usize>(rk: &RoundKeys, blocks: &mut [Block]) {
    let len = blocks.len();
    // SAFETY: the kernel addresses exactly `blocks`.
    unsafe {
        drive::<_, L, N>(
            &mut Ecb {
                rk,
                blocks: blocks.as_mut_ptr(),
            },
            len,
        )
    }
}

/// How a correlation-robust hash turns an input batch into an output batch around the fixed-key
/// permutation π (see [`crate::hash`] for the definitions and their sources).
///
/// Each kind stages the value it must XOR back in the output memory rather than in registers:
/// the batch in flight then needs only `N` registers plus a round key, with no spills on the
/// 16-register SSE file, and the final XOR takes its operand from L1.
pub(crate) trait HashKind {
    /// Whether the hash reads a tweak per input.
    const TWEAKED: bool;
    /// Writes the hash of the `N × L::BLOCKS` inputs at `x` (tweaks at `t`, read only if
    /// tweaked) to `out`.
    ///
    /// # Safety
    /// `L`'s CPU features are present and the three pointers are valid for the batch.
    unsafe fn apply<L: Lanes, const N: usize>(
        rk: &RoundKeys,
        x: *const Block,
        t: *const Block,
        out: *mut Block,
    );
}

/// `p`, hidden from the optimiser: a value staged in memory through `p` is then reloaded rather
/// than forwarded from the store, which would keep it live in registers across the AES rounds
/// and spill the batch.
#[inline(always)]
fn opaque(p: *mut Block) -> *const Block {
    core::hint::black_box(p)
}

/// out = π(k) ⊕ k for the prepared inputs `k`: k goes to `out`, comes back as the XOR operand.
#[inline(always)]
unsafe fn mmo<L: Lanes, const N: usize>(rk: &RoundKeys, mut k: [L; N], out: *mut Block) {
    // SAFETY: the caller guarantees `L`'s features and the batch at `out`.
    unsafe {
        store_n(&k, out);
        encrypt(rk, &mut k);
        let staged = opaque(out);
        for (j, y) in k.iter_mut().enumerate() {
            *y = y.xor(L::load(staged.add(j * L::BLOCKS)));
        }
        store_n(&k, out);
    }
}

/// A hash of the form H(x, i) = π(k) ⊕ k with k = `prepare(x, i)` a linear map.
pub(crate) trait MmoInput {
    /// Whether `prepare` reads the tweak.
    const TWEAKED: bool;
    /// k for one register of inputs; `t` points at its tweaks (read only if tweaked).
    ///
    /// # Safety
    /// `L`'s CPU features are present; `t` is valid for `L::BLOCKS` blocks if tweaked.
    unsafe fn prepare<L: Lanes>(x: L, t: *const Block) -> L;
}

/// The [`HashKind`] of an [`MmoInput`].
pub(crate) struct Mmo<P>(core::marker::PhantomData<P>);

impl<P: MmoInput> HashKind for Mmo<P> {
    const TWEAKED: bool = P::TWEAKED;
    #[inline(always)]
    unsafe fn apply<L: Lanes, const N: usize>(
        rk: &RoundKeys,
        x: *const Block,
        t: *const Block,
        out: *mut Block,
    ) {
        // SAFETY: the caller guarantees `L`'s features and the batch.
        unsafe {
            let mut k = load_n::<L, N>(x);
            for (j, v) in k.iter_mut().enumerate() {
                *v = P::prepare(*v, t.wrapping_add(j * L::BLOCKS));
            }
            mmo(rk, k, out)
        }
    }
}

/// H(x, i) = π(2x ⊕ i) ⊕ 2x: k = 2x ⊕ i.
pub(crate) struct Prp;
/// H(x) = π(x) ⊕ x: k = x.
pub(crate) struct Cr;
/// H(x) = π(σ(x)) ⊕ σ(x): k = σ(x).
pub(crate) struct Ccr;
/// H(x, i) = π(π(x) ⊕ i) ⊕ π(x).
pub(crate) struct Tccr;

impl MmoInput for Prp {
    const TWEAKED: bool = true;
    #[inline(always)]
    unsafe fn prepare<L: Lanes>(x: L, t: *const Block) -> L {
        // SAFETY: the caller guarantees `L`'s features and the tweaks.
        unsafe { x.gf_double().xor(L::load(t)) }
    }
}

impl MmoInput for Cr {
    const TWEAKED: bool = false;
    #[inline(always)]
    unsafe fn prepare<L: Lanes>(x: L, _t: *const Block) -> L {
        x
    }
}

impl MmoInput for Ccr {
    const TWEAKED: bool = false;
    #[inline(always)]
    unsafe fn prepare<L: Lanes>(x: L, _t: *const Block) -> L {
        // SAFETY: the caller guarantees `L`'s features.
        unsafe { x.sigma() }
    }
}

impl HashKind for Tccr {
    const TWEAKED: bool = true;
    #[inline(always)]
    unsafe fn apply<L: Lanes, const N: usize>(
        rk: &RoundKeys,
        x: *const Block,
        t: *const Block,
        out: *mut Block,
    ) {
        // SAFETY: the caller guarantees `L`'s features and the batch.
        unsafe {
            let tweak = |j: usize| L::load(t.add(j * L::BLOCKS));
            tccr_n(rk, load_n::<L, N>(x), tweak, out)
        }
    }
}

/// out = π(π(y) ⊕ i_j) ⊕ π(y) for the loaded inputs `y` and the tweak registers `tweak(j)`:
/// π(y) is staged in `out`.
///
/// # Safety
/// `L`'s CPU features are present; `out` is valid for the batch, and `tweak` for `j < N`.
#[inline(always)]
unsafe fn tccr_n<L: Lanes, const N: usize>(
    rk: &RoundKeys,
    mut y: [L; N],
    tweak: impl Fn(usize) -> L,
    out: *mut Block,
) {
    // SAFETY: as the caller guarantees.
    unsafe {
        encrypt(rk, &mut y);
        store_n(&y, out);
        for (j, v) in y.iter_mut().enumerate() {
            *v = v.xor(tweak(j));
        }
        encrypt(rk, &mut y);
        let staged = opaque(out);
        for (j, v) in y.iter_mut().enumerate() {
            *v = v.xor(L::load(staged.add(j * L::BLOCKS)));
        }
        store_n(&y, out);
    }
}

/// The counter kernels' per-call constants, written to memory once per call so that every
/// chunk loads them whole (see [`Lanes::low64`]): `first` advanced by each lane's number (four
/// lanes, the widest register's), and the offset in every lane.
#[repr(C, align(64))]
struct Counting {
    /// `first` plus the lane number, lane by lane.
    first: [Block; 4],
    /// The offset in every lane.
    offset: [Block; 4],
}

impl Counting {
    fn new(first: Block, offset: Block) -> Self {
        let lane = |k: u64| Block::from_halves(first.high(), first.low().wrapping_add(k));
        Counting {
            first: [lane(0), lane(1), lane(2), lane(3)],
            offset: [offset; 4],
        }
    }

    /// Register j of the counters `start..`: `first + start + j·BLOCKS` and the lanes after
    /// it (low halves modulo 2^64).
    ///
    /// # Safety
    /// `L`'s CPU features are present and `L::BLOCKS ≤ 4`.
    #[inline(always)]
    unsafe fn counter<L: Lanes>(&self, start: usize, j: usize) -> L {
        // SAFETY: the array holds 4 ≥ L::BLOCKS blocks; the caller vouches for the features.
        unsafe { L::load(self.first.as_ptr()).add64(L::low64((start + j * L::BLOCKS) as u64)) }
    }

    /// The offset in every lane.
    ///
    /// # Safety
    /// As [`Counting::counter`].
    #[inline(always)]
    unsafe fn offset<L: Lanes>(&self) -> L {
        // SAFETY: as `counter`.
        unsafe { L::load(self.offset.as_ptr()) }
    }
}

struct TccrCounter<'a> {
    rk: &'a RoundKeys,
    x: *const Block,
    counting: Counting,
    out: *mut Block,
}

impl Chunked for TccrCounter<'_> {
    #[inline(always)]
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize) {
        // SAFETY: `drive` keeps the chunk in bounds; registers hold at most 4 blocks; `x` and
        // `out` may not overlap (distinct borrows).
        unsafe {
            let offset = self.counting.offset::<L>();
            let mut y = load_n::<L, N>(self.x.add(start));
            for v in y.iter_mut() {
                *v = v.xor(offset);
            }
            let tweak = |j| self.counting.counter::<L>(start, j);
            tccr_n(self.rk, y, tweak, self.out.add(start));
        }
    }
}

struct Ctr<'a> {
    rk: &'a RoundKeys,
    counting: Counting,
    out: *mut Block,
}

impl Chunked for Ctr<'_> {
    #[inline(always)]
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize) {
        // SAFETY: `drive` keeps the chunk in bounds; registers hold at most 4 blocks.
        unsafe {
            let mut y = [L::splat(Block::ZERO); N];
            for (j, v) in y.iter_mut().enumerate() {
                *v = self.counting.counter::<L>(start, j);
            }
            encrypt(self.rk, &mut y);
            store_n(&y, self.out.add(start));
        }
    }
}

/// `out[k] = π(first + k)`, the counter in `first`'s low 64 bits modulo 2^64: counter mode,
/// the counters made in registers.
///
/// # Safety
/// `L`'s CPU features are present and `L::BLOCKS ≤ 4`.
#[inline(always)]
pub(crate) unsafe fn ctr<L: Lanes, const N: usize>(
    rk: &RoundKeys,
    first: Block,
    out: &mut [Block],
) {
    let mut k = Ctr {
        rk,
        counting: Counting::new(first, Block::ZERO),
        out: out.as_mut_ptr(),
    };
    // SAFETY: the kernel writes exactly `out`.
    unsafe { drive::<_, L, N>(&mut k, out.len()) }
}

struct CrCounter<'a> {
    rk: &'a RoundKeys,
    counting: Counting,
    out: *mut Block,
}

impl Chunked for CrCounter<'_> {
    #[inline(always)]
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize) {
        // SAFETY: `drive` keeps the chunk in bounds; registers hold at most 4 blocks.
        unsafe {
            let offset = self.counting.offset::<L>();
            let mut y = [offset; N];
            for (j, v) in y.iter_mut().enumerate() {
                *v = v.xor(self.counting.counter::<L>(start, j));
            }
            mmo(self.rk, y, self.out.add(start))
        }
    }
}

/// `out[k] = π(y) ⊕ y` for y = `offset ⊕ (first + k)`, the counter in `first`'s low 64 bits
/// modulo 2^64: the MMO hash of a counter run, the inputs made in registers.
///
/// # Safety
/// `L`'s CPU features are present and `L::BLOCKS ≤ 4`.
#[inline(always)]
pub(crate) unsafe fn cr_counter<L: Lanes, const N: usize>(
    rk: &RoundKeys,
    offset: Block,
    first: Block,
    out: &mut [Block],
) {
    let mut k = CrCounter {
        rk,
        counting: Counting::new(first, offset),
        out: out.as_mut_ptr(),
    };
    // SAFETY: the kernel writes exactly `out`.
    unsafe { drive::<_, L, N>(&mut k, out.len()) }
}

/// `out[k] = TCCR(x[k] ⊕ offset, first + k)`: the tweaks count up from `first` (in its low
/// 64 bits, modulo 2^64) and the offset is XORed in on the way, so neither takes a pass over
/// memory.
///
/// # Safety
/// `L`'s CPU features are present, `L::BLOCKS ≤ 4` and `out.len() == x.len()`.
#[inline(always)]
pub(crate) unsafe fn tccr_counter<L: Lanes, const N: usize>(
    rk: &RoundKeys,
    x: &[Block],
    offset: Block,
    first: Block,
    out: &mut [Block],
) {
    let mut k = TccrCounter {
        rk,
        x: x.as_ptr(),
        counting: Counting::new(first, offset),
        out: out.as_mut_ptr(),
    };
    // SAFETY: the caller guarantees the lengths.
    unsafe { drive::<_, L, N>(&mut k, x.len()) }
}

struct CrChildren<'a> {
    rk: &'a RoundKeys,
    nodes: *mut Block,
    half: usize,
    sums: [Block; 2],
}

/// The XOR of `N` registers' blocks at `p`, folded into `acc`.
///
/// # Safety
/// `L`'s CPU features are present, `L::BLOCKS ≤ 4` and `N × L::BLOCKS` blocks are at `p`.
#[inline(always)]
unsafe fn fold_sum<L: Lanes, const N: usize>(p: *const Block, acc: &mut Block) {
    // SAFETY: as the function's contract.
    unsafe {
        let mut sum = L::load(p);
        for j in 1..N {
            sum = sum.xor(L::load(p.add(j * L::BLOCKS)));
        }
        let mut lanes = [Block::ZERO; 4];
        sum.store(lanes.as_mut_ptr());
        for b in &lanes[..L::BLOCKS] {
            *acc ^= *b;
        }
    }
}

impl Chunked for CrChildren<'_> {
    #[inline(always)]
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize) {
        // SAFETY: `drive` keeps the parents `start..` below `half`, so both children runs are
        // in bounds; the parents are loaded before their left children overwrite them, and
        // the right children land past every parent.
        unsafe {
            let (left, right) = (self.nodes.add(start), self.nodes.add(self.half + start));
            let parents = load_n::<L, N>(left);
            let one = L::splat(Block::new(1));
            let mut flipped = parents;
            for p in flipped.iter_mut() {
                *p = p.xor(one);
            }
            mmo(self.rk, parents, left);
            mmo(self.rk, flipped, right);
            fold_sum::<L, N>(left, &mut self.sums[0]);
            fold_sum::<L, N>(right, &mut self.sums[1]);
        }
    }
}

/// One level of GGM trees in split order: for the `m = nodes.len() / 2` parents p_q in
/// `nodes[..m]`, `nodes[q] = H(p_q)` and `nodes[m + q] = H(p_q ⊕ 1)` with H(x) = π(x) ⊕ x, in
/// place; returns the sums of the two halves.
///
/// # Safety
/// `L`'s CPU features are present and `L::BLOCKS ≤ 4`.
#[inline(always)]
pub(crate) unsafe fn cr_children<L: Lanes, const N: usize>(
    rk: &RoundKeys,
    nodes: &mut [Block],
) -> [Block; 2] {
    let half = nodes.len() / 2;
    let mut k = CrChildren {
        rk,
        nodes: nodes.as_mut_ptr(),
        half,
        sums: [Block::ZERO; 2],
    };
    // SAFETY: the kernel addresses exactly `nodes[..2 half]`.
    unsafe { drive::<_, L, N>(&mut k, half) };
    k.sums
}

/// Encrypts the first `live` rows of a grid of registers in place, round by round across the
/// whole grid (the rows past `live` are left as they are).
///
/// # Safety
/// `L`'s CPU features are present.
#[inline(always)]
unsafe fn encrypt_grid<L: Lanes, const N: usize, const R: usize>(
    rk: &RoundKeys,
    s: &mut [[L; R]; N],
    live: usize,
) {
    // SAFETY: the caller guarantees `L`'s features. Index loops with constant bounds, so that
    // the grid unrolls into registers.
    unsafe {
        let k = L::splat(rk.0[0]);
        for row in s.iter_mut().take(live) {
            for x in row.iter_mut() {
                *x = x.xor(k);
            }
        }
        for r in 1..10 {
            let k = L::splat(rk.0[r]);
            for row in s.iter_mut().take(live) {
                for x in row.iter_mut() {
                    *x = x.aesenc(k);
                }
            }
        }
        let k = L::splat(rk.0[10]);
        for row in s.iter_mut().take(live) {
            for x in row.iter_mut() {
                *x = x.aesenclast(k);
            }
        }
    }
}

/// The masked variant of [`counter_sums`]: bit `b`'s mask (all ones or zero) and one offset
/// block per row block.
#[derive(Clone, Copy)]
pub(crate) struct SumsMask {
    pub(crate) masks: *const Block,
    pub(crate) offset: *const Block,
}

/// [`counter_sums`] for the row blocks `start..start + R × L::BLOCKS`.
///
/// # Safety
/// `L`'s CPU features are present and `L::BLOCKS ≤ 4`; `leaves` holds `N` blocks, or `N − 1`
/// if `MISSING`; the sums' (column b, row block t at `b · column + t · row`) and totals'
/// blocks of these rows are in bounds, and if `MASKED`, so are `log2 N` masks and the offsets
/// of these rows.
#[inline(always)]
unsafe fn counter_sums_rows<
    L: Lanes,
    const N: usize,
    const R: usize,
    const MISSING: bool,
    const MASKED: bool,
>(
    rk: &RoundKeys,
    leaves: *const Block,
    counting: &Counting,
    start: usize,
    (sums, column, row): (*mut Block, usize, usize),
    total: *mut Block,
    mask: SumsMask,
) {
    // SAFETY: as the function's contract.
    unsafe {
        let live = if MISSING { N - 1 } else { N };
        let input =
            |y: usize, j: usize| L::splat(*leaves.add(y)).xor(counting.counter::<L>(start, j));
        let mut s = [[L::splat(Block::ZERO); R]; N];
        for (y, row) in s.iter_mut().enumerate().take(live) {
            for (j, x) in row.iter_mut().enumerate() {
                *x = input(y, j);
            }
        }
        encrypt_grid(rk, &mut s, live);
        for (y, row) in s.iter_mut().enumerate().take(live) {
            for (j, x) in row.iter_mut().enumerate() {
                *x = x.xor(input(y, j));
            }
        }
        // Halving from the top bit down: the upper half of the live streams are those with
        // bit b set, the lower half those with bit b clear; the sum of one of them is column
        // b, and the upper half folds onto the lower.
        let (mut half, mut b) = (N / 2, N.trailing_zeros() as usize);
        while half >= 1 {
            b -= 1;
            let summed = if MASKED { 0..half } else { half..2 * half };
            for j in 0..R {
                let mut sum = s[summed.start][j];
                for row in &s[summed.start + 1..summed.end] {
                    sum = sum.xor(row[j]);
                }
                if MASKED {
                    let offset = L::load(mask.offset.add(start + j * L::BLOCKS));
                    sum = sum.xor(offset.and(L::splat(*mask.masks.add(b))));
                }
                for y in half..2 * half {
                    s[y - half][j] = s[y - half][j].xor(s[y][j]);
                }
                let at = sums.add(b * column + (start + j * L::BLOCKS) * row);
                if row == 1 {
                    sum.store(at);
                } else {
                    sum.store_strided(at, row);
                }
            }
            half /= 2;
        }
        for (j, x) in s[0].iter().enumerate() {
            x.store(total.add(start + j * L::BLOCKS));
        }
    }
}

/// SoftSpoken's leaf streams summed by subsets in registers (Roy, CRYPTO 2022, §5.2): for
/// the `N` leaves L_y (the last absent, its stream zero, if `MISSING`) and row blocks
/// t < `total.len()`, with G_y = π(x) ⊕ x for x = L_y ⊕ (`first` + t),
/// `sums[b · column + t · row] = Σ_{y: bit b of y} G_y` and `total[t] = Σ_y G_y`; if `MASKED`,
/// column b sums the streams whose bit b is clear instead, plus `masks[b] & offset[t]`. `R`
/// registers of rows at a time keep `N × R` blocks of AES in flight, then one row block at a
/// time.
///
/// # Safety
/// `L`'s CPU features are present and `L::BLOCKS ≤ 4`; `leaves` holds `N` (or `N − 1`)
/// blocks and `sums` at least `(log2 N − 1) · column + (total.len() − 1) · row + 1` (when
/// `total` is not empty); if `MASKED`, `mask` points at `log2 N` masks and `total.len()`
/// offsets.
#[inline(always)]
pub(crate) unsafe fn counter_sums<
    L: Lanes,
    const N: usize,
    const R: usize,
    const MISSING: bool,
    const MASKED: bool,
>(
    rk: &RoundKeys,
    leaves: &[Block],
    first: Block,
    (sums, column, row): (&mut [Block], usize, usize),
    total: &mut [Block],
    mask: SumsMask,
) {
    let counting = Counting::new(first, Block::ZERO);
    let (len, l, out) = (
        total.len(),
        leaves.as_ptr(),
        (sums.as_mut_ptr(), column, row),
    );
    let t = total.as_mut_ptr();
    let mut i = 0;
    // SAFETY (both loops): the rows stay below `len`; the caller vouches for the rest.
    while i + R * L::BLOCKS <= len {
        unsafe { counter_sums_rows::<L, N, R, MISSING, MASKED>(rk, l, &counting, i, out, t, mask) };
        i += R * L::BLOCKS;
    }
    while i < len {
        unsafe {
            counter_sums_rows::<L::Single, N, 1, MISSING, MASKED>(rk, l, &counting, i, out, t, mask)
        };
        i += 1;
    }
}

struct Hash<'a, H> {
    rk: &'a RoundKeys,
    x: *const Block,
    tweaks: *const Block,
    out: *mut Block,
    kind: core::marker::PhantomData<H>,
}

impl<H: HashKind> Chunked for Hash<'_, H> {
    #[inline(always)]
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize) {
        // SAFETY: `drive` keeps the chunk in bounds; tweaks are only read when the hash is
        // tweaked, and then the caller passed as many as inputs. `out` and `x` may not
        // overlap (distinct borrows), and each batch reads its inputs before writing `out`.
        unsafe {
            let t = if H::TWEAKED {
                self.tweaks.add(start)
            } else {
                self.tweaks
            };
            H::apply::<L, N>(self.rk, self.x.add(start), t, self.out.add(start));
        }
    }
}

/// `out[i] = H(x[i], tweaks[i])` for the hash `H`.
///
/// # Safety
/// `L`'s CPU features are present; `out.len() == x.len()`, and `tweaks.len() == x.len()` if
/// `H::TWEAKED`.
#[inline(always)]
pub(crate) unsafe fn hash<L: Lanes, const N: usize, H: HashKind>(
    rk: &RoundKeys,
    x: &[Block],
    tweaks: &[Block],
    out: &mut [Block],
) {
    let mut k = Hash::<H> {
        rk,
        x: x.as_ptr(),
        tweaks: tweaks.as_ptr(),
        out: out.as_mut_ptr(),
        kind: core::marker::PhantomData,
    };
    // SAFETY: the caller guarantees the lengths.
    unsafe { drive::<_, L, N>(&mut k, x.len()) }
}

struct Expand {
    keys: *const Block,
    out: *mut Block,
}

impl Chunked for Expand {
    #[inline(always)]
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize) {
        // SAFETY: `drive` keeps the chunk in bounds; round key r of key i is block 11 i + r
        // of `out` (`RoundKeys` is 11 blocks, `repr(C)`).
        unsafe {
            let mut k = load_n::<L, N>(self.keys.add(start));
            let base = self.out.add(11 * start);
            for r in 0..11 {
                if r > 0 {
                    for x in k.iter_mut() {
                        *x = x.next_round_key(RCON[r - 1]);
                    }
                }
                for (j, x) in k.iter().enumerate() {
                    x.store_strided(base.add(11 * j * L::BLOCKS + r), 11);
                }
            }
        }
    }
}

/// Expands each key of `keys` into `out`, `N × BLOCKS` keys at a time.
///
/// # Safety
/// `L`'s CPU features are present and `out.len() == keys.len()`.
#[inline(always)]
pub(crate) unsafe fn expand<L: Lanes, const N: usize>(keys: &[Block], out: &mut [RoundKeys]) {
    let mut k = Expand {
        keys: keys.as_ptr(),
        out: out.as_mut_ptr().cast(),
    };
    // SAFETY: the caller guarantees the lengths.
    unsafe { drive::<_, L, N>(&mut k, keys.len()) }
}

struct MultiKey<const M: usize> {
    keys: *const Block,
    blocks: *mut Block,
    /// Blocks per key in memory (the stride); `M` of them are encrypted per call, from `offset`.
    stride: usize,
    offset: usize,
}

impl<const M: usize> Chunked for MultiKey<M> {
    /// Expands `N` registers of keys and encrypts `M` blocks under each, round by round: round
    /// key r + 1 is computed while round r's `aesenc`s are in flight, and nothing leaves the
    /// registers.
    #[inline(always)]
    unsafe fn chunk<L: Lanes, const N: usize>(&mut self, start: usize) {
        let m = self.stride;
        // SAFETY: `drive` keeps the keys in bounds; key i owns blocks m i .. m (i + 1), of
        // which this call touches offset .. offset + M ≤ m.
        unsafe {
            let mut k = load_n::<L, N>(self.keys.add(start));
            let p = self.blocks.add(start * m + self.offset);
            let mut s = [[k[0]; N]; M];
            for (b, sb) in s.iter_mut().enumerate() {
                for (j, x) in sb.iter_mut().enumerate() {
                    *x = L::load_strided(p.add(j * L::BLOCKS * m + b), m).xor(k[j]);
                }
            }
            for (r, &rcon) in RCON.iter().enumerate() {
                for x in k.iter_mut() {
                    *x = x.next_round_key(rcon);
                }
                for sb in s.iter_mut() {
                    for (x, key) in sb.iter_mut().zip(&k) {
                        *x = if r < 9 {
                            x.aesenc(*key)
                        } else {
                            x.aesenclast(*key)
                        };
                    }
                }
            }
            for (b, sb) in s.iter().enumerate() {
                for (j, x) in sb.iter().enumerate() {
                    x.store_strided(p.add(j * L::BLOCKS * m + b), m);
                }
            }
        }
    }
}

/// Encrypts block `i` of `blocks` under key `i / m` with `m = blocks.len() / keys.len()`, key
/// expansion included and batched. `m` up to 4 is handled in one pass with all state in
/// registers; larger `m` in passes of up to 4 blocks per key, each expanding the keys again.
///
/// # Safety
/// `L`'s CPU features are present, `keys` is not empty and `blocks.len()` is a multiple of
/// `keys.len()`.
#[inline(always)]
pub(crate) unsafe fn multi_key<L: Lanes>(keys: &[Block], blocks: &mut [Block]) {
    let stride = blocks.len() / keys.len();
    let (k, p) = (keys.as_ptr(), blocks.as_mut_ptr());
    let mut offset = 0;
    while offset < stride {
        let pass = (stride - offset).min(4);
        // SAFETY: the caller guarantees the lengths; each pass stays inside a key's blocks.
        // Batches shrink as blocks per key grow, to keep keys and states in registers.
        unsafe {
            match pass {
                1 => multi_key_pass::<L, 6, 1>(k, p, keys.len(), stride, offset),
                2 => multi_key_pass::<L, 4, 2>(k, p, keys.len(), stride, offset),
                3 => multi_key_pass::<L, 3, 3>(k, p, keys.len(), stride, offset),
                _ => multi_key_pass::<L, 2, 4>(k, p, keys.len(), stride, offset),
            }
        }
        offset += pass;
    }
}

/// One pass of [`multi_key`]: `M` blocks per key, `N` registers of keys per batch.
///
/// # Safety
/// As [`multi_key`], with `offset + M ≤ stride`.
#[inline(always)]
unsafe fn multi_key_pass<L: Lanes, const N: usize, const M: usize>(
    keys: *const Block,
    blocks: *mut Block,
    n_keys: usize,
    stride: usize,
    offset: usize,
) {
    // SAFETY: the caller guarantees the lengths.
    unsafe {
        drive::<_, L, N>(
            &mut MultiKey::<M> {
                keys,
                blocks,
                stride,
                offset,
            },
            n_keys,
        )
    }
}

/// Independent `aesenc` chains held in registers: the backend's AES roofline.
pub(crate) const ROOFLINE_CHAINS: usize = 12;

/// Runs `iters` rounds of [`ROOFLINE_CHAINS`] independent `aesenc` chains and returns a value
/// that depends on all of them (so the loop cannot be optimised away).
///
/// # Safety
/// `L`'s CPU features are present.
#[inline(always)]
pub(crate) unsafe fn roofline<L: Lanes>(iters: u64) -> Block {
    // SAFETY: the caller guarantees `L`'s features; `out` holds 4 blocks, the widest register.
    unsafe {
        let rk = L::splat(core::hint::black_box(Block::new(
            0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100,
        )));
        let mut s = [rk; ROOFLINE_CHAINS];
        for (j, x) in s.iter_mut().enumerate() {
            *x = L::splat(Block::new(j as u128));
        }
        for _ in 0..iters {
            for x in s.iter_mut() {
                *x = x.aesenc(rk);
            }
        }
        let acc = s.iter().fold(L::splat(Block::ZERO), |a, x| a.xor(*x));
        let mut out = [Block::ZERO; 4];
        acc.store(out.as_mut_ptr());
        out[0]
    }
}

/// The keys of a fused half-gates batch: the fixed-key permutation's round keys (PRP) and the
/// public key offset S (MI). Each hash reads only its own.
pub(crate) struct GateKeys<'a> {
    pub(crate) rk: &'a RoundKeys,
    pub(crate) offset: Block,
}

/// A tweakable hash H(x, j) = E(p(x), j) [⊕ p(x)] computed in registers for a group of gates
/// (VASA §4.3.1), with p a linear map (so p(x ⊕ Δ) = p(x) ⊕ p(Δ) costs one XOR). Gate g's
/// inputs w < W/2 take tweak j = `t[g]`, the others j ⊕ 1.
pub(crate) trait GateHash {
    /// Whether the hash XORs p(x) into the AES output.
    const FEED_FORWARD: bool;
    /// The linear map p.
    ///
    /// # Safety
    /// `L`'s CPU features are present.
    unsafe fn prepare<L: Lanes>(x: L) -> L;
    /// E(p[g][w], j) for every input, without the feed-forward.
    ///
    /// # Safety
    /// `L`'s CPU features are present.
    unsafe fn encrypt<L: Lanes, const G: usize, const W: usize>(
        keys: &GateKeys<'_>,
        p: &[[L; W]; G],
        t: &[L; G],
    ) -> [[L; W]; G];
}

/// Applies `f` to every register of a gate group, in loops the compiler unrolls and inlines
/// (an iterator adapter here can end up an out-of-line call that spills the batch).
#[inline(always)]
fn each<L: Copy, const G: usize, const W: usize>(s: &mut [[L; W]; G], f: impl Fn(L) -> L) {
    for sg in s.iter_mut() {
        for v in sg.iter_mut() {
            *v = f(*v);
        }
    }
}

/// Gate g's tweak for input w of W: j, or j ⊕ 1 for the second half.
#[inline(always)]
unsafe fn tweak_of<L: Lanes, const W: usize>(t: L, w: usize) -> L {
    // SAFETY: the caller guarantees `L`'s features.
    unsafe {
        if w < W / 2 {
            t
        } else {
            t.xor(L::splat(Block::new(1)))
        }
    }
}

/// H(x, j) = π(2x ⊕ j) ⊕ 2x over the fixed-key permutation π: no key schedule.
pub(crate) struct PrpGate;

impl GateHash for PrpGate {
    const FEED_FORWARD: bool = true;

    #[inline(always)]
    unsafe fn prepare<L: Lanes>(x: L) -> L {
        // SAFETY: the caller guarantees `L`'s features.
        unsafe { x.gf_double() }
    }

    #[inline(always)]
    unsafe fn encrypt<L: Lanes, const G: usize, const W: usize>(
        keys: &GateKeys<'_>,
        p: &[[L; W]; G],
        t: &[L; G],
    ) -> [[L; W]; G] {
        // SAFETY: the caller guarantees `L`'s features.
        unsafe {
            let mut s = *p;
            let rk = &keys.rk.0;
            let k0 = L::splat(rk[0]);
            for (sg, &tg) in s.iter_mut().zip(t) {
                for (w, v) in sg.iter_mut().enumerate() {
                    *v = v.xor(tweak_of::<L, W>(tg, w)).xor(k0);
                }
            }
            for r in rk.iter().take(10).skip(1) {
                let k = L::splat(*r);
                each(&mut s, |v| v.aesenc(k));
            }
            let k = L::splat(rk[10]);
            each(&mut s, |v| v.aesenclast(k));
            s
        }
    }
}

/// Encrypts state w of gate g under key `k[g][w / (W / K)]`, expanding the `K` keys of every
/// gate round by round alongside the rounds (round key r + 1 computed while round r runs).
#[inline(always)]
unsafe fn encrypt_keyed<L: Lanes, const G: usize, const W: usize, const K: usize>(
    mut k: [[L; K]; G],
    s: &mut [[L; W]; G],
) {
    // SAFETY: the caller guarantees `L`'s features.
    unsafe {
        for (sg, kg) in s.iter_mut().zip(&k) {
            for (w, v) in sg.iter_mut().enumerate() {
                *v = v.xor(kg[w / (W / K)]);
            }
        }
        for (r, &rcon) in RCON.iter().enumerate() {
            each(&mut k, |v| v.next_round_key(rcon));
            for (sg, kg) in s.iter_mut().zip(&k) {
                for (w, v) in sg.iter_mut().enumerate() {
                    let key = kg[w / (W / K)];
                    *v = if r < 9 {
                        v.aesenc(key)
                    } else {
                        v.aesenclast(key)
                    };
                }
            }
        }
    }
}

/// H(x, j) = AES_{S ⊕ j}(σ(x)) ⊕ σ(x) (Guo, Katz, Wang, Weng, Yu, CRYPTO 2020): two key
/// schedules per gate, shared by the gate's inputs with the same tweak.
pub(crate) struct MiGate;

/// Gates per register group of MI evaluation with `registers` vector registers: four where 32
/// hold their keys and states (on Zen 4, vaes512, random AND gates evaluated 97.8 → 111.6
/// M AND/s against three), else three.
pub(crate) const fn mi_eval_group(registers: usize) -> usize {
    if registers >= 32 { 4 } else { 3 }
}

impl GateHash for MiGate {
    const FEED_FORWARD: bool = true;

    #[inline(always)]
    unsafe fn prepare<L: Lanes>(x: L) -> L {
        // SAFETY: the caller guarantees `L`'s features.
        unsafe { x.sigma() }
    }

    #[inline(always)]
    unsafe fn encrypt<L: Lanes, const G: usize, const W: usize>(
        keys: &GateKeys<'_>,
        p: &[[L; W]; G],
        t: &[L; G],
    ) -> [[L; W]; G] {
        // SAFETY: the caller guarantees `L`'s features.
        unsafe {
            let offset = L::splat(keys.offset);
            let mut k = [[offset; 2]; G];
            for (kg, &tg) in k.iter_mut().zip(t) {
                *kg = [offset.xor(tg), offset.xor(tweak_of::<L, 2>(tg, 1))];
            }
            let mut s = *p;
            encrypt_keyed::<L, G, W, 2>(k, &mut s);
            s
        }
    }
}

/// H(x, j) = AES_x(j): every label is a key (circular security).
pub(crate) struct CircGate;

impl GateHash for CircGate {
    const FEED_FORWARD: bool = false;

    #[inline(always)]
    unsafe fn prepare<L: Lanes>(x: L) -> L {
        x
    }

    #[inline(always)]
    unsafe fn encrypt<L: Lanes, const G: usize, const W: usize>(
        _keys: &GateKeys<'_>,
        p: &[[L; W]; G],
        t: &[L; G],
    ) -> [[L; W]; G] {
        // SAFETY: the caller guarantees `L`'s features.
        unsafe {
            let mut s = *p;
            for (sg, &tg) in s.iter_mut().zip(t) {
                for (w, v) in sg.iter_mut().enumerate() {
                    *v = tweak_of::<L, W>(tg, w);
                }
            }
            encrypt_keyed::<L, G, W, W>(*p, &mut s);
            s
        }
    }
}

/// Runs `group::<L, H, G>` over the batch `io` in groups of `G × L::BLOCKS` gates, then the
/// tail in one group of as many whole registers as it fills and one group of one-block
/// registers for the rest: a group of each size (below 4) is its own instance, so the tail's
/// gates are in the AES pipeline together rather than one after another.
macro_rules! drive_gates {
    ($io:expr, $L:ty, $H:ty, $G:expr, $group:ident, $($arg:expr),*) => {{
        let io: &HalfGatesIo<'_> = $io;
        // The tail's two groups below have at most 3 registers each.
        const { assert!($G <= 4 && <$L>::BLOCKS <= 4) };
        let n = io.a.len();
        let mut k = 0;
        // SAFETY (every call): each group stays below `n`, the length the caller checked.
        while k + $G * <$L>::BLOCKS <= n {
            unsafe { $group::<$L, $H, { $G }>(k, $($arg,)* io) };
            k += $G * <$L>::BLOCKS;
        }
        let whole = (n - k) / <$L>::BLOCKS;
        match whole {
            0 => {}
            1 => unsafe { $group::<$L, $H, 1>(k, $($arg,)* io) },
            2 => unsafe { $group::<$L, $H, 2>(k, $($arg,)* io) },
            3 => unsafe { $group::<$L, $H, 3>(k, $($arg,)* io) },
            _ => unreachable!("a tail of {whole} registers, fewer than a group of {}", $G),
        }
        k += whole * <$L>::BLOCKS;
        match n - k {
            0 => {}
            1 => unsafe { $group::<<$L as Lanes>::Single, $H, 1>(k, $($arg,)* io) },
            2 => unsafe { $group::<<$L as Lanes>::Single, $H, 2>(k, $($arg,)* io) },
            3 => unsafe { $group::<<$L as Lanes>::Single, $H, 3>(k, $($arg,)* io) },
            rest => unreachable!("a tail of {rest} blocks, fewer than a register's"),
        }
    }};
}

/// Input and output of a half-gates batch of n gates (see
/// [`crate::hash::FixedKeyHash::half_gates_garble`]): gate k reads the labels at slots `a[k]`
/// and `b[k]` of the slot array, its tweak is 2·`ids[k]` with `domain` in the high 64 bits;
/// it writes its output to slot `out[k]` (in place) or to `out + k` (buffered), and
/// `table[2k]`, `table[2k + 1]`.
#[derive(Clone, Copy)]
pub(crate) struct HalfGatesIo<'a> {
    slots: *const Block,
    slot_count: usize,
    a: &'a [u32],
    b: &'a [u32],
    ids: &'a [u32],
    domain: Block,
    table: *mut Block,
    /// The slot array (in place) or the output buffer.
    out: *mut Block,
    /// In place: each gate's output slot; buffered: `None`.
    out_slots: Option<&'a [u32]>,
    /// The first slot of `a` and of `b` where that input's slots are consecutive, so a
    /// register's labels are one plain load rather than a gather (set by [`Self::checked`]).
    runs: [Option<u32>; 2],
}

/// The largest of the slot indices `v` (0 if empty), and `v[0]` if `v` is a run `v[0],
/// v[0] + 1, ...`. One fold, with no early exit, so the pass vectorises.
#[inline(always)]
fn scan(v: &[u32]) -> (u32, Option<u32>) {
    let first = v.first().copied().unwrap_or(0);
    let step = |(max, run): (u32, bool), (k, &s): (usize, &u32)| {
        (max.max(s), run & (s.wrapping_sub(first) == k as u32))
    };
    let (max, run) = v.iter().enumerate().fold((0, true), step);
    (max, (run && !v.is_empty()).then_some(first))
}

impl<'a> HalfGatesIo<'a> {
    /// The batch of n = `a.len()` gates, after checking every length against n (2n for the
    /// table of `table_len` blocks at `table`). The kernels check the slot indices
    /// ([`Self::checked`]).
    ///
    /// # Panics
    /// If a length differs.
    pub(crate) fn new(
        labels: Labels<'a, Block>,
        SlotGates {
            a,
            b,
            out,
            ids,
            domain,
        }: SlotGates<'a>,
        table_len: usize,
        table: *mut Block,
    ) -> Self {
        let n = a.len();
        let slot_count = labels.slots();
        let (slots, dst, out_slots) = match labels {
            // `Cell<Block>` has `Block`'s layout, and writes through it are allowed.
            Labels::InPlace(cells) => {
                let base = cells.as_ptr().cast::<Block>().cast_mut();
                (base.cast_const(), base, Some(out))
            }
            Labels::Buffered { slots, out: buffer } => {
                assert!(buffer.len() == n, "half-gates batch: lengths differ");
                (slots.as_ptr(), buffer.as_mut_ptr(), None)
            }
        };
        assert!(
            b.len() == n && ids.len() == n && out.len() == n && table_len == 2 * n,
            "half-gates batch: lengths differ"
        );
        HalfGatesIo {
            slots,
            slot_count,
            a,
            b,
            ids,
            domain: Block::from_halves(domain, 0),
            table,
            out: dst,
            out_slots,
            runs: [None; 2],
        }
    }

    /// The batch after checking every slot index against the slot array, so the kernels'
    /// loads and stores need no bounds checks; inputs from consecutive slots become plain
    /// loads and outputs in place to consecutive slots plain stores. Inlined into the
    /// kernels' `#[target_feature]` entry points, where these passes over the indices
    /// vectorise.
    ///
    /// # Panics
    /// If an index is out of bounds.
    #[inline(always)]
    fn checked(&self) -> Self {
        let ((a, run_a), (b, run_b)) = (scan(self.a), scan(self.b));
        let (out, run_out) = self.out_slots.map_or((0, None), scan);
        assert!(
            self.a.is_empty() || (a.max(b).max(out) as usize) < self.slot_count,
            "half-gates batch: a slot index is out of bounds"
        );
        let mut io = *self;
        // Runs first..first + n, all in bounds.
        io.runs = [run_a, run_b];
        if let Some(first) = run_out {
            io.out = self.out.wrapping_add(first as usize);
            io.out_slots = None;
        }
        io
    }

    /// Stores the outputs of gates `at..at + L::BLOCKS`.
    ///
    /// # Safety
    /// As [`Self::input`].
    #[inline(always)]
    unsafe fn put<L: Lanes>(&self, at: usize, v: L) {
        // SAFETY: `at + BLOCKS ≤ n` by the caller; `checked` checked every output slot, `new`
        // the buffer's length.
        unsafe {
            match self.out_slots {
                Some(idx) => v.store_indexed(self.out, idx.as_ptr().add(at)),
                None => v.store(self.out.add(at)),
            }
        }
    }

    /// The labels at slots `a[at..]` and `b[at..]`, one per lane.
    ///
    /// # Safety
    /// `L`'s features are present and `at + L::BLOCKS ≤ n`.
    #[inline(always)]
    unsafe fn inputs<L: Lanes>(&self, at: usize) -> [L; 2] {
        // SAFETY: as `input`.
        unsafe { [self.input(0, self.slots, at), self.input(1, self.slots, at)] }
    }

    /// The labels `held` of gates `at..`, read by [`Self::inputs`] before the AES rounds,
    /// again after them. With 32 vector registers they stayed in registers (reloading them
    /// instead would redo the gathers: the compiler cannot tell that the outputs stored in
    /// between leave the inputs alone; on Zen 4, vaes512, that was 9 % of AES-128's
    /// evaluation). With 16 they are reloaded from memory rather than held across the rounds,
    /// which would spill the batch ([`Lanes::REGISTERS`]).
    ///
    /// # Safety
    /// As [`Self::inputs`].
    #[inline(always)]
    unsafe fn inputs_again<L: Lanes>(&self, at: usize, held: [L; 2]) -> [L; 2] {
        if L::REGISTERS >= 32 {
            return held;
        }
        let base = opaque(self.slots.cast_mut());
        // SAFETY: as `input`.
        unsafe { [self.input(0, base, at), self.input(1, base, at)] }
    }

    /// The labels at slots `a[at..]` (`which` = 0) or `b[at..]` (1) of the slot array at
    /// `base`, one per lane.
    ///
    /// # Safety
    /// `L`'s features are present, `at + L::BLOCKS ≤ n` and `base` is `self.slots`.
    #[inline(always)]
    unsafe fn input<L: Lanes>(&self, which: usize, base: *const Block, at: usize) -> L {
        let idx = if which == 0 { self.a } else { self.b };
        // SAFETY: `at + BLOCKS ≤ n` by the caller, and `checked` checked every index (a run's
        // slots are those indices).
        unsafe {
            match self.runs[which] {
                Some(first) => L::load(base.add(first as usize + at)),
                None => L::load_indexed(base, idx.as_ptr().add(at)),
            }
        }
    }

    /// Gates `at..`'s first tweaks j = 2·id in the batch's domain, one per lane.
    ///
    /// # Safety
    /// As [`Self::input`].
    #[inline(always)]
    unsafe fn tweak<L: Lanes>(&self, at: usize) -> L {
        // SAFETY: as `input`.
        unsafe {
            let id = L::load_u32(self.ids.as_ptr().add(at));
            id.add64(id).xor(L::splat(self.domain))
        }
    }
}

/// Garbles `G × L::BLOCKS` AND gates from gate `k`: 4 hashes each, all in the AES pipeline at
/// once, the half-gates combination done in registers (VASA §4.2.1, Listing 1, on the
/// garbler's side). With 16 vector registers the labels are reloaded from L1 after the rounds
/// rather than held in registers through them ([`Lanes::REGISTERS`]).
///
/// # Safety
/// `L`'s features are present and the gates are in bounds of every slice.
#[inline(always)]
unsafe fn garble_group<L: Lanes, H: GateHash, const G: usize>(
    k: usize,
    keys: &GateKeys<'_>,
    delta: Block,
    io: &HalfGatesIo<'_>,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let d = L::splat(delta);
        let pd = H::prepare(d);
        let mut p = [[d; 4]; G];
        let mut t = [d; G];
        let mut ab = [[d; 2]; G];
        for (g, ((pg, tg), abg)) in p
            .iter_mut()
            .zip(t.iter_mut())
            .zip(ab.iter_mut())
            .enumerate()
        {
            let at = k + g * L::BLOCKS;
            *abg = io.inputs(at);
            let (pa, pb) = (H::prepare(abg[0]), H::prepare(abg[1]));
            *pg = [pa, pa.xor(pd), pb, pb.xor(pd)];
            *tg = io.tweak(at);
        }
        let mut h = H::encrypt::<L, G, 4>(keys, &p, &t);
        for (g, hg) in h.iter_mut().enumerate() {
            let at = k + g * L::BLOCKS;
            let [a, b] = io.inputs_again(at, ab[g]);
            if H::FEED_FORWARD {
                let (pa, pb) = (H::prepare(a), H::prepare(b));
                *hg = [
                    hg[0].xor(pa),
                    hg[1].xor(pa).xor(pd),
                    hg[2].xor(pb),
                    hg[3].xor(pb).xor(pd),
                ];
            }
            let (pa, pb) = (a.lsb_mask(), b.lsb_mask());
            let tg = hg[0].xor(hg[1]).xor(pb.and(d));
            let wg = hg[0].xor(pa.and(tg));
            let te = hg[2].xor(hg[3]).xor(a);
            let we = hg[2].xor(pb.and(te.xor(a)));
            io.put(at, wg.xor(we));
            L::store_pairs(tg, te, io.table.add(2 * at));
        }
    }
}

/// Evaluates `G × L::BLOCKS` AND gates from gate `k`: 2 hashes each.
///
/// # Safety
/// As [`garble_group`].
#[inline(always)]
unsafe fn eval_group<L: Lanes, H: GateHash, const G: usize>(
    k: usize,
    keys: &GateKeys<'_>,
    io: &HalfGatesIo<'_>,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let zero = L::splat(Block::ZERO);
        let mut p = [[zero; 2]; G];
        let mut t = [zero; G];
        let mut ab = [[zero; 2]; G];
        for (g, ((pg, tg), abg)) in p
            .iter_mut()
            .zip(t.iter_mut())
            .zip(ab.iter_mut())
            .enumerate()
        {
            let at = k + g * L::BLOCKS;
            *abg = io.inputs(at);
            *pg = [H::prepare(abg[0]), H::prepare(abg[1])];
            *tg = io.tweak(at);
        }
        let mut h = H::encrypt::<L, G, 2>(keys, &p, &t);
        let table = io.table as *const Block;
        for (g, hg) in h.iter_mut().enumerate() {
            let at = k + g * L::BLOCKS;
            let [a, b] = io.inputs_again(at, ab[g]);
            if H::FEED_FORWARD {
                *hg = [hg[0].xor(H::prepare(a)), hg[1].xor(H::prepare(b))];
            }
            let (tg, te) = L::load_pairs(table.add(2 * at));
            let wg = hg[0].xor(a.lsb_mask().and(tg));
            let we = hg[1].xor(b.lsb_mask().and(te.xor(a)));
            io.put(at, wg.xor(we));
        }
    }
}

/// Half-gates garbling of `io.a.len()` AND gates with hash `H`, fused, `G` gates per register
/// group.
///
/// # Safety
/// `L`'s features are present and `io` comes from [`HalfGatesIo::new`], which checked every
/// length (the slot indices are checked here).
#[inline(always)]
pub(crate) unsafe fn half_gates_garble<L: Lanes, H: GateHash, const G: usize>(
    keys: &GateKeys<'_>,
    delta: Block,
    io: &HalfGatesIo<'_>,
) {
    drive_gates!(&io.checked(), L, H, G, garble_group, keys, delta)
}

/// Half-gates evaluation of `io.a.len()` AND gates with hash `H`, fused.
///
/// # Safety
/// As [`half_gates_garble`].
#[inline(always)]
pub(crate) unsafe fn half_gates_eval<L: Lanes, H: GateHash, const G: usize>(
    keys: &GateKeys<'_>,
    io: &HalfGatesIo<'_>,
) {
    drive_gates!(&io.checked(), L, H, G, eval_group, keys)
}
