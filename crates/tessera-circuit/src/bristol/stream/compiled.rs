//! Compiled circuit files: a Bristol file's gates as its liveness pass leaves them, one record
//! of [`RECORD_BYTES`] per gate with its liveness marks, so that a file run many times is read
//! without that pass ([`Streamed::open`](super::Streamed::open) reads either kind; `tessera
//! circuit compile` writes them, [`Streamed::compile`](super::Streamed::compile)).
//!
//! Layout, numbers little-endian: [`MAGIC`]; the source's format (0 Bristol Fashion, 1 the old
//! format); gates and wires (`u32` each); the number of input values and their widths, then of
//! output values and theirs (`u32` each); the AND gates (`u64`); the source's digest (32 bytes,
//! [`super::DIGEST_CONTEXT`]), so a party reading the compiled file and one reading the text
//! agree; one bit per input wire, set where some gate reads it; the gate records; and last
//! BLAKE3 in key derivation mode ([`CHECKSUM_CONTEXT`]) of every byte between the magic and
//! itself, which the reader compares once it has read the last record, before the last window
//! is out, so a damaged or edited file stops a run before its outputs.

use super::RECORD_BYTES;
use crate::Error;
use crate::bristol::{Format, err};
use crate::circuit::check_shape;
use std::io::{Read, Seek, SeekFrom};

/// The first bytes of a compiled file (a NUL, which no Bristol text starts with).
pub const MAGIC: &[u8; 16] = b"\0tessera gates 1";

/// The context string of a compiled file's checksum (BLAKE3's key derivation mode).
pub const CHECKSUM_CONTEXT: &str = "tessera 2026-12 compiled circuit checksum v1";

/// Bytes of the checksum that ends a compiled file.
pub(super) const CHECKSUM_BYTES: u64 = 32;

/// A compiled file's header, between the magic and the records.
pub(super) struct Head {
    pub format: Format,
    pub num_gates: u32,
    pub num_wires: u32,
    pub inputs: Vec<u32>,
    pub outputs: Vec<u32>,
    pub and_gates: u64,
    pub digest: [u8; 32],
    /// Bit `w` (byte `w / 8`, bit `w % 8`): some gate reads input wire `w`.
    pub read_inputs: Vec<u8>,
}

impl Head {
    /// The header's bytes, as the file holds them after the magic.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![u8::from(self.format == Format::Old)];
        for n in [self.num_gates, self.num_wires] {
            b.extend(n.to_le_bytes());
        }
        for list in [&self.inputs, &self.outputs] {
            b.extend((list.len() as u32).to_le_bytes());
            list.iter().for_each(|w| b.extend(w.to_le_bytes()));
        }
        b.extend(self.and_gates.to_le_bytes());
        b.extend(self.digest);
        b.extend(&self.read_inputs);
        b
    }

    /// Reads the header of a compiled file of `size` bytes from `file`, which stands after the
    /// magic, checking the shape as a text header's is checked and that the records and the
    /// checksum fill the rest exactly. Returns the header and its bytes.
    pub fn read(file: &mut impl Read, size: u64) -> Result<(Head, Vec<u8>), Error> {
        let mut r = Reader {
            file,
            raw: Vec::new(),
            left: size.saturating_sub(MAGIC.len() as u64),
        };
        let format = match r.bytes::<1>()? {
            [0] => Format::Fashion,
            [1] => Format::Old,
            [f] => {
                return Err(bad(format!(
                    "format {f} is neither 0 (Fashion) nor 1 (old)"
                )));
            }
        };
        let (num_gates, num_wires) = (r.u32()?, r.u32()?);
        let (inputs, outputs) = (r.list("input")?, r.list("output")?);
        check_shape(num_wires, &inputs, &outputs, u64::from(num_gates))
            .map_err(|e| bad(e.message()))?;
        let and_gates = u64::from_le_bytes(r.bytes()?);
        let digest = r.bytes::<32>()?;
        let input_wires: u64 = inputs.iter().map(|&w| u64::from(w)).sum();
        let read_inputs = r.take(input_wires.div_ceil(8), "the input wires' bits")?;
        let expect = u64::from(num_gates) * RECORD_BYTES as u64 + CHECKSUM_BYTES;
        if r.left != expect {
            return Err(bad(format!(
                "{num_gates} gates take {expect} bytes with the checksum after the header, \
                 the file has {} there",
                r.left
            )));
        }
        let head = Head {
            format,
            num_gates,
            num_wires,
            inputs,
            outputs,
            and_gates,
            digest,
            read_inputs,
        };
        Ok((head, r.raw))
    }
}

/// Bit `w` of `bits` (byte `w / 8`, bit `w % 8`; beyond them, 0): for [`Head::read_inputs`],
/// whether some gate reads input wire `w`.
pub(super) fn bit(bits: &[u8], w: u32) -> bool {
    bits.get(w as usize / 8)
        .is_some_and(|b| b >> (w % 8) & 1 == 1)
}

/// Whether `file` is a compiled circuit (its first bytes are [`MAGIC`]); leaves it at the start.
pub(crate) fn is_compiled(file: &mut (impl Read + Seek)) -> std::io::Result<bool> {
    let mut first = [0u8; MAGIC.len()];
    let mut got = 0;
    while got < first.len() {
        match file.read(&mut first[got..])? {
            0 => break,
            n => got += n,
        }
    }
    file.seek(SeekFrom::Start(0))?;
    Ok(got == first.len() && &first == MAGIC)
}

/// A fault of a compiled file's header.
fn bad(message: String) -> Error {
    err(0, format!("compiled circuit header: {message}"))
}

/// Reads a header's fields, keeping the bytes, never past the bytes the file has left.
struct Reader<'f, R> {
    file: &'f mut R,
    raw: Vec<u8>,
    left: u64,
}

impl<R: Read> Reader<'_, R> {
    /// The next `n` bytes (`what`, for the error), if the file holds them.
    fn take(&mut self, n: u64, what: &str) -> Result<Vec<u8>, Error> {
        if n > self.left {
            return Err(bad(format!(
                "{what} take {n} bytes, the file has {} left",
                self.left
            )));
        }
        let mut b = vec![0; n as usize];
        self.file
            .read_exact(&mut b)
            .map_err(|e| bad(format!("reading {what}: {e}")))?;
        self.left -= n;
        self.raw.extend(&b);
        Ok(b)
    }

    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut a = [0; N];
        a.copy_from_slice(&self.take(N as u64, "the header's numbers")?);
        Ok(a)
    }

    fn u32(&mut self) -> Result<u32, Error> {
        self.bytes().map(u32::from_le_bytes)
    }

    /// A count, then that many widths (of `what` values).
    fn list(&mut self, what: &str) -> Result<Vec<u32>, Error> {
        let n = u64::from(self.u32()?);
        let b = self.take(4 * n, &format!("{n} {what} widths"))?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}
