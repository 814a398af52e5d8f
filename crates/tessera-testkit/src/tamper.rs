//! The tamper harness for any two-party protocol over a [`Network`]: the parties' link passes
//! through an interposer (two threads, one a direction) that reads the network's frames and
//! edits one of them as a cheating peer or a broken link would: a bit flipped, random bytes,
//! a byte more or less (the header saying so), the frame cut off with the connection,
//! another message kind, the previous frame sent again, or silence from then on. The
//! network's own frames (space 0: the abort) pass as they are, so a party that stops still
//! tells its peer; they are counted ([`Frames::aborts_by`]). An honest run through it counts
//! the frames each party sends ([`Frames`]), which the tests then edit one at a time.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tessera_core::{Block, Prg};
use tessera_net::{ABORT, FRAME_HEADER, NetConfig, Network, memory};

/// What the interposer does to its target frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Flips the payload's first bit (or, for an empty payload, the kind's lowest).
    FlipBit,
    /// Replaces the payload with random bytes of its length.
    Garbage,
    /// Lets the header and half the payload through, then cuts the connection.
    Cut,
    /// Appends a byte to the payload, the header's length saying so.
    Extend,
    /// Drops the payload's last byte, the header's length saying so (an empty payload gets
    /// a byte instead).
    Truncate,
    /// Gives the frame another kind id (its own with the lowest bit flipped).
    ChangeKind,
    /// Sends the direction's previous frame again in its place (the first frame is dropped
    /// for good, the connection cut).
    Replay,
    /// Sends nothing more this way, the connection left open.
    Silence,
}

impl Edit {
    /// Every edit that leaves no party waiting for its timeout (all but [`Edit::Silence`]).
    pub const ALL: [Edit; 7] = [
        Edit::FlipBit,
        Edit::Garbage,
        Edit::Cut,
        Edit::Extend,
        Edit::Truncate,
        Edit::ChangeKind,
        Edit::Replay,
    ];
}

/// Which of a party's protocol frames (not the network's own) to edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The frame at this position, counting from 0.
    Index(usize),
    /// The first frame with this kind id.
    FirstOf(u8),
}

/// Which frame to edit and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The sending party, 0 or 1.
    pub from: usize,
    /// Which of its frames.
    pub which: Which,
    /// What happens to it.
    pub edit: Edit,
}

/// The frames each party sent through the interposer, counted as they pass: protocol frames
/// and aborts.
#[derive(Clone, Debug, Default)]
pub struct Frames(Arc<[[AtomicUsize; 2]; 2]>);

impl Frames {
    /// How many protocol frames party `from` sent so far.
    pub fn sent_by(&self, from: usize) -> usize {
        self.0[0][from].load(Ordering::SeqCst)
    }

    /// How many aborts party `from` sent so far.
    pub fn aborts_by(&self, from: usize) -> usize {
        self.0[1][from].load(Ordering::SeqCst)
    }
}

/// Two networks (party 0, party 1) whose link passes through the interposer, editing `target`
/// if one is given, and the count of frames that passed.
///
/// # Panics
///
/// If the sockets cannot be made.
pub fn pair(target: Option<Target>, config: NetConfig) -> (Network, Network, Frames) {
    let (a, a_far) = UnixStream::pair().expect("a socket pair");
    let (b, b_far) = UnixStream::pair().expect("a socket pair");
    let frames = Frames::default();
    for (from, (src, dst)) in [(0, (&a_far, &b_far)), (1, (&b_far, &a_far))] {
        let (src, dst) = (
            src.try_clone().expect("a socket"),
            dst.try_clone().expect("a socket"),
        );
        let target = target.filter(|t| t.from == from);
        let count = frames.clone();
        std::thread::spawn(move || forward(from, src, dst, target, &count));
    }
    let (zero, one) = memory::pair_over(a, b, config).expect("networks over the interposer");
    (zero, one, frames)
}

/// Forwards frames from `src` to `dst` until either end closes, editing `target`; cuts both
/// ways when it cuts.
fn forward(
    from: usize,
    mut src: UnixStream,
    mut dst: UnixStream,
    target: Option<Target>,
    frames: &Frames,
) {
    let (mut previous, mut index, mut done) = (None::<Vec<u8>>, 0, false);
    while let Some(mut frame) = read_frame(&mut src) {
        let space = u16::from_le_bytes([frame[0], frame[1]]);
        if space == 0 {
            if frame[2] == ABORT.id {
                frames.0[1][from].fetch_add(1, Ordering::SeqCst);
            }
        } else {
            frames.0[0][from].fetch_add(1, Ordering::SeqCst);
            let here = target.filter(|t| match t.which {
                Which::Index(i) => i == index,
                Which::FirstOf(kind) => !done && kind == frame[2],
            });
            index += 1;
            let kept = frame.clone();
            if let Some(t) = here {
                done = true;
                match edit(&frame, t.edit, previous.as_deref()) {
                    Some(edited) => frame = edited,
                    None if t.edit == Edit::Silence => {
                        // Send nothing more; the connection stays open until the waiting
                        // party gives up (its timeout) and leaves.
                        while read_frame(&mut src).is_some() {}
                        return;
                    }
                    None => {
                        let _ = dst.write_all(&frame[..FRAME_HEADER + payload_len(&frame) / 2]);
                        cut(&src, &dst);
                        return;
                    }
                }
            }
            previous = Some(kept);
        }
        if dst.write_all(&frame).is_err() {
            break;
        }
    }
    // The sender closed its side: pass the close on, this way only, so that what the other
    // party is still sending (an abort, say) reaches this side's sender.
    let _ = dst.shutdown(std::net::Shutdown::Write);
}

/// The frame `edit` makes of `frame`, or `None` to cut the connection in its middle (or, for
/// [`Edit::Silence`], to send nothing more).
fn edit(frame: &[u8], edit: Edit, previous: Option<&[u8]>) -> Option<Vec<u8>> {
    let mut out = frame.to_vec();
    match edit {
        Edit::FlipBit if out.len() > FRAME_HEADER => out[FRAME_HEADER] ^= 1,
        Edit::FlipBit | Edit::ChangeKind => out[2] ^= 1,
        Edit::Garbage => {
            let mut prg = Prg::from_seed_block(Block::new(u128::from(out.len() as u64)));
            for chunk in out[FRAME_HEADER..].chunks_mut(16) {
                let bytes = prg.random_block().to_bytes();
                chunk.copy_from_slice(&bytes[..chunk.len()]);
            }
        }
        Edit::Extend => out.push(0x5a),
        Edit::Truncate if out.len() > FRAME_HEADER => {
            out.pop();
        }
        Edit::Truncate => out.push(0),
        Edit::Cut | Edit::Silence => return None,
        Edit::Replay => return previous.map(<[u8]>::to_vec),
    }
    let len = u32::try_from(out.len() - FRAME_HEADER).unwrap_or(u32::MAX);
    out[3..7].copy_from_slice(&len.to_le_bytes());
    Some(out)
}

fn payload_len(frame: &[u8]) -> usize {
    frame.len() - FRAME_HEADER
}

/// One whole frame, header and payload, or `None` at the end of the stream.
fn read_frame(src: &mut UnixStream) -> Option<Vec<u8>> {
    let mut header = [0u8; FRAME_HEADER];
    src.read_exact(&mut header).ok()?;
    let len = u32::from_le_bytes([header[3], header[4], header[5], header[6]]) as usize;
    let mut frame = header.to_vec();
    frame.resize(FRAME_HEADER + len, 0);
    src.read_exact(&mut frame[FRAME_HEADER..]).ok()?;
    Some(frame)
}

fn cut(src: &UnixStream, dst: &UnixStream) {
    let _ = src.shutdown(std::net::Shutdown::Both);
    let _ = dst.shutdown(std::net::Shutdown::Both);
}
