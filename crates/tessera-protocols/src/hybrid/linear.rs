//! Linear maps with one party's private coefficients on α values: the dense and convolution
//! layers of private inference (MOTION2NX, Braun et al., App. A.3), where
//! the model owner's weights multiply the client's data.
//!
//! A map is `y = W·cols(x)`: `W` of `rows × inner` private to its owner, `cols(x)` the public
//! gather of `x` into `inner × cols` (an image-to-column matrix for a convolution, `x` itself as
//! one column for a dense layer), `y` of `rows × cols`. On x = Δx − δx (α), with the other
//! party's mask share δₚ:
//!
//! y = W·cols(Δx) − W·cols(δₒ) − W·cols(δₚ).
//!
//! The owner computes the first two terms itself, the first online. The third is made in the
//! setup by Gilboa's products ([`tessera_ot::triples::TripleGenerator`]: an OT per bit of a
//! multiplier, `⌈(ℓ − i)/8⌉` bytes of corrections per element multiplied and multiplier bit
//! i), with the multipliers on whichever side has fewer:
//! - maps of several columns (convolutions): for each row r of `W`, the other party's rows of
//!   `cols(δₚ)` times the owner's coefficients W[r, k] themselves, chosen multipliers of the
//!   fewest bits that hold every coefficient of the map in two's complement
//!   ([`tessera_ot::triples::multiplier_width`]), which the owner states first. A network's weights lie in a small
//!   range: at ℓ = 32 and f = 10, weights below 8 in magnitude take 14 bits, 50 bytes of
//!   corrections per element instead of the 80 of ℓ-bit multipliers. The other party learns
//!   that width (the magnitude of the map's largest coefficient to within a factor of two),
//!   public as the per-layer scales of CrypTFlow2's fixed point are. `rows·inner` multipliers;
//! - maps of one column (dense layers): the owner's columns of `W` times random multipliers
//!   `y[k]` of the other party (ℓ random OTs each), which then sends E = cols(δₚ) − y; the
//!   owner adds W·E. `inner` multipliers instead of `rows·inner`.
//!
//! Either way `rows·inner·cols` elements are multiplied. Online the map is local: the output
//! is in A.
//!
//! A map may be grouped (grouped and depthwise convolutions, a BatchNormalization on its own as
//! a depthwise 1×1 one): `cols(x)` is then `groups` blocks of `inner × cols`, and the rows of
//! `W`, `rows / groups` per group, each take their group's block (`W` block-diagonal, its zero
//! blocks neither stored nor multiplied). The setup needs the owner's coefficients (the model is known before any query;
//! the client's data is not).

use crate::Error;

/// The public shape of a linear map: see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LinearMap {
    rows: usize,
    inner: usize,
    cols: usize,
    inputs: usize,
    groups: usize,
    /// `groups · inner × cols`: the input element at each place of `cols(x)`, or `u32::MAX`
    /// for zero.
    gather: Vec<u32>,
}

/// The owner's coefficients of one linear map: `W` (`rows × inner`, row-major) and a bias per
/// row, added to each of its columns; ring elements of the map's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinearWeights {
    /// `W`.
    pub matrix: Vec<u64>,
    /// `rows` elements.
    pub bias: Vec<u64>,
}

/// The gather entry for a zero (padding).
pub const ZERO: u32 = u32::MAX;

impl LinearMap {
    /// A map of `W` (`rows × inner`) on inputs of `inputs` elements gathered by `gather`
    /// (`inner × cols` entries, each an input index or [`ZERO`]).
    pub fn new(
        rows: usize,
        inner: usize,
        cols: usize,
        inputs: usize,
        gather: Vec<u32>,
    ) -> Result<Self, Error> {
        Self::grouped(1, (rows, inner, cols), inputs, gather)
    }

    /// A map of `groups` groups: `W` of `rows × inner`, `rows / groups` rows per group, on
    /// inputs of `inputs` elements gathered by `gather` (`groups · inner × cols` entries, group
    /// g's block of `inner` rows after group g − 1's).
    pub fn grouped(
        groups: usize,
        (rows, inner, cols): (usize, usize, usize),
        inputs: usize,
        gather: Vec<u32>,
    ) -> Result<Self, Error> {
        let bad = |why: String| Err(Error::Input(format!("linear map: {why}")));
        let entries = groups.checked_mul(inner).and_then(|n| n.checked_mul(cols));
        if entries != Some(gather.len()) {
            return bad(format!(
                "{} gather entries for {groups} × {inner} × {cols}",
                gather.len()
            ));
        }
        let shaped = rows > 0 && inner > 0 && cols > 0 && groups > 0 && rows % groups == 0;
        if !shaped || inputs >= ZERO as usize {
            return bad(format!(
                "shape {rows} × {inner} × {cols} in {groups} groups on {inputs} inputs"
            ));
        }
        if let Some(g) = gather.iter().find(|&&g| g != ZERO && g as usize >= inputs) {
            return bad(format!("gathers input {g} of {inputs}"));
        }
        Ok(LinearMap {
            rows,
            inner,
            cols,
            inputs,
            groups,
            gather,
        })
    }

    /// A dense layer: `W` of `outputs × inputs` times the input as one column.
    pub fn dense(inputs: usize, outputs: usize) -> Result<Self, Error> {
        let gather = (0..inputs).map(|i| i as u32).collect();
        Self::new(outputs, inputs, 1, inputs, gather)
    }

    /// `(rows, inner, cols)`: `inner` per group.
    pub fn shape(&self) -> (usize, usize, usize) {
        (self.rows, self.inner, self.cols)
    }

    /// Groups (1 unless grouped).
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// The group of row `r`.
    pub(super) fn group_of(&self, r: usize) -> usize {
        r / (self.rows / self.groups)
    }

    /// Input elements.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Output elements: `rows × cols`.
    pub fn outputs(&self) -> usize {
        self.rows * self.cols
    }

    /// `cols(x)`: `groups · inner × cols`.
    pub fn gather(&self, x: &[u64]) -> Vec<u64> {
        self.gather
            .iter()
            .map(|&g| if g == ZERO { 0 } else { x[g as usize] })
            .collect()
    }

    /// This map on `batch` inputs side by side (input b at b·inputs): the same W on
    /// `batch·cols` columns, input b's columns after input b − 1's. Its outputs are row by
    /// row over all inputs; [`LinearMap::batched_order`] puts them input by input.
    pub fn batched(&self, batch: usize) -> Result<LinearMap, Error> {
        let (rows, inner, cols) = self.shape();
        let too_many = || {
            Error::Input(format!(
                "linear map: {batch} inputs of {} elements",
                self.inputs
            ))
        };
        let inputs = self.inputs.checked_mul(batch).ok_or_else(too_many)?;
        u32::try_from(inputs).map_err(|_| too_many())?;
        let mut gather = Vec::with_capacity(self.gather.len() * batch);
        for k in 0..self.groups * inner {
            let row = &self.gather[k * cols..(k + 1) * cols];
            for b in 0..batch {
                let offset = (b * self.inputs) as u32;
                gather.extend(
                    row.iter()
                        .map(|&g| if g == ZERO { ZERO } else { g + offset }),
                );
            }
        }
        LinearMap::grouped(self.groups, (rows, inner, cols * batch), inputs, gather)
    }

    /// The gather that puts [`LinearMap::batched`]'s outputs input by input: output (r, c)
    /// of input b, at `r·batch·cols + b·cols + c` there, goes to `b·rows·cols + r·cols + c`.
    pub fn batched_order(&self, batch: usize) -> Vec<u32> {
        let (rows, _, cols) = self.shape();
        (0..batch)
            .flat_map(|b| {
                (0..rows).flat_map(move |r| {
                    (0..cols).map(move |c| (r * batch * cols + b * cols + c) as u32)
                })
            })
            .collect()
    }

    /// `W·c` for `c` = `cols(x)` (mod 2^64; the caller reduces), plus `bias` per row if given:
    /// each row on its group's block of `c`.
    pub fn multiply(&self, w: &[u64], c: &[u64], bias: Option<&[u64]>) -> Vec<u64> {
        super::matrix::grouped_product(w, c, self.shape(), self.groups, bias)
    }

    /// Bytes a fingerprint covers.
    pub(super) fn digest_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(32 + 4 * self.gather.len());
        for v in [self.rows, self.inner, self.cols, self.inputs, self.groups] {
            b.extend_from_slice(&(v as u64).to_le_bytes());
        }
        b.extend(self.gather.iter().flat_map(|g| g.to_le_bytes()));
        b
    }

    /// An error unless `w` fits this map.
    pub(super) fn check(&self, w: &LinearWeights) -> Result<(), Error> {
        if w.matrix.len() != self.rows * self.inner || w.bias.len() != self.rows {
            return Err(Error::Input(format!(
                "linear weights of {} and {} elements for a {} × {} map",
                w.matrix.len(),
                w.bias.len(),
                self.rows,
                self.inner
            )));
        }
        Ok(())
    }
}

/// SecureML's local truncation of an A share by `f` bits (Mohassel and Zhang, S&P 2017,
/// Theorem 1): party 0 shifts its share, party 1 shifts the negation of its own and negates
/// back. The shares then add up to ⌊x/2^f⌋ or one more, unless x's shares wrap, which happens
/// with probability at most 2^(ℓₓ + 1 − ℓ) for |x| < 2^ℓₓ.
pub(super) fn truncate_share(share: u64, bits: u32, f: u32, side: usize) -> u64 {
    let mask = super::ring::mask(bits);
    let s = share & mask;
    if side == 0 {
        s >> f
    } else {
        (((s.wrapping_neg() & mask) >> f).wrapping_neg()) & mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grouped map equals the map of its block-diagonal `W` (zeros outside the blocks), and
    /// batched, each input alone.
    #[test]
    fn a_grouped_map_is_its_block_diagonal_map() {
        // 3 groups of inner 2 over 2 columns, 2 rows per group, on 7 inputs.
        let gather = vec![0, 1, 2, 3, 4, 5, 6, ZERO, 1, 3, 5, 0];
        let grouped = LinearMap::grouped(3, (6, 2, 2), 7, gather.clone()).unwrap();
        let full = LinearMap::new(6, 6, 2, 7, gather).unwrap();
        let w: Vec<u64> = (1..=12).collect();
        let mut block_diagonal = vec![0u64; 36];
        for r in 0..6 {
            let g = r / 2;
            block_diagonal[r * 6 + 2 * g..r * 6 + 2 * g + 2].copy_from_slice(&w[r * 2..r * 2 + 2]);
        }
        let x: Vec<u64> = (0..14).map(|v| 3 * v + 1).collect();
        let bias = [1, 2, 3, 4, 5, 6];
        let want = full.multiply(&block_diagonal, &full.gather(&x[..7]), Some(&bias));
        assert_eq!(
            grouped.multiply(&w, &grouped.gather(&x[..7]), Some(&bias)),
            want
        );
        let batched = grouped.batched(2).unwrap();
        let y = batched.multiply(&w, &batched.gather(&x), Some(&bias));
        let y: Vec<u64> = grouped
            .batched_order(2)
            .iter()
            .map(|&i| y[i as usize])
            .collect();
        assert_eq!(&y[..12], &want[..]);
        let second = full.multiply(&block_diagonal, &full.gather(&x[7..]), Some(&bias));
        assert_eq!(&y[12..], &second[..]);
        assert!(
            LinearMap::grouped(4, (6, 2, 2), 7, vec![0; 16]).is_err(),
            "6 rows in 4 groups"
        );
    }

    /// A padded map (a convolution-like gather with zeros) on three inputs side by side,
    /// its outputs put input by input, equals the map on each input alone.
    #[test]
    fn a_batched_map_equals_the_map_on_each_input() {
        // 2 rows, inner 3, 4 columns over 5 inputs, one padding entry.
        let gather = vec![0, 1, 2, 3, 1, 2, 3, 4, ZERO, 0, 4, 2];
        let map = LinearMap::new(2, 3, 4, 5, gather).unwrap();
        let w: Vec<u64> = (1..=6).collect();
        let bias = [100, 200];
        let batch = 3;
        let x: Vec<u64> = (0..5 * batch as u64).map(|v| v * v + 1).collect();
        let batched = map.batched(batch).unwrap();
        let y = batched.multiply(&w, &batched.gather(&x), Some(&bias));
        let order = map.batched_order(batch);
        let y: Vec<u64> = order.iter().map(|&i| y[i as usize]).collect();
        for (b, image) in x.chunks_exact(5).enumerate() {
            let alone = map.multiply(&w, &map.gather(image), Some(&bias));
            assert_eq!(&y[b * 8..(b + 1) * 8], &alone[..], "input {b}");
        }
    }
}
