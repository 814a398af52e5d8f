//! Where garbled tables go and come from: a buffer here, a channel between two parties.

use crate::Error;
use tessera_core::Block;

/// Receives the garbler's tables, batch by batch, in plan order. The garbler writes each
/// batch's tables straight into the room the sink lends ([`TableSink::reserve`]), so they are
/// not copied on their way out of the engine.
pub trait TableSink {
    /// Room for the next `n` blocks of the stream, which the caller fills before it calls
    /// [`TableSink::commit`] or asks for more.
    fn reserve(&mut self, n: usize) -> &mut [Block];
    /// Passes on what was written since the last commit.
    fn commit(&mut self) -> Result<(), Error>;
    /// Appends `blocks` to the stream.
    fn put(&mut self, blocks: &[Block]) -> Result<(), Error> {
        self.reserve(blocks.len()).copy_from_slice(blocks);
        self.commit()
    }
}

/// Gives the evaluator the tables in the order the garbler wrote them.
pub trait TableSource {
    /// The next `n` blocks, or [`Error::Truncated`] if the stream ends first.
    fn take(&mut self, n: usize) -> Result<&[Block], Error>;
    /// Checks that nothing is left once the circuit is evaluated.
    fn finish(&mut self) -> Result<(), Error>;
}

impl TableSink for Vec<Block> {
    fn reserve(&mut self, n: usize) -> &mut [Block] {
        let at = self.len();
        self.resize(at + n, Block::ZERO);
        &mut self[at..]
    }

    fn commit(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// Tables kept in memory in storage reused from one garbling to the next: cleared, it keeps
/// its blocks and the next garbling overwrites them, so a garbling writes each table block
/// once and zeroes nothing (a `Vec` sink zero-fills the room it lends).
#[derive(Clone, Debug, Default)]
pub struct TableBuffer {
    blocks: Vec<Block>,
    len: usize,
}

impl TableBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        TableBuffer::default()
    }

    /// Empties the stream, keeping the storage.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// The blocks written since the last [`TableBuffer::clear`].
    pub fn as_slice(&self) -> &[Block] {
        &self.blocks[..self.len]
    }

    /// Blocks in the stream.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the stream is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops the first `n` blocks of the stream (all of it if it is shorter), moving the rest
    /// to the front.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        self.blocks.copy_within(n..self.len, 0);
        self.len -= n;
    }
}

impl TableSink for TableBuffer {
    fn reserve(&mut self, n: usize) -> &mut [Block] {
        let (at, end) = (self.len, self.len + n);
        if self.blocks.len() < end {
            self.blocks.resize(end, Block::ZERO);
        }
        self.len = end;
        &mut self.blocks[at..end]
    }

    fn commit(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// Reads tables from a buffer.
#[derive(Clone, Debug)]
pub struct TableReader<'a> {
    data: &'a [Block],
    at: usize,
}

impl<'a> TableReader<'a> {
    /// Reads `data` from its start.
    pub fn new(data: &'a [Block]) -> Self {
        TableReader { data, at: 0 }
    }
}

impl TableSource for TableReader<'_> {
    fn take(&mut self, n: usize) -> Result<&[Block], Error> {
        let end = self.at.saturating_add(n);
        let out = self.data.get(self.at..end).ok_or(Error::Truncated {
            needed: end,
            available: self.data.len(),
        })?;
        self.at = end;
        Ok(out)
    }

    fn finish(&mut self) -> Result<(), Error> {
        match self.data.len() - self.at {
            0 => Ok(()),
            left => Err(Error::TrailingTables(left)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_buffer_reuses_its_storage_and_keeps_the_stream_in_order() {
        let mut t = TableBuffer::new();
        t.reserve(3)
            .copy_from_slice(&[Block::new(1), Block::new(2), Block::new(3)]);
        t.put(&[Block::new(4)]).unwrap();
        assert_eq!(t.as_slice(), [1, 2, 3, 4].map(Block::new));
        t.consume(3);
        assert_eq!(t.as_slice(), [Block::new(4)]);
        t.clear();
        assert!(t.is_empty());
        t.reserve(2)
            .copy_from_slice(&[Block::new(5), Block::new(6)]);
        assert_eq!(
            (t.as_slice(), t.blocks.len()),
            (&[5, 6].map(Block::new)[..], 4)
        );
    }
}
