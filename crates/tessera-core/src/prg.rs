//! A pseudo-random generator: AES-128 in counter mode under a 128-bit seed, filled in batches.
//! Output block `j` is AES_seed(j); the stream is the same whether it is drawn as blocks or
//! bytes.

use crate::aes::{Aes, Backend, FixedKeyAes};
use crate::{Block, Error};
use rand_core::{CryptoRng, RngCore, SeedableRng};

/// Blocks generated per refill of the internal buffer (small draws) and per batch.
const BUFFER_BLOCKS: usize = 64;

/// AES-CTR PRG; `rand_core::RngCore + CryptoRng`.
#[derive(Clone)]
pub struct Prg {
    aes: FixedKeyAes,
    /// Index of the next keystream block to generate.
    counter: u128,
    /// Keystream already generated but not yet handed out: `buffer[used..]` in bytes.
    buffer: [Block; BUFFER_BLOCKS],
    used: usize,
}

impl core::fmt::Debug for Prg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Prg({})", self.aes.backend())
    }
}

const BUFFER_BYTES: usize = BUFFER_BLOCKS * 16;

impl Prg {
    /// The PRG seeded with `seed` on [`Backend::active`].
    pub fn from_seed_block(seed: Block) -> Self {
        Self::with_aes(Aes::new(), seed)
    }

    /// The PRG seeded with `seed` on a given backend.
    pub fn with_backend(seed: Block, backend: Backend) -> Result<Self, Error> {
        Ok(Self::with_aes(Aes::with_backend(backend)?, seed))
    }

    fn with_aes(aes: Aes, seed: Block) -> Self {
        Prg {
            aes: FixedKeyAes::with_aes(aes, seed),
            counter: 0,
            buffer: [Block::ZERO; BUFFER_BLOCKS],
            used: BUFFER_BYTES,
        }
    }

    /// A PRG seeded from the operating system's randomness.
    pub fn from_os() -> Result<Self, Error> {
        Ok(Self::from_seed_block(os_random_block()?))
    }

    /// Fills `out` with pseudo-random blocks.
    pub fn fill_blocks(&mut self, out: &mut [Block]) {
        if self.used == BUFFER_BYTES {
            generate(&self.aes, &mut self.counter, out);
        } else {
            self.fill_bytes(bytemuck::cast_slice_mut(out));
        }
    }

    /// One pseudo-random block.
    pub fn random_block(&mut self) -> Block {
        let mut b = [Block::ZERO];
        self.fill_bytes(bytemuck::cast_slice_mut(&mut b));
        b[0]
    }

    /// Moves to keystream block `block`: the next draw starts there (the stream can be read in
    /// any order, as a public code's rows are).
    pub fn seek(&mut self, block: u128) {
        self.counter = block;
        self.used = BUFFER_BYTES;
    }

    /// `n` pseudo-random blocks.
    pub fn random_blocks(&mut self, n: usize) -> Vec<Block> {
        let mut v = vec![Block::ZERO; n];
        self.fill_blocks(&mut v);
        v
    }
}

/// Writes the keystream blocks `counter, counter + 1, ...` into `out` (counter mode, run by
/// run wherever the counter's low 64 bits wrap, so the count carries as a 128-bit one) and
/// advances the counter. A free function, so the PRG can refill its own buffer without
/// copying it.
fn generate(aes: &FixedKeyAes, counter: &mut u128, out: &mut [Block]) {
    let mut rest = out;
    while !rest.is_empty() {
        let to_wrap = (1u128 << 64) - u128::from(*counter as u64);
        let take = rest
            .len()
            .min(usize::try_from(to_wrap).unwrap_or(usize::MAX));
        let (run, tail) = rest.split_at_mut(take);
        aes.encrypt_counter(Block::new(*counter), run);
        *counter = counter.wrapping_add(take as u128);
        rest = tail;
    }
}

/// One block of operating-system randomness.
pub fn os_random_block() -> Result<Block, Error> {
    let mut seed = [0u8; 16];
    rand_core::OsRng
        .try_fill_bytes(&mut seed)
        .map_err(|e| Error::Entropy(e.to_string()))?;
    Ok(Block::from_bytes(seed))
}

impl RngCore for Prg {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, mut dest: &mut [u8]) {
        // Drain what is buffered, then whole batches straight from the generator, then refill
        // the buffer for the tail.
        let buffered = bytemuck::cast_slice::<Block, u8>(&self.buffer);
        let take = dest.len().min(BUFFER_BYTES - self.used);
        dest[..take].copy_from_slice(&buffered[self.used..self.used + take]);
        self.used += take;
        dest = &mut dest[take..];
        // The batch is made only for requests of a whole buffer or more: a word's worth
        // (next_u64) no longer clears a buffer's bytes on the stack first.
        if dest.len() >= BUFFER_BYTES {
            let mut batch = [Block::ZERO; BUFFER_BLOCKS];
            while dest.len() >= BUFFER_BYTES {
                generate(&self.aes, &mut self.counter, &mut batch);
                dest[..BUFFER_BYTES].copy_from_slice(bytemuck::cast_slice(&batch));
                dest = &mut dest[BUFFER_BYTES..];
            }
        }
        if !dest.is_empty() {
            generate(&self.aes, &mut self.counter, &mut self.buffer);
            dest.copy_from_slice(&bytemuck::cast_slice::<Block, u8>(&self.buffer)[..dest.len()]);
            self.used = dest.len();
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for Prg {}

impl SeedableRng for Prg {
    type Seed = [u8; 16];
    fn from_seed(seed: [u8; 16]) -> Self {
        Prg::from_seed_block(Block::from_bytes(seed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{ProptestConfig, any, prop_assert_eq, proptest};
    use rand_core::RngCore;

    #[test]
    fn keystream_is_aes_of_the_counter() {
        let seed = Block::new(0x1234);
        let mut prg = Prg::with_backend(seed, Backend::Portable).unwrap();
        let got = prg.random_blocks(3);
        let aes = FixedKeyAes::with_backend(seed, Backend::Portable).unwrap();
        for (j, b) in got.iter().enumerate() {
            assert_eq!(*b, aes.encrypt_block(Block::new(j as u128)));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Any mix of draw sizes yields the same stream, on every backend.
        #[test]
        fn stream_does_not_depend_on_draw_sizes(seed in any::<u128>(), sizes in proptest::collection::vec(0usize..1500, 1..8)) {
            let total: usize = sizes.iter().sum();
            let mut whole = vec![0u8; total];
            Prg::with_backend(Block::new(seed), Backend::Portable).unwrap().fill_bytes(&mut whole);
            for backend in Backend::available() {
                let mut prg = Prg::with_backend(Block::new(seed), backend).unwrap();
                let mut parts = Vec::new();
                for (k, &n) in sizes.iter().enumerate() {
                    if k % 2 == 0 && n % 16 == 0 {
                        let blocks = prg.random_blocks(n / 16);
                        parts.extend_from_slice(bytemuck::cast_slice(&blocks));
                    } else {
                        let mut v = vec![0u8; n];
                        prg.fill_bytes(&mut v);
                        parts.extend_from_slice(&v);
                    }
                }
                prop_assert_eq!(&parts, &whole, "backend {}", backend);
            }
        }
    }

    #[test]
    fn seek_reads_the_stream_from_any_block() {
        let mut whole = Prg::from_seed_block(Block::new(7));
        let stream = whole.random_blocks(200);
        let mut prg = Prg::from_seed_block(Block::new(7));
        prg.random_block();
        for at in [150, 3, 0, 64, 130] {
            prg.seek(at as u128);
            assert_eq!(prg.random_blocks(50), &stream[at..at + 50], "at {at}");
        }
    }

    #[test]
    fn the_counter_carries_across_the_low_word() {
        // Block j of the stream is AES(j) for a 128-bit j, also where the low 64 bits wrap.
        let seed = Block::new(0x5eed);
        let aes = FixedKeyAes::with_backend(seed, Backend::Portable).unwrap();
        for backend in Backend::available() {
            let mut prg = Prg::with_backend(seed, backend).unwrap();
            let start = (5u128 << 64) - 70;
            prg.seek(start);
            let got = prg.random_blocks(150);
            for (j, b) in got.iter().enumerate() {
                let want = aes.encrypt_block(Block::new(start + j as u128));
                assert_eq!(*b, want, "{backend} block {j}");
            }
        }
    }

    #[test]
    fn os_seeds_differ() {
        assert_ne!(os_random_block().unwrap(), os_random_block().unwrap());
    }
}
