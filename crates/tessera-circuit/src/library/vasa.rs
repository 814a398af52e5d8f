//! The four benchmark circuits of VASA §5.2 and Table 8 (ACSAC 2021),
//! built here, with inputs drawn from a seed:
//!
//! | name | circuit | garbler's input | evaluator's input |
//! |---|---|---|---|
//! | `aes128x65` | [`aes128_expanded`] (ABY's AES: the key schedule left to the key's owner, 5120 AND gates), 65 SIMD instances | 65 expanded keys | 65 plaintexts |
//! | `sha1x63` | [`sha1_512`] (ABY's SHA-1 of a 512-bit input: two compressions, the second of the constant padding block), 63 SIMD instances | 63 first halves | 63 second halves |
//! | `scs-psi` | [`psi::scs_psi`], 1024 32-bit elements per side | sorted set, shuffle switches | sorted set |
//! | `phasing-psi` | [`psi::phasing_psi`], 1024 32-bit elements, 3 hashes, ε = 1.2, stash 1 | hash table, set | cuckoo table, stash |
//!
//! The AES and SHA-1 instances do the work of ABY's circuits in the paper's runs (§5.2): AES-128
//! under round keys the garbler expanded, and SHA-1 of a whole 512-bit message with its padding.

use super::psi::{self, PhasingHashing};
use super::{aes128_expanded, sha1_512};
use crate::simd::simd;
use crate::{Circuit, Error};
use tessera_core::{Aes, Block, Prg};

/// One benchmark: a circuit and an input for each party.
#[derive(Clone, Debug)]
pub struct Benchmark {
    /// Name as in the table above.
    pub name: &'static str,
    /// The circuit.
    pub circuit: Circuit,
    /// Input value 0 (garbler) and 1 (evaluator).
    pub inputs: [Vec<bool>; 2],
}

/// Names of [`benchmark`]'s circuits, in the order of VASA's Table 8.
pub const NAMES: [&str; 4] = ["aes128x65", "sha1x63", "scs-psi", "phasing-psi"];

/// Elements per set in the PSI benchmarks.
pub const PSI_ELEMENTS: usize = 1024;
/// Bits per element in the PSI benchmarks.
pub const PSI_BITS: u32 = 32;

/// The Phasing parameters of the benchmark: ε = 1.2, stash of 1, fixed hash seeds.
pub fn phasing_parameters() -> Result<PhasingHashing, Error> {
    PhasingHashing::new(PSI_ELEMENTS, PSI_BITS, 1.2, 1, [0x51, 0x52, 0x53])
}

fn random_bits(prg: &mut Prg, n: u32) -> Vec<bool> {
    let mut blocks = vec![tessera_core::Block::ZERO; (n as usize).div_ceil(128)];
    prg.fill_blocks(&mut blocks);
    (0..n as usize)
        .map(|k| (blocks[k / 128].as_u128() >> (k % 128)) & 1 == 1)
        .collect()
}

/// The round keys (FIPS-197 §5.2, round 0 first, each in FIPS-197 byte order) of `count`
/// random AES-128 keys, as the garbler of ABY's AES circuit expands its key before it inputs it.
fn expanded_keys(prg: &mut Prg, count: usize) -> Vec<bool> {
    let aes = Aes::new();
    let mut bits = Vec::with_capacity(count * 11 * 128);
    for _ in 0..count {
        let key: Block = prg.random_block();
        for round_key in aes.expand_key(key).0 {
            let bytes = round_key.to_bytes();
            bits.extend(
                bytes
                    .iter()
                    .flat_map(|&b| (0..8).map(move |k| (b >> k) & 1 == 1)),
            );
        }
    }
    bits
}

/// Two sets of [`PSI_ELEMENTS`] distinct nonzero [`PSI_BITS`]-bit elements sharing about a
/// quarter of their elements, each sorted ascending.
pub fn psi_sets(prg: &mut Prg) -> (Vec<u64>, Vec<u64>) {
    let mut draw = |count: usize| -> Vec<u64> {
        let mut out = std::collections::BTreeSet::new();
        while out.len() < count {
            let v = prg.random_block().low() & ((1 << PSI_BITS) - 1);
            if v != 0 {
                out.insert(v);
            }
        }
        out.into_iter().collect()
    };
    let pool = draw(2 * PSI_ELEMENTS);
    let shared = PSI_ELEMENTS / 4;
    let mut a: Vec<u64> = pool[..PSI_ELEMENTS].to_vec();
    let mut b: Vec<u64> = pool[PSI_ELEMENTS - shared..2 * PSI_ELEMENTS - shared].to_vec();
    a.sort_unstable();
    b.sort_unstable();
    (a, b)
}

/// Bits of `values`, `w` bits each, least significant first.
fn value_bits(values: &[u64], w: u32) -> Vec<bool> {
    values
        .iter()
        .flat_map(|&v| (0..w).map(move |k| (v >> k) & 1 == 1))
        .collect()
}

/// The benchmark called `name` with inputs from `prg`, or `None` if there is none by that name.
pub fn benchmark(name: &str, prg: &mut Prg) -> Option<Result<Benchmark, Error>> {
    let build = |prg: &mut Prg| -> Result<Benchmark, Error> {
        let (name, circuit, inputs) = match name {
            "aes128x65" => {
                let c = simd(&aes128_expanded()?, 65)?;
                let inputs = [expanded_keys(prg, 65), random_bits(prg, c.inputs[1])];
                ("aes128x65", c, inputs)
            }
            "sha1x63" => {
                let c = simd(&sha1_512()?, 63)?;
                let inputs = [random_bits(prg, c.inputs[0]), random_bits(prg, c.inputs[1])];
                ("sha1x63", c, inputs)
            }
            "scs-psi" => {
                let c = psi::scs_psi(PSI_ELEMENTS, PSI_BITS)?;
                let (a, b) = psi_sets(prg);
                let switches = psi::waksman_switches(2 * PSI_ELEMENTS - 1) as u32;
                let mut g = value_bits(&a, PSI_BITS);
                g.extend(random_bits(prg, switches));
                ("scs-psi", c, [g, value_bits(&b, PSI_BITS)])
            }
            _ => {
                let h = phasing_parameters()?;
                let c = psi::phasing_psi(&h)?;
                let (a, b) = psi_sets(prg);
                let g = h.garbler_input(&a)?;
                let (e, _) = h.evaluator_input(&b, prg.random_block().low())?;
                ("phasing-psi", c, [g, e])
            }
        };
        Ok(Benchmark {
            name,
            circuit,
            inputs,
        })
    };
    NAMES.contains(&name).then(|| build(prg))
}
