//! The two-party view of a network: messages to and from one peer.

use crate::wire::{Frame, Len, Tag};
use crate::{Error, Stats};
use tessera_core::Block;

/// A reliable, ordered, framed connection to one peer ([`crate::Network::peer`]).
///
/// Sends may be queued until [`Channel::flush`] or the next receive. Every receive checks the
/// message's tag and length before its payload is read.
pub trait Channel {
    /// The peer's party id.
    fn peer(&self) -> usize;

    /// Queues one message.
    fn send(&mut self, tag: Tag, payload: &[u8]) -> Result<(), Error>;

    /// Receives one message tagged `tag` whose length fits `len`, into `frame`.
    fn recv_frame(&mut self, tag: Tag, len: Len, frame: &mut Frame) -> Result<(), Error>;

    /// Receives one message tagged `tag` that fills `out` exactly.
    fn recv_into(&mut self, tag: Tag, out: &mut [u8]) -> Result<(), Error>;

    /// Sends everything queued for the peer.
    fn flush(&mut self) -> Result<(), Error>;

    /// What has crossed the link so far.
    fn stats(&self) -> Stats;

    /// Receives one message tagged `tag` of at most `max` bytes.
    fn recv_bounded(&mut self, tag: Tag, max: usize) -> Result<Vec<u8>, Error> {
        let mut frame = Frame::new();
        self.recv_frame(tag, Len::AtMost(max), &mut frame)?;
        Ok(frame.bytes().to_vec())
    }

    /// Queues one message of blocks.
    fn send_blocks(&mut self, tag: Tag, blocks: &[Block]) -> Result<(), Error> {
        self.send(tag, bytemuck::cast_slice(blocks))
    }

    /// Receives one message of exactly `out.len()` blocks.
    fn recv_blocks(&mut self, tag: Tag, out: &mut [Block]) -> Result<(), Error> {
        self.recv_into(tag, bytemuck::cast_slice_mut(out))
    }
}

/// Forwards every required [`Channel`] method through a pointer type.
macro_rules! forward_channel {
    ($($pointer:ty),*) => {$(
        impl<C: Channel + ?Sized> Channel for $pointer {
            fn peer(&self) -> usize {
                (**self).peer()
            }
            fn send(&mut self, tag: Tag, payload: &[u8]) -> Result<(), Error> {
                (**self).send(tag, payload)
            }
            fn recv_frame(&mut self, tag: Tag, len: Len, frame: &mut Frame) -> Result<(), Error> {
                (**self).recv_frame(tag, len, frame)
            }
            fn recv_into(&mut self, tag: Tag, out: &mut [u8]) -> Result<(), Error> {
                (**self).recv_into(tag, out)
            }
            fn flush(&mut self) -> Result<(), Error> {
                (**self).flush()
            }
            fn stats(&self) -> Stats {
                (**self).stats()
            }
        }
    )*};
}

forward_channel!(&mut C, Box<C>);
