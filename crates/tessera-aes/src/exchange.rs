//! How the online protocol talks: every step is one round in which each party sends one
//! message to every peer and receives one of known length from each, through the network's
//! shared [`tessera_net::exchange::Exchange`], so the protocol ([`crate::online`]) has no I/O
//! of its own; it runs over a [`Network`]'s links ([`links`]: memory, TCP or TLS meshes) or,
//! in the cheating tests, over an [`tessera_net::exchange::Editor`]'s view of them.

use tessera_net::exchange::Links;
use tessera_net::{Network, Space};

/// The oblivious-AES messages.
pub mod kinds {
    use tessera_net::Kind;
    /// The session digest and party id of each party's pre-processing.
    pub const HELLO: Kind = Kind::new(1, "oaes hello");
    /// Masked key shares.
    pub const INPUT: Kind = Kind::new(2, "oaes key input");
    /// Codeword shares of masked states and keys.
    pub const OPEN: Kind = Kind::new(3, "oaes opening");
    /// Commitments to the MAC check's values.
    pub const COMMIT: Kind = Kind::new(4, "oaes MAC-check commitment");
    /// The MAC check's values, opened.
    pub const REVEAL: Kind = Kind::new(5, "oaes MAC-check opening");
    /// Codeword shares of the ciphertexts, and a commitment to the MAC key and MACs.
    pub const OUTPUT: Kind = Kind::new(6, "oaes output");
    /// The MAC key and output MACs, opened.
    pub const OUTPUT_CHECK: Kind = Kind::new(7, "oaes output check");
    /// Protocol 3: table entries looked up, with a MAC for the recipient.
    pub const TABLE: Kind = Kind::new(8, "oaes table entries");
}

/// The space oblivious-AES messages travel in.
pub const SPACE: Space = Space::new(1);

/// A network's links for oblivious AES: every link in [`SPACE`].
pub fn links(net: &mut Network) -> Links<'_, 'static> {
    Links::in_space(net, SPACE)
}
