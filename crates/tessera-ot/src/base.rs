//! Base oblivious transfer: the "simplest OT" of Chou and Orlandi (LATINCRYPT 2015,
//! ePrint 2015/267) over the prime-order group Ristretto255, in batches.
//!
//! The sender draws a and sends A = a·G. For each OT i with choice c_i the receiver draws b_i
//! and sends B_i = b_i·G + c_i·A (the addend selected in constant time); it keeps
//! k_i = H(i, A, B_i, b_i·A). The sender derives k0_i = H(i, A, B_i, a·B_i) and
//! k1_i = H(i, A, B_i, a·(B_i − A)), so k_i = k_{c_i}, while A and B_i hide c_i perfectly.
//!
//! H is SHA-256 under a domain separator, over a fresh per-run session id, the index and the
//! transcript (A, B_i). Hashing the transcript and index is the fix later versions of the paper
//! and Hauck and Loss (ePrint 2017/1011) apply to the original's key derivation; in Ristretto
//! every point is in the prime-order group, so no small-subgroup checks are needed, and the
//! identity point is refused. Security: the random-oracle model and CDH, against a semi-honest
//! sender and a malicious receiver. Against a malicious sender the protocol is not
//! UC-simulatable (Genç, Iovino, Rial, ePrint 2017/370); Tessera's actively secure extension
//! (KOS) protects the OT *sender* of the extension, who is the base OT's receiver.

use crate::{Error, abort};
use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use rand_core::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConditionallySelectable;
use tessera_core::{Block, Prg};
use tessera_net::{Channel, Tag};

const SENDER_POINT: Tag = Tag::new(0x10, "base-ot sender point A");
const RECEIVER_POINTS: Tag = Tag::new(0x11, "base-ot receiver points B");
const SESSION: Tag = Tag::new(0x12, "base-ot session id");
const CIPHERTEXTS: Tag = Tag::new(0x13, "base-ot ciphertexts");

fn random_scalar(prg: &mut Prg) -> Scalar {
    let mut wide = [0u8; 64];
    prg.fill_bytes(&mut wide);
    Scalar::from_bytes_mod_order_wide(&wide)
}

fn decode_point(bytes: &[u8], what: &'static str, index: usize) -> Result<RistrettoPoint, Error> {
    CompressedRistretto::from_slice(bytes)
        .ok()
        .and_then(|c| c.decompress())
        .filter(|p| *p != RistrettoPoint::identity())
        .ok_or(Error::BadPoint { what, index })
}

/// The key derivation H(sid, i, A, B, 2P): the shared point enters doubled, because dalek
/// compresses 2P for a whole batch with one field inversion.
fn derive(
    session: &[u8; 16],
    index: usize,
    a: &[u8; 32],
    b: &[u8],
    p2: &CompressedRistretto,
) -> Block {
    let digest = Sha256::new()
        .chain_update(b"tessera/base-ot/chou-orlandi/v1")
        .chain_update(session)
        .chain_update((index as u64).to_le_bytes())
        .chain_update(a)
        .chain_update(b)
        .chain_update(p2.as_bytes())
        .finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    Block::from_bytes(key)
}

/// Receiver points per message: the sender starts on the first batch while the receiver
/// computes the next.
const POINTS_PER_MESSAGE: usize = 32;

/// Random OT, sender side: `n` pairs of random keys (k0_i, k1_i), of which the receiver gets
/// the one it chose.
pub fn send_random<C: Channel + ?Sized>(
    channel: &mut C,
    n: usize,
    prg: &mut Prg,
) -> Result<Vec<(Block, Block)>, Error> {
    let a = random_scalar(prg);
    let big_a = RISTRETTO_BASEPOINT_TABLE * &a;
    let a_bytes = big_a.compress().to_bytes();
    let mut session = [0u8; 16];
    prg.fill_bytes(&mut session);
    channel.send(SENDER_POINT, &a_bytes)?;
    channel.send(SESSION, &session)?;
    channel.flush()?;
    let a_times_a = big_a * a;
    let mut points = vec![0u8; 32 * n];
    let mut shared = Vec::with_capacity(2 * n);
    for (batch, bytes) in points.chunks_mut(32 * POINTS_PER_MESSAGE).enumerate() {
        channel.recv_into(RECEIVER_POINTS, bytes)?;
        for (k, b) in bytes.chunks_exact(32).enumerate() {
            let index = batch * POINTS_PER_MESSAGE + k;
            let big_b =
                decode_point(b, "receiver point B", index).map_err(|e| abort(channel, e))?;
            let ab = big_b * a;
            shared.push(ab);
            shared.push(ab - a_times_a);
        }
    }
    let doubled = RistrettoPoint::double_and_compress_batch(&shared);
    Ok(points
        .chunks_exact(32)
        .zip(doubled.chunks_exact(2))
        .enumerate()
        .map(|(i, (b, p))| {
            (
                derive(&session, i, &a_bytes, b, &p[0]),
                derive(&session, i, &a_bytes, b, &p[1]),
            )
        })
        .collect())
}

/// Random OT, receiver side: the key k_{c_i} for each choice c_i.
pub fn receive_random<C: Channel + ?Sized>(
    channel: &mut C,
    choices: &[bool],
    prg: &mut Prg,
) -> Result<Vec<Block>, Error> {
    let mut a_bytes = [0u8; 32];
    channel.recv_into(SENDER_POINT, &mut a_bytes)?;
    let big_a = decode_point(&a_bytes, "sender point A", 0).map_err(|e| abort(channel, e))?;
    let mut session = [0u8; 16];
    channel.recv_into(SESSION, &mut session)?;
    let mut points = Vec::with_capacity(32 * choices.len());
    let mut scalars = Vec::with_capacity(choices.len());
    for batch in choices.chunks(POINTS_PER_MESSAGE) {
        let first = points.len();
        for &c in batch {
            let b = random_scalar(prg);
            let addend = RistrettoPoint::conditional_select(
                &RistrettoPoint::identity(),
                &big_a,
                subtle::Choice::from(c as u8),
            );
            let big_b = RISTRETTO_BASEPOINT_TABLE * &b + addend;
            points.extend_from_slice(big_b.compress().as_bytes());
            scalars.push(b);
        }
        channel.send(RECEIVER_POINTS, &points[first..])?;
        channel.flush()?;
    }
    // b_i·A for every i, from a table for A (constant time in b_i), while the sender works.
    let table_a = RistrettoBasepointTable::create(&big_a);
    let shared: Vec<RistrettoPoint> = scalars.iter().map(|b| &table_a * b).collect();
    let doubled = RistrettoPoint::double_and_compress_batch(&shared);
    Ok(doubled
        .iter()
        .zip(points.chunks_exact(32))
        .enumerate()
        .map(|(i, (p, b))| derive(&session, i, &a_bytes, b, p))
        .collect())
}

/// Chosen-message OT, sender side: the receiver gets `messages[i].0` or `.1`, encrypted under
/// the random-OT keys.
pub fn send<C: Channel + ?Sized>(
    channel: &mut C,
    messages: &[(Block, Block)],
    prg: &mut Prg,
) -> Result<(), Error> {
    let keys = send_random(channel, messages.len(), prg)?;
    let cipher: Vec<Block> = keys
        .iter()
        .zip(messages)
        .flat_map(|(&(k0, k1), &(m0, m1))| [m0 ^ k0, m1 ^ k1])
        .collect();
    channel.send_blocks(CIPHERTEXTS, &cipher)?;
    channel.flush()?;
    Ok(())
}

/// Chosen-message OT, receiver side: `messages[i].c_i` for each choice.
pub fn receive<C: Channel + ?Sized>(
    channel: &mut C,
    choices: &[bool],
    prg: &mut Prg,
) -> Result<Vec<Block>, Error> {
    let keys = receive_random(channel, choices, prg)?;
    let mut cipher = vec![Block::ZERO; 2 * choices.len()];
    channel.recv_blocks(CIPHERTEXTS, &mut cipher)?;
    Ok(keys
        .iter()
        .zip(cipher.chunks_exact(2))
        .zip(choices)
        .map(|((&k, pair), &c)| k ^ pair[0] ^ (Block::mask(c) & (pair[0] ^ pair[1])))
        .collect())
}
