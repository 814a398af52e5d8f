//! The registry of online protocols (Damgård and Zakarias, "Fast Oblivious AES"): each fixes the code,
//! how many AES blocks one codeword carries and how the MAC check combines openings. Parsing,
//! file headers, the command line and the tests all read it from here.

use crate::code::{Encoding, N, ReedSolomon};

/// An oblivious-AES protocol of the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// §1, Fig. 5: MiniMac's own code (85 data bytes of 255, systematic), 5 blocks per
    /// codeword, one opening per AES round, tables whose entries are representations of
    /// SRMC·(0, .., S(x), .., 0).
    One,
    /// §2: no online multiplication, so the code only needs distance: 240 data bytes of 255
    /// (distance 16), 15 blocks per codeword, otherwise as Protocol 1.
    Two,
    /// §3: Protocol 2's codewords, but table entries of one byte, S(x) + v, additively shared
    /// with pairwise unconditional MACs (8-byte keys); the masked S-box outputs are opened
    /// and checked at once, ShiftRows and MixColumns applied to them in the clear and
    /// [[SRMC·v]] added: one more round per AES round, about 60 times less pre-processing.
    Three,
}

/// What a protocol's table entries are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    /// Representations of the round map's image of the S-box output (Protocols 1 and 2).
    Reps,
    /// Bytes S(x) + v with pairwise MACs (Protocol 3).
    Bytes,
}

impl Protocol {
    /// Every protocol.
    pub const ALL: [Protocol; 3] = [Protocol::One, Protocol::Two, Protocol::Three];

    /// The protocol's number in the seed, on the command line and in files.
    pub const fn number(self) -> u8 {
        match self {
            Protocol::One => 1,
            Protocol::Two => 2,
            Protocol::Three => 3,
        }
    }

    /// The protocol with this number.
    pub fn from_number(n: u8) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.number() == n)
    }

    /// Data bytes per codeword.
    pub const fn data_len(self) -> usize {
        match self {
            Protocol::One => 85,
            Protocol::Two | Protocol::Three => 240,
        }
    }

    /// AES blocks per codeword.
    pub const fn blocks_per_word(self) -> usize {
        match self {
            Protocol::One => 5,
            Protocol::Two | Protocol::Three => 15,
        }
    }

    /// The encoding: systematic for both, the faster with precomputed matrices (see
    /// [`crate::code`]); the code, and so the security, does not depend on it.
    pub const fn encoding(self) -> Encoding {
        Encoding::Systematic
    }

    /// What the table entries are.
    pub const fn tables(self) -> Tables {
        match self {
            Protocol::One | Protocol::Two => Tables::Reps,
            Protocol::Three => Tables::Bytes,
        }
    }

    /// The code.
    pub fn code(self) -> &'static ReedSolomon {
        ReedSolomon::get(self.data_len(), self.encoding())
    }

    /// How many independent random combinations the batched MAC check uses: an error that
    /// survives the codeword check is a non-zero codeword, non-zero in at least d positions;
    /// one combination with random coefficient vectors leaves it undetected with probability
    /// at most (2/256)^d, c combinations at most ((1 + 255·2^{-8(c-1)})/256)^d ≈ 2^{-8d}.
    /// One for d = 171 (2^-1197), two for d = 16 (about 2^-127.9).
    pub const fn combinations(self) -> usize {
        if 7 * (N - self.data_len() + 1) >= 128 {
            1
        } else {
            2
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.number())
    }
}
