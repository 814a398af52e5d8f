//! Cheetah's coefficient encoding of a matrix-vector product (Huang et al., USENIX Security
//! 2022, §4.2, HomFC): for `W` of `n_o × n_i` and `x` of `n_i`, a block of `n'_i` inputs is the
//! polynomial x̂ = Σ_j x[j]·X^j, and a block of `n'_o` rows of `W` over those inputs the
//! polynomial ŵ = Σ_r Σ_j W[r, j]·X^(r·n'_i + n'_i − 1 − j), with `n'_o·n'_i <= N`. In
//! x̂·ŵ mod X^N + 1 the coefficient r·n'_i + n'_i − 1 is row r's dot product with the block:
//! other pairs land elsewhere and wrapped ones below n'_i − 1. An answer sums its input blocks'
//! products: one ciphertext per `n'_o` rows.

use crate::Error;
use crate::linear::Encoding;

/// The encoding of one `rows × inputs` matrix at one ring degree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FcEncoding {
    rows: usize,
    inputs: usize,
    /// n'_i.
    block_inputs: usize,
    /// n'_o.
    block_rows: usize,
    degree: usize,
}

impl FcEncoding {
    /// The encoding whose blocks send the fewest words: `input_words` per input block, and
    /// `output_words` per output block, over every input block size up to N.
    pub fn cheapest(
        rows: usize,
        inputs: usize,
        degree: usize,
        input_words: usize,
        output_words: usize,
    ) -> Result<Self, Error> {
        if rows == 0 || inputs == 0 {
            return Err(Error::Length {
                what: "matrix rows and inputs",
                expected: 1,
                got: 0,
            });
        }
        let candidate = |block_inputs: usize| {
            let block_rows = rows.min(degree / block_inputs);
            let enc = FcEncoding {
                rows,
                inputs,
                block_inputs,
                block_rows,
                degree,
            };
            (
                enc.input_blocks() * input_words + enc.output_blocks() * output_words,
                enc,
            )
        };
        let best = (1..=inputs.min(degree))
            .map(candidate)
            .min_by_key(|(cost, _)| *cost);
        best.map(|(_, enc)| enc).ok_or(Error::Length {
            what: "matrix block",
            expected: degree,
            got: inputs,
        })
    }

    /// n'_i and n'_o.
    pub fn blocks(&self) -> (usize, usize) {
        (self.block_inputs, self.block_rows)
    }
}

impl Encoding for FcEncoding {
    fn inputs(&self) -> usize {
        self.inputs
    }

    fn weights(&self) -> usize {
        self.rows * self.inputs
    }

    fn outputs(&self) -> usize {
        self.rows
    }

    /// Input polynomials: ⌈n_i / n'_i⌉.
    fn input_blocks(&self) -> usize {
        self.inputs.div_ceil(self.block_inputs)
    }

    /// Output polynomials: ⌈n_o / n'_o⌉.
    fn output_blocks(&self) -> usize {
        self.rows.div_ceil(self.block_rows)
    }

    /// Matrix polynomials: one per input block and output block.
    fn weight_blocks(&self) -> usize {
        self.input_blocks() * self.output_blocks()
    }

    /// Input polynomial `block` of `x`.
    fn input(&self, x: &[u64], block: usize) -> Vec<u64> {
        let mut poly = vec![0u64; self.degree];
        let start = block * self.block_inputs;
        let end = (start + self.block_inputs).min(self.inputs);
        poly[..end - start].copy_from_slice(&x[start..end]);
        poly
    }

    /// Matrix polynomial `block` (output block major, then input blocks) of `w` (`rows ×
    /// inputs`, row-major).
    fn weight(&self, w: &[i64], block: usize) -> Vec<i64> {
        let (ob, ib) = (block / self.input_blocks(), block % self.input_blocks());
        let mut poly = vec![0i64; self.degree];
        let n = self.block_inputs;
        for r in 0..self.block_rows.min(self.rows - ob * self.block_rows) {
            let row = ob * self.block_rows + r;
            for j in 0..n.min(self.inputs - ib * n) {
                poly[r * n + n - 1 - j] = w[row * self.inputs + ib * n + j];
            }
        }
        poly
    }

    /// Output polynomial `block`'s terms: (input block, matrix block) pairs to multiply and sum.
    fn output_terms(&self, block: usize) -> Vec<(usize, usize)> {
        (0..self.input_blocks())
            .map(|ib| (ib, block * self.input_blocks() + ib))
            .collect()
    }

    /// Each output polynomial reads matrix polynomials of its own.
    fn weight_run(&self) -> usize {
        1
    }

    /// The outputs output polynomial `block` holds: (coefficient, row).
    fn output_places(&self, block: usize) -> Vec<(usize, usize)> {
        let n = self.block_inputs;
        (0..self.block_rows.min(self.rows - block * self.block_rows))
            .map(|r| (r * n + n - 1, block * self.block_rows + r))
            .collect()
    }
}
