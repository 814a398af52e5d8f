//! Pre-processing from a trusted dealer, as the seed's own implementation makes it
//! (Damgård and Zakarias, "Fast Oblivious AES", §1.1 and Appendix A: one program writes every party's
//! material): per run, the global MAC key's shares, a masked input for every party's key
//! share, and per AES round the masks and tables of Fig. 5, for the key schedule and for every
//! codeword of blocks.
//!
//! **Trust.** The dealer sees the MAC key and every mask; whoever runs it must be trusted by
//! all parties and must not keep its state. Making the tables without a dealer is §4 of the
//! seed: a generic MiniMac (or SPDZ-like) pre-processing over GF(2^8) produces random ⟦R⟧
//! and ⟦L·R⟧ for linear maps L, then selects each table row with Φ_i = 1 − ((R_j − i)^255)
//! in MiniMac multiplications (255 multiplications per candidate row, 256 rows per table);
//! tessera does not do that.
//!
//! **Compression.** Parties 0..n−2 get a 16-byte seed from which every share of theirs is
//! derived on demand (AES-CTR, one block range per representation); party n−1 gets the
//! corrections, the only large file. Every party's shares are still uniformly random to the
//! others.
//!
//! **Files.** A 48-byte header (magic, version, protocol, seeded flag, parties, party, blocks,
//! session id, body length), the body (MAC key share, input mask, seed or representation
//! shares, and for Protocol 3 the party's pairwise MAC keys and byte-table entries:
//! [`Shape::entry_bytes`] each, 17 for two parties), and the SHA-256 digest of both. A party refuses a file
//! whose digest or length is wrong, that names another party, or that carries another session
//! id than its peers' (checked at the start of a run), and it refuses to use a file twice: the
//! first run creates `FILE.used` beside it ([`claim`]).

use crate::code::N;
use crate::error::{Error, PrepError};
use crate::layout::{self, BLOCK, KEY_SBOX_INPUTS, ROUNDS};
use crate::protocol::{Protocol, Tables};
use crate::rep::{REP_BYTES, Rep, xor};
use rand_core::RngCore;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use tessera_core::hazmat::hint::{huge_vec, prefetch};
use tessera_core::{Block, FixedKeyAes, Prg, gf256};

/// Table entries: one per byte value.
pub const ENTRIES: usize = 256;
/// The most parties a dealing serves.
pub const MAX_PARTIES: usize = 64;
/// The most blocks one dealing serves.
pub const MAX_BLOCKS: usize = 1 << 20;
/// Header bytes.
pub const HEADER_BYTES: usize = 48;
const MAGIC: &[u8; 8] = b"TSRAOAES";
const VERSION: u16 = 1;
/// Bytes of a pairwise MAC and of its keys (Protocol 3): 64-bit unconditional security.
pub const PAIR_MAC: usize = 8;
/// AES blocks that one representation's seeded shares take.
const REP_AES_BLOCKS: usize = REP_BYTES.div_ceil(16);

/// What a dealing is for; every party's header holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The online protocol.
    pub protocol: Protocol,
    /// The number of parties.
    pub parties: usize,
    /// AES blocks the dealing serves.
    pub blocks: usize,
}

impl Shape {
    /// A checked shape.
    pub fn new(protocol: Protocol, parties: usize, blocks: usize) -> Result<Shape, Error> {
        if !(2..=MAX_PARTIES).contains(&parties) {
            return Err(Error::Usage(format!(
                "{parties} parties: oblivious AES needs 2 to {MAX_PARTIES}"
            )));
        }
        if !(1..=MAX_BLOCKS).contains(&blocks) {
            return Err(Error::Usage(format!(
                "{blocks} blocks: a dealing serves 1 to {MAX_BLOCKS}"
            )));
        }
        Ok(Shape {
            protocol,
            parties,
            blocks,
        })
    }

    /// Codewords of blocks.
    pub fn words(&self) -> usize {
        self.blocks.div_ceil(self.protocol.blocks_per_word())
    }

    /// Tables per codeword and round: one per state byte.
    pub fn tables_per_word(&self) -> usize {
        BLOCK * self.protocol.blocks_per_word()
    }

    /// Representations in the key schedule's material of one round: its mask, the mask's
    /// linear image, then four tables (Protocols 1, 2) or the representation of the S-box
    /// masks' image (Protocol 3).
    fn key_round(&self) -> usize {
        match self.protocol.tables() {
            Tables::Reps => 2 + 4 * ENTRIES,
            Tables::Bytes => 3,
        }
    }

    /// Representations per codeword and round: the mask, then its tables (Protocols 1, 2) or
    /// the representation of SRMC·v (Protocol 3).
    fn word_round(&self) -> usize {
        match self.protocol.tables() {
            Tables::Reps => 1 + self.tables_per_word() * ENTRIES,
            Tables::Bytes => 2,
        }
    }

    /// Party `p`'s masked key input.
    pub fn input(&self, p: usize) -> usize {
        p
    }

    /// The key-schedule mask of round `r`.
    pub fn key_mask(&self, r: usize) -> usize {
        self.parties + r * self.key_round()
    }

    /// The linear image of that mask.
    pub fn key_linear(&self, r: usize) -> usize {
        self.key_mask(r) + 1
    }

    /// Protocols 1, 2: entry `s` of key-schedule table `t` of round `r`.
    pub fn key_table(&self, r: usize, t: usize, s: u8) -> usize {
        self.key_mask(r) + 2 + t * ENTRIES + s as usize
    }

    /// Protocol 3: the S-box masks' image in the next round key, in round `r`.
    pub fn key_sbox_masks(&self, r: usize) -> usize {
        self.key_mask(r) + 2
    }

    /// The mask of codeword `w` in round `r`.
    pub fn word_mask(&self, r: usize, w: usize) -> usize {
        self.parties + ROUNDS * self.key_round() + (r * self.words() + w) * self.word_round()
    }

    /// Protocols 1, 2: entry `s` of the table of state byte `q` of codeword `w` in round `r`.
    pub fn word_table(&self, r: usize, w: usize, q: usize, s: u8) -> usize {
        self.word_mask(r, w) + 1 + q * ENTRIES + s as usize
    }

    /// Protocol 3: SRMC·v (SR·v in the last round) of codeword `w` in round `r`.
    pub fn word_sbox_masks(&self, r: usize, w: usize) -> usize {
        self.word_mask(r, w) + 1
    }

    /// Representations in all.
    pub fn reps(&self) -> usize {
        self.word_mask(ROUNDS, 0)
    }

    /// Protocol 3: entry `s` of byte table `t` of the key schedule in round `r`.
    pub fn key_entry(&self, r: usize, t: usize, s: u8) -> usize {
        (r * 4 + t) * ENTRIES + s as usize
    }

    /// Protocol 3: entry `s` of the byte table of state byte `q` of codeword `w` in round `r`.
    pub fn word_entry(&self, r: usize, w: usize, q: usize, s: u8) -> usize {
        let first = ROUNDS * 4 * ENTRIES;
        first + ((r * self.words() + w) * self.tables_per_word() + q) * ENTRIES + s as usize
    }

    /// Protocol 3: byte-table entries in all (none for the others).
    pub fn entries(&self) -> usize {
        match self.protocol.tables() {
            Tables::Reps => 0,
            Tables::Bytes => self.word_entry(ROUNDS, 0, 0, 0),
        }
    }

    /// Protocol 3: bytes of one entry in a party's file: its share, then a MAC of it for every
    /// other party, then a key for every other party's share.
    pub fn entry_bytes(&self) -> usize {
        1 + 2 * PAIR_MAC * (self.parties - 1)
    }

    /// Body bytes of party `party`'s file.
    pub fn body_bytes(&self, party: usize) -> u64 {
        let fixed = (N + BLOCK) as u64;
        let shares = if party + 1 == self.parties {
            self.reps() as u64 * REP_BYTES as u64
        } else {
            16
        };
        let tables = match self.protocol.tables() {
            Tables::Reps => 0,
            Tables::Bytes => {
                (PAIR_MAC * (self.parties - 1)) as u64
                    + self.entries() as u64 * self.entry_bytes() as u64
            }
        };
        fixed + shares + tables
    }

    /// File bytes of party `party`.
    pub fn file_bytes(&self, party: usize) -> u64 {
        HEADER_BYTES as u64 + self.body_bytes(party) + 32
    }
}

/// A file's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The dealing's shape.
    pub shape: Shape,
    /// The party the file is for.
    pub party: usize,
    /// The dealing's random id.
    pub session: [u8; 16],
}

impl Header {
    fn to_bytes(self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        h[..8].copy_from_slice(MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10] = self.shape.protocol.number();
        h[11] = u8::from(self.party + 1 < self.shape.parties);
        h[12..14].copy_from_slice(&(self.shape.parties as u16).to_le_bytes());
        h[14..16].copy_from_slice(&(self.party as u16).to_le_bytes());
        h[16..20].copy_from_slice(&(self.shape.blocks as u32).to_le_bytes());
        h[24..40].copy_from_slice(&self.session);
        h[40..48].copy_from_slice(&self.shape.body_bytes(self.party).to_le_bytes());
        h
    }

    fn parse(h: &[u8], path: &str) -> Result<Header, PrepError> {
        let format = |what: &str| PrepError::Format {
            path: path.to_string(),
            what: what.to_string(),
        };
        if h.len() < HEADER_BYTES || &h[..8] != MAGIC {
            return Err(format("no magic number"));
        }
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]) as usize;
        if u16_at(8) != VERSION as usize {
            return Err(format(&format!("version {}", u16_at(8))));
        }
        let protocol = Protocol::from_number(h[10])
            .ok_or_else(|| format(&format!("protocol {} does not exist", h[10])))?;
        let (parties, party) = (u16_at(12), u16_at(14));
        let blocks = u32::from_le_bytes([h[16], h[17], h[18], h[19]]) as usize;
        let shape = Shape::new(protocol, parties, blocks).map_err(|e| format(&e.to_string()))?;
        if party >= parties {
            return Err(format(&format!("party {party} of {parties}")));
        }
        if h[11] != u8::from(party + 1 < parties) || h[20..24] != [0; 4] {
            return Err(format("reserved fields are set"));
        }
        let header = Header {
            shape,
            party,
            session: h[24..40].try_into().unwrap_or_default(),
        };
        let body = u64::from_le_bytes(h[40..48].try_into().unwrap_or_default());
        if body != shape.body_bytes(party) {
            return Err(format(&format!(
                "the body length {body} does not fit the shape (want {})",
                shape.body_bytes(party)
            )));
        }
        Ok(header)
    }

    /// What the parties compare at the start of a run: the same dealing and shape.
    pub fn session_digest(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"tessera-oaes session");
        h.update([self.shape.protocol.number()]);
        h.update((self.shape.parties as u64).to_le_bytes());
        h.update((self.shape.blocks as u64).to_le_bytes());
        h.update(self.session);
        h.finalize().into()
    }
}

/// Where a party's representation shares come from.
enum Shares {
    /// Derived from a seed: representation i is AES_seed(32·i), ..., AES_seed(32·i + 31).
    Seeded(FixedKeyAes),
    /// Stored: representation i at byte offset `at` + [`REP_BYTES`]·i of the file.
    Explicit {
        /// Where the first one starts.
        at: usize,
    },
}

/// The seeded shares of representation `index` into `out` ([`REP_BYTES`] bytes), by blocks
/// `scratch` (one representation's worth).
fn seeded_rep(aes: &FixedKeyAes, index: usize, scratch: &mut [Block], out: &mut [u8]) {
    for (j, b) in scratch.iter_mut().enumerate() {
        *b = Block::from((index * REP_AES_BLOCKS + j) as u128);
    }
    aes.encrypt_blocks(scratch);
    let bytes: &[u8] = bytemuck::cast_slice(scratch);
    out[..REP_BYTES].copy_from_slice(&bytes[..REP_BYTES]);
}

/// One party's pre-processing, loaded: the file's bytes, and where its parts start.
pub struct Material {
    header: Header,
    bytes: Vec<u8>,
    shares: Shares,
    /// Protocol 3: where the pairwise MAC keys start; the entries follow them.
    tables_at: usize,
}

impl std::fmt::Debug for Material {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Material")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// Where peer `l`'s MAC or key sits among party `me`'s per-peer fields.
pub fn peer_slot(me: usize, l: usize) -> usize {
    if l < me { l } else { l - 1 }
}

impl Material {
    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// This party's share of the global MAC key.
    pub fn alpha(&self) -> &[u8; N] {
        self.bytes[HEADER_BYTES..HEADER_BYTES + N]
            .try_into()
            .unwrap_or(&[0; N])
    }

    /// This party's input mask (the data of its input representation, block 0).
    pub fn input_mask(&self) -> &[u8; BLOCK] {
        let at = HEADER_BYTES + N;
        self.bytes[at..at + BLOCK].try_into().unwrap_or(&[0; BLOCK])
    }

    /// Adds the representations `indices` into `out`; `scratch` holds seeded shares.
    pub fn add_reps(&self, indices: &[usize], out: &mut Rep, scratch: &mut Vec<Block>) {
        match &self.shares {
            Shares::Explicit { at } => {
                // Entries lie at random places in a large buffer: ask for each a few entries
                // ahead, so that the misses overlap.
                const AHEAD: usize = 16;
                let rep = |i: usize| &self.bytes[at + i * REP_BYTES..at + (i + 1) * REP_BYTES];
                for &i in indices.iter().take(AHEAD) {
                    prefetch(rep(i));
                }
                for (n, &i) in indices.iter().enumerate() {
                    if let Some(&next) = indices.get(n + AHEAD) {
                        prefetch(rep(next));
                    }
                    out.add_bytes(rep(i));
                }
            }
            Shares::Seeded(aes) => {
                scratch.clear();
                scratch.extend(indices.iter().flat_map(|&i| {
                    (0..REP_AES_BLOCKS).map(move |j| Block::from((i * REP_AES_BLOCKS + j) as u128))
                }));
                aes.encrypt_blocks(scratch);
                for rep in scratch.chunks_exact(REP_AES_BLOCKS) {
                    out.add_bytes(bytemuck::cast_slice(rep));
                }
            }
        }
    }

    /// Protocol 3: this party's key for checking peer `l`'s MACs (the same for every entry).
    pub fn pair_key(&self, l: usize) -> &[u8] {
        let at = self.tables_at + PAIR_MAC * peer_slot(self.header.party, l);
        &self.bytes[at..at + PAIR_MAC]
    }

    /// Protocol 3: byte-table entry `e` as this party holds it: its share, then a MAC of the
    /// share for every peer, then a key for every peer's share (peers in increasing order).
    pub fn entry(&self, e: usize) -> &[u8] {
        let stride = self.header.shape.entry_bytes();
        let at = self.tables_at + PAIR_MAC * (self.header.shape.parties - 1) + e * stride;
        &self.bytes[at..at + stride]
    }

    /// Parses a file's bytes (`name` for errors); checks length, digest and fields.
    pub fn from_bytes(bytes: Vec<u8>, name: &str) -> Result<Material, PrepError> {
        let header = Header::parse(&bytes, name)?;
        let shape = header.shape;
        let want = shape.file_bytes(header.party);
        let got = bytes.len() as u64;
        if got < want {
            return Err(PrepError::Truncated {
                path: name.to_string(),
                got,
                want,
            });
        }
        if got > want {
            return Err(PrepError::Corrupt {
                path: name.to_string(),
                what: format!("{got} bytes, {} more than the header announces", got - want),
            });
        }
        let (content, digest) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(content)[..] != digest[..] {
            return Err(PrepError::Corrupt {
                path: name.to_string(),
                what: "the SHA-256 digest does not match the contents".into(),
            });
        }
        let at = HEADER_BYTES + N + BLOCK;
        let (shares, tables_at) = if header.party + 1 < shape.parties {
            let seed: [u8; 16] = bytes[at..at + 16].try_into().unwrap_or_default();
            (Shares::Seeded(FixedKeyAes::new(Block::from(seed))), at + 16)
        } else {
            (Shares::Explicit { at }, at + shape.reps() * REP_BYTES)
        };
        Ok(Material {
            header,
            bytes,
            shares,
            tables_at,
        })
    }

    /// Reads and checks the file at `path`; the party it is for must be `party`.
    pub fn load(path: &Path, party: usize) -> Result<Material, PrepError> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| PrepError::Io {
            path: name.clone(),
            message: e.to_string(),
        };
        let mut file = tessera_core::files::open(path).map_err(io)?;
        let mut head = [0u8; HEADER_BYTES];
        let len = file.metadata().map_err(io)?.len();
        std::io::Read::read_exact(&mut file, &mut head).map_err(|_| PrepError::Format {
            path: name.clone(),
            what: format!("{len} bytes, shorter than a header"),
        })?;
        let header = Header::parse(&head, &name)?;
        if header.party != party {
            return Err(PrepError::OtherParty {
                path: name,
                file: header.party,
                run: party,
            });
        }
        let want = header.shape.file_bytes(party);
        if len < want {
            return Err(PrepError::Truncated {
                path: name,
                got: len,
                want,
            });
        }
        if len > want {
            return Err(PrepError::Corrupt {
                path: name,
                what: format!("{len} bytes, {} more than the header announces", len - want),
            });
        }
        // The length is the header's, so this allocation is what the file holds (a file that
        // grows while it is read is cut at the announced length, and its digest fails).
        let mut bytes = huge_vec(want as usize);
        bytes.extend_from_slice(&head);
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, want - HEADER_BYTES as u64),
            &mut bytes,
        )
        .map_err(io)?;
        Material::from_bytes(bytes, &name)
    }
}

/// Marks the file at `path` as used by creating `FILE.used-SESSION` beside it (SESSION the
/// dealing's id in hex): atomically, so of two runs on one file one wins, and per dealing, so
/// a fresh dealing written where an old one was used is not taken for it. Refuses a file whose
/// dealing already has a marker.
pub fn claim(path: &Path, session: &[u8; 16]) -> Result<PathBuf, PrepError> {
    let hex: String = session.iter().map(|b| format!("{b:02x}")).collect();
    let mut marker = path.as_os_str().to_owned();
    marker.push(format!(".used-{hex}"));
    let marker = PathBuf::from(marker);
    let shown = marker.display().to_string();
    match tessera_core::files::create_secret(&marker) {
        Ok(mut f) => {
            writeln!(f, "session {hex} used by pid {}", std::process::id()).map_err(|e| {
                PrepError::Io {
                    path: shown.clone(),
                    message: e.to_string(),
                }
            })?;
            Ok(marker)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(PrepError::Reused {
            path: path.display().to_string(),
            marker: shown,
        }),
        Err(e) => Err(PrepError::Io {
            path: shown,
            message: e.to_string(),
        }),
    }
}

/// Where the dealer writes: every party's sink and digest, and the seeded parties' keys.
struct Out<'a, 'b> {
    sinks: &'a mut [&'b mut dyn Write],
    hashers: Vec<Sha256>,
    seeds: Vec<FixedKeyAes>,
    index: usize,
    scratch: Vec<Block>,
}

impl Out<'_, '_> {
    fn put(&mut self, p: usize, bytes: &[u8]) -> std::io::Result<()> {
        self.hashers[p].update(bytes);
        self.sinks[p].write_all(bytes)
    }

    /// The next representation, of `value` (codeword ‖ MAC): the seeded parties' shares are
    /// their seeds' output, the last party's the difference.
    fn emit(&mut self, value: &[u8; REP_BYTES]) -> std::io::Result<()> {
        let mut last = *value;
        let mut share = [0u8; REP_BYTES];
        for aes in &self.seeds {
            seeded_rep(aes, self.index, &mut self.scratch, &mut share);
            xor(&mut last, &share);
        }
        self.index += 1;
        let n = self.sinks.len();
        self.put(n - 1, &last)
    }

    /// Protocol 3's tables, one per (mask R, output mask v): every party's pairwise MAC keys,
    /// then per entry s, shares of S(s + R) + v with a MAC of each share under every other
    /// party's key ([`Shape::entry_bytes`]).
    fn byte_tables(&mut self, rng: &mut Prg, tables: &[(u8, u8)]) -> std::io::Result<()> {
        let n = self.sinks.len();
        // keys[l][m]: party l's key for checking party m's shares.
        let mut keys = vec![[0u8; PAIR_MAC]; n * n];
        rng.fill_bytes(keys.as_flattened_mut());
        for l in 0..n {
            for m in (0..n).filter(|&m| m != l) {
                let k = keys[l * n + m];
                self.put(l, &k)?;
            }
        }
        let stride = 1 + 2 * PAIR_MAC * (n - 1);
        let mut entry = vec![0u8; n * stride];
        let mut shares = vec![0u8; n];
        let mut b = vec![[0u8; PAIR_MAC]; n * n];
        for &(r, v) in tables {
            for sbox in layout::shifted_sbox(r) {
                rng.fill_bytes(&mut shares[..n - 1]);
                let value = sbox ^ v;
                shares[n - 1] = shares[..n - 1].iter().fold(value, |a, x| a ^ x);
                rng.fill_bytes(b.as_flattened_mut());
                for (m, e) in entry.chunks_exact_mut(stride).enumerate() {
                    e[0] = shares[m];
                    let (macs, own_keys) = e[1..].split_at_mut(PAIR_MAC * (n - 1));
                    for l in (0..n).filter(|&l| l != m) {
                        let slot = peer_slot(m, l);
                        // m's share under l's key: a_l ∗ (x_m, .., x_m) + b.
                        let mac = &mut macs[slot * PAIR_MAC..(slot + 1) * PAIR_MAC];
                        mac.copy_from_slice(&b[l * n + m]);
                        gf256::mul_acc(mac, &keys[l * n + m], shares[m]);
                        // m's one-time key for l's share.
                        own_keys[slot * PAIR_MAC..(slot + 1) * PAIR_MAC]
                            .copy_from_slice(&b[m * n + l]);
                    }
                }
                for (m, e) in entry.chunks_exact(stride).enumerate() {
                    self.put(m, e)?;
                }
            }
        }
        Ok(())
    }

    /// A table: entry s represents S(s + r)·unit, where `unit` is C(u) ‖ α ∗ C(u).
    fn table(&mut self, unit: &[u8; REP_BYTES], r: u8) -> std::io::Result<()> {
        for c in layout::shifted_sbox(r) {
            let mut entry = [0u8; REP_BYTES];
            gf256::mul_acc(&mut entry, unit, c);
            self.emit(&entry)?;
        }
        Ok(())
    }
}

/// The dealer: writes every party's material for `shape` to `sinks` (one per party), with
/// randomness from `rng` (seed it from the operating system: [`Prg::from_os`]); returns the
/// session id.
pub fn deal(
    shape: Shape,
    rng: &mut Prg,
    sinks: &mut [&mut dyn Write],
) -> Result<[u8; 16], std::io::Error> {
    let n = shape.parties;
    assert_eq!(sinks.len(), n, "one sink per party");
    let code = shape.protocol.code();
    let bpw = shape.protocol.blocks_per_word();
    let mut session = [0u8; 16];
    rng.fill_bytes(&mut session);
    let mut out = Out {
        sinks,
        hashers: (0..n).map(|_| Sha256::new()).collect(),
        seeds: Vec::with_capacity(n - 1),
        index: 0,
        scratch: vec![Block::default(); REP_AES_BLOCKS],
    };
    // Headers, MAC key shares, input masks, seeds.
    let mut alpha = [0u8; N];
    let mut masks = vec![[0u8; BLOCK]; n];
    for (p, mask) in masks.iter_mut().enumerate() {
        let header = Header {
            shape,
            party: p,
            session,
        };
        out.put(p, &header.to_bytes())?;
        let mut a = [0u8; N];
        rng.fill_bytes(&mut a);
        xor(&mut alpha, &a);
        rng.fill_bytes(mask);
        out.put(p, &a)?;
        out.put(p, mask)?;
        if p + 1 < n {
            let mut seed = [0u8; 16];
            rng.fill_bytes(&mut seed);
            out.put(p, &seed)?;
            out.seeds.push(FixedKeyAes::new(Block::from(seed)));
        }
    }
    // value = C(data) ‖ α ∗ C(data)
    let encode = |data: &[u8], value: &mut [u8; REP_BYTES]| {
        let mut c = [0u8; N];
        code.encode(data, &mut c);
        value[..N].copy_from_slice(&c);
        gf256::mul_slices(&alpha, &c, &mut value[N..]);
    };
    let (mut value, mut unit) = ([0u8; REP_BYTES], [0u8; REP_BYTES]);
    let mut data = vec![0u8; code.k()];
    let mut random = vec![0u8; code.k()];
    for mask in &masks {
        layout::replicate(mask, bpw, &mut data);
        encode(&data, &mut value);
        out.emit(&value)?;
    }
    let bytes = shape.protocol.tables() == Tables::Bytes;
    // Protocol 3's byte tables, written after all representations: each table's mask R_q
    // and output mask v_q, in entry order.
    let mut byte_tables: Vec<(u8, u8)> =
        Vec::with_capacity(if bytes { shape.entries() / ENTRIES } else { 0 });
    for _round in 0..ROUNDS {
        rng.fill_bytes(&mut random);
        encode(&random, &mut value);
        out.emit(&value)?;
        let first: [u8; BLOCK] = random[..BLOCK].try_into().unwrap_or_default();
        layout::replicate(&layout::key_linear(&first), bpw, &mut data);
        encode(&data, &mut value);
        out.emit(&value)?;
        if bytes {
            let mut v = [0u8; 4];
            rng.fill_bytes(&mut v);
            let image = layout::apply(&v, layout::key_sbox_column);
            layout::replicate(&image, bpw, &mut data);
            encode(&data, &mut value);
            out.emit(&value)?;
            byte_tables.extend(KEY_SBOX_INPUTS.iter().zip(v).map(|(&i, v)| (random[i], v)));
        } else {
            for (t, &i) in KEY_SBOX_INPUTS.iter().enumerate() {
                layout::replicate(&layout::key_sbox_column(t), bpw, &mut data);
                encode(&data, &mut unit);
                out.table(&unit, random[i])?;
            }
        }
    }
    let mut v = vec![0u8; shape.tables_per_word()];
    for round in 0..ROUNDS {
        let mix = round + 1 < ROUNDS;
        for _w in 0..shape.words() {
            rng.fill_bytes(&mut random);
            encode(&random, &mut value);
            out.emit(&value)?;
            if bytes {
                rng.fill_bytes(&mut v);
                data.fill(0);
                for (b, vb) in v.chunks_exact(BLOCK).enumerate() {
                    let image = layout::apply(vb, |p| layout::round_column(p, mix));
                    data[b * BLOCK..(b + 1) * BLOCK].copy_from_slice(&image);
                }
                encode(&data, &mut value);
                out.emit(&value)?;
                byte_tables.extend(random.iter().zip(&v).map(|(&r, &v)| (r, v)));
                continue;
            }
            for (q, &mask) in random[..shape.tables_per_word()].iter().enumerate() {
                data.fill(0);
                let (b, p) = (q / BLOCK, q % BLOCK);
                data[b * BLOCK..(b + 1) * BLOCK].copy_from_slice(&layout::round_column(p, mix));
                encode(&data, &mut unit);
                out.table(&unit, mask)?;
            }
        }
    }
    if bytes {
        out.byte_tables(rng, &byte_tables)?;
    }
    debug_assert_eq!(out.index, shape.reps());
    let hashers = std::mem::take(&mut out.hashers);
    for (p, h) in hashers.into_iter().enumerate() {
        out.sinks[p].write_all(&h.finalize())?;
    }
    Ok(session)
}

/// Every party's file for `shape`, dealt into memory.
pub fn deal_buffers(shape: Shape, rng: &mut Prg) -> Result<Vec<Vec<u8>>, Error> {
    let mut buffers: Vec<Vec<u8>> = (0..shape.parties)
        .map(|p| huge_vec(shape.file_bytes(p) as usize))
        .collect();
    let mut sinks: Vec<&mut dyn Write> = buffers.iter_mut().map(|b| b as &mut dyn Write).collect();
    deal(shape, rng, &mut sinks).map_err(|e| Error::Usage(format!("dealing: {e}")))?;
    Ok(buffers)
}

/// Every party's material for `shape`, dealt in memory (for tests and the demo).
pub fn deal_in_memory(shape: Shape, rng: &mut Prg) -> Result<Vec<Material>, Error> {
    deal_buffers(shape, rng)?
        .into_iter()
        .enumerate()
        .map(|(p, b)| {
            Material::from_bytes(b, &format!("party {p}'s material")).map_err(Error::from)
        })
        .collect()
}
