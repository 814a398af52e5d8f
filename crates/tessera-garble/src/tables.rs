//! Where garbled tables go and come from: a buffer here, a channel between two parties.

use crate::Error;
use tessera_core::Block;

/// Receives the garbler's tables, batch by batch, in plan order.
pub trait TableSink {
    /// Appends `blocks` to the stream.
    fn put(&mut self, blocks: &[Block]) -> Result<(), Error>;
}

/// Gives the evaluator the tables in the order the garbler wrote them.
pub trait TableSource {
    /// The next `n` blocks, or [`Error::Truncated`] if the stream ends first.
    fn take(&mut self, n: usize) -> Result<&[Block], Error>;
    /// Checks that nothing is left once the circuit is evaluated.
    fn finish(&mut self) -> Result<(), Error>;
}

impl TableSink for Vec<Block> {
    fn put(&mut self, blocks: &[Block]) -> Result<(), Error> {
        self.extend_from_slice(blocks);
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
