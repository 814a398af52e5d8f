//! Oblivious AES for n parties, actively secure against a dishonest majority, from
//! pre-processed masked S-box tables: Damgård and Zakarias, "Fast Oblivious AES: a dedicated
//! application of the MiniMac protocol".
//!
//! n parties hold additive shares of an AES-128 key that none of them knows; all know the
//! plaintexts and all learn the ciphertexts; a cheating majority cannot make an honest party
//! accept a wrong result. The pieces, in the order data flows:
//!
//! - [`code`]: Reed-Solomon codes of length 255 over GF(2^8) (the arithmetic is
//!   [`tessera_core::gf256`], portable or GFNI);
//! - [`rep`]: one party's share of a MiniMac representation (codeword and MAC shares);
//! - [`layout`]: AES's state, round maps and key schedule in the codeword's slots;
//! - [`protocol`]: the registry of protocols;
//! - [`prep`]: the trusted dealer, its files and their checks;
//! - [`exchange`]: the one I/O operation the protocol needs, over a `tessera_net::Network`;
//! - [`online`]: the online phase of Protocols 1-3 and their MAC checks.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod code;
mod error;
pub mod exchange;
pub mod layout;
pub mod online;
pub mod prep;
pub mod protocol;
pub mod rep;

pub use error::{Cheat, Error, PrepError};
pub use exchange::links;
pub use online::{Encryption, Key, Party, RoundKeys};
pub use prep::{Material, Shape, claim, deal, deal_buffers, deal_in_memory};
pub use protocol::Protocol;
