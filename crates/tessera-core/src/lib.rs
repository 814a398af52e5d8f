//! Tessera's primitives, the layer every protocol is built on: [`Block`], batched AES-128 with
//! run-time backend dispatch ([`aes`]), correlation-robust hashes over a fixed-key permutation
//! ([`hash`]), an AES-CTR PRG ([`prg`]), bit-matrix transposition ([`transpose`]) and
//! multiplication in GF(2^128) ([`gf128`]), batched arithmetic in the AES field GF(2^8)
//! ([`gf256`]), domain-separated hashing for commitments ([`digest`]), and behind [`hazmat`] the
//! kernels of the garbling engine and the OT providers (slot arrays and their gate kernels,
//! free-XOR steps, sparse GF(2) products, constant-time writes at a secret position, cache
//! hints).
//!
//! Every hot function takes slices: batching independent AES calls is what keeps the pipelined
//! AES units busy (VASA, ACSAC 2021, §2.1 and §4.2). `unsafe` code lives
//! only in the backend modules that use intrinsics or target features (`aes::x86`,
//! `transpose::x86`, `gf128`, `gf256`, `sparse`, `select`, `steps`, `hint`).

#![deny(missing_docs)]

pub mod aes;
mod block;
pub mod digest;
mod error;
pub mod files;
pub mod gf128;
pub mod gf256;
pub mod hash;
pub mod hazmat;
mod hint;
pub mod prg;
mod select;
mod simd;
mod slots;
mod sparse;
mod steps;
pub mod transpose;

pub use aes::{Aes, Backend, FixedKeyAes, RoundKeys};
pub use block::Block;
pub use error::{Error, Failure, Fault};
pub use hash::FixedKeyHash;
pub use prg::Prg;
