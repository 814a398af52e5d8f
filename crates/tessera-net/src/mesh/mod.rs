//! Building a [`crate::Network`]: the in-memory mesh for tests and single-process runs
//! ([`memory`]), and the TCP mesh, optionally under TLS with pinned certificates ([`tcp`],
//! [`tls`]).

pub mod memory;
mod setup;
pub mod tcp;
pub mod tls;
