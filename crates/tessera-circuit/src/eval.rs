//! Plaintext evaluation, the reference every protocol is tested against, and the hex convention
//! of `tessera circuit eval`: bit k of a value is bit (k mod 8) of byte (k div 8) of its hex
//! string, least significant bit first.

use crate::{Circuit, Error, GateKind};

/// Checks that `values` are one bit vector per width of `widths`, each that wide.
pub fn check_values(widths: &[u32], values: &[Vec<bool>]) -> Result<(), Error> {
    if values.len() != widths.len() {
        return Err(Error::Input(format!(
            "the circuit takes {} input values, got {}",
            widths.len(),
            values.len()
        )));
    }
    for (v, (bits, &width)) in values.iter().zip(widths).enumerate() {
        if bits.len() != width as usize {
            return Err(Error::Input(format!(
                "input value {v} has {width} bits, got {}",
                bits.len()
            )));
        }
    }
    Ok(())
}

/// `bits` cut into consecutive values of `widths` bits (as many as `bits` holds).
pub fn split_values(widths: &[u32], bits: &[bool]) -> Vec<Vec<bool>> {
    let mut rest = bits;
    widths
        .iter()
        .map(|&w| {
            let (value, tail) = rest.split_at((w as usize).min(rest.len()));
            rest = tail;
            value.to_vec()
        })
        .collect()
}

/// Evaluates `c` on one bit vector per input value; returns one bit vector per output value.
pub fn evaluate(c: &Circuit, inputs: &[Vec<bool>]) -> Result<Vec<Vec<bool>>, Error> {
    check_values(&c.inputs, inputs)?;
    let mut wires = vec![false; c.num_wires as usize];
    let mut at = 0;
    for bits in inputs {
        wires[at..at + bits.len()].copy_from_slice(bits);
        at += bits.len();
    }
    for g in &c.gates {
        let (a, b) = (g.a as usize, g.b as usize);
        wires[g.out as usize] = match g.kind {
            GateKind::Xor => wires[a] ^ wires[b],
            GateKind::And => wires[a] & wires[b],
            GateKind::Inv => !wires[a],
            GateKind::Eqw => wires[a],
            GateKind::Eq => g.a == 1,
        };
    }
    Ok(split_values(
        &c.outputs,
        &wires[c.output_start() as usize..],
    ))
}

/// Bits of a hex string, LSB first within each byte; `width` bits are taken and the string must
/// hold exactly `ceil(width / 8)` bytes.
pub fn bits_from_hex(hex: &str, width: u32) -> Result<Vec<bool>, Error> {
    let hex = hex.trim();
    let bytes = width.div_ceil(8) as usize;
    if hex.len() != 2 * bytes {
        return Err(Error::Input(format!(
            "a {width}-bit value needs {} hex digits, got {}",
            2 * bytes,
            hex.len()
        )));
    }
    if let Some(at) = hex.bytes().position(|b| !b.is_ascii_hexdigit()) {
        return Err(Error::Input(format!("{hex:?}: not hex at digit {at}")));
    }
    let digit = |d: u8| (d as char).to_digit(16).unwrap_or(0) as u8;
    let bytes: Vec<u8> = hex
        .as_bytes()
        .chunks_exact(2)
        .map(|pair| digit(pair[0]) << 4 | digit(pair[1]))
        .collect();
    bits_of_value(&bytes, width)
}

/// The `width` bits of a value given as bytes in the order of [`bits_from_hex`]: exactly
/// `ceil(width / 8)` bytes, none of the bits beyond `width` set.
pub fn bits_of_value(bytes: &[u8], width: u32) -> Result<Vec<bool>, Error> {
    let want = width.div_ceil(8) as usize;
    if bytes.len() != want {
        return Err(Error::Input(format!(
            "a {width}-bit value needs {want} bytes, got {}",
            bytes.len()
        )));
    }
    let mut bits = bits_from_bytes(bytes);
    if bits[width as usize..].iter().any(|&b| b) {
        return Err(Error::Input(format!(
            "the value has bits set beyond its {width} bits"
        )));
    }
    bits.truncate(width as usize);
    Ok(bits)
}

/// The hex string of a bit vector, LSB first within each byte.
pub fn bits_to_hex(bits: &[bool]) -> String {
    bytes_from_bits(bits)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The bits of `bytes`, LSB first within each byte (the order of [`bits_from_hex`]).
pub fn bits_from_bytes(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|b| (0..8).map(move |i| (b >> i) & 1 == 1))
        .collect()
}

/// The bytes of a bit vector, LSB first within each byte (a last partial byte padded with
/// zeros).
pub fn bytes_from_bits(bits: &[bool]) -> Vec<u8> {
    bits.chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |acc, (i, &b)| acc | (u8::from(b) << i))
        })
        .collect()
}
