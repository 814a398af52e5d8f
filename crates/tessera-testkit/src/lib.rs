//! What the tests of Tessera's crates share: the seed of a test's sessions, so that a failing
//! run can be replayed ([`seed`]), and the runners of two and of n parties over memory, each
//! on its own thread and seeded session ([`two_parties`], [`parties`]), and the tamper harness
//! that edits any two-party protocol's frames on the wire ([`tamper`]); fixed test data
//! ([`numbers`]).
//!
//! A test that draws its seed prints it on standard error, which the test harness shows only
//! for a test that failed; `TESSERA_SEED=<the 32 hex digits> cargo test NAME` runs it again
//! with the same randomness at every party.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod tamper;

use tessera_core::{Block, Prg};
use tessera_net::{NetConfig, memory};
use tessera_protocols::{Session, SessionConfig};

/// The environment variable that fixes a test's seed.
pub const SEED_VARIABLE: &str = "TESSERA_SEED";

/// This test's seed: [`SEED_VARIABLE`] (32 hex digits) if it is set, else fresh from the
/// operating system; written to standard error either way.
///
/// # Panics
///
/// If the variable is set but is not 32 hex digits, or the operating system gives no
/// randomness.
pub fn seed() -> Block {
    let seed = match std::env::var(SEED_VARIABLE) {
        Ok(hex) => {
            parse_seed(&hex).unwrap_or_else(|| panic!("{SEED_VARIABLE}={hex}: not 32 hex digits"))
        }
        Err(_) => Prg::from_os()
            .expect("randomness from the operating system")
            .random_block(),
    };
    eprintln!("{SEED_VARIABLE}={} replays this run", show_seed(seed));
    seed
}

/// A seed as [`SEED_VARIABLE`] takes it: 32 hex digits.
pub fn show_seed(seed: Block) -> String {
    format!("{:032x}", u128::from(seed))
}

/// The seed written as [`show_seed`] writes it.
pub fn parse_seed(hex: &str) -> Option<Block> {
    let hex = hex.trim();
    if hex.len() != 32 {
        return None;
    }
    u128::from_str_radix(hex, 16).ok().map(Block::new)
}

/// Runs `f` as each of `n` parties of a session over memory, every party's randomness from
/// `config` (seeded or not), each on its own thread; the results in party order.
///
/// # Panics
///
/// If the memory network or a session cannot be set up, or `f` panics.
pub fn parties<T: Send, E: Send>(
    n: usize,
    config: SessionConfig,
    f: impl Fn(&mut Session) -> Result<T, E> + Sync,
) -> Vec<Result<T, E>> {
    let nets = memory::mesh(n, NetConfig::default()).expect("a memory mesh");
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .map(|net| {
                s.spawn(move || {
                    let mut session = Session::new(net, config).expect("a session");
                    f(&mut session)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a party's thread"))
            .collect()
    })
}

/// [`parties`] for two.
pub fn two_parties<T: Send, E: Send>(
    config: SessionConfig,
    f: impl Fn(&mut Session) -> Result<T, E> + Sync,
) -> [Result<T, E>; 2] {
    let mut out = parties(2, config, f).into_iter();
    match (out.next(), out.next()) {
        (Some(a), Some(b)) => [a, b],
        _ => unreachable!("two parties ran"),
    }
}

/// `n` numbers in [−1, 1) from `seed` (xorshift64): the same inputs and weights for a test on
/// every run, independent of the session's randomness.
pub fn numbers(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_shown_and_read_back() {
        let seed = Block::new(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        assert_eq!(parse_seed(&show_seed(seed)), Some(seed));
        assert_eq!(parse_seed("12"), None);
        assert_eq!(parse_seed(&"g".repeat(32)), None);
    }
}
