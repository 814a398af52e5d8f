//! Tessera's lattice arithmetic for linear layers: the RLWE encryption that Cheetah (Huang,
//! Lu, Hong and Ding, USENIX Security 2022) evaluates convolutions, batch normalisation and
//! fully connected layers under, on shares in Z_2^ℓ.
//!
//! - [`Params`]: the ring Z[X]/(X^N + 1), N = 4096 or 8192, a ciphertext modulus of NTT-friendly
//!   primes within the Homomorphic Encryption Security Standard's bound for 128 bits
//!   ([`SECURE_128`]), and the plaintext modulus 2^ℓ;
//! - [`RnsPoly`]: polynomials modulo each prime, transformed by `tfhe-ntt` (measured against a
//!   Harvey-style transform of our own in `benches/ntt.rs`);
//! - [`SecretKey`], [`PublicKey`], [`encrypt`] (symmetric, c1 from a seed: Cheetah's client
//!   sends half a ciphertext), [`decrypt`], and on [`Ciphertext`] the server's products by
//!   plaintext polynomials, additions of plaintexts, re-randomisation with noise flooding and
//!   dropping primes.
//!
//! No I/O and no knowledge of networks: the protocols that use it live in `tessera-protocols`.
//! Words from a peer enter through [`decrypt_answer`] and
//! [`SeededCiphertext::from_parts`], which check their number and range.

#![deny(missing_docs)]

mod arith;
mod budget;
mod context;
pub mod conv;
mod error;
pub mod fc;
mod level;
pub mod linear;
mod params;
mod poly;
mod rlwe;
pub mod sample;
pub mod wire;

pub use budget::{AnswerPlan, FLOOD_SECURITY, Rounding};
pub use context::Context;
pub use error::Error;
pub use params::{ParamSpec, Params, SECURE_128};
pub use poly::{Form, RnsPoly};
pub use rlwe::{
    Ciphertext, Plain, PublicKey, SecretKey, SeededCiphertext, decrypt, decrypt_answer, encrypt,
};
