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
use tessera_ot::OtChoice;

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
    /// A convolution's window, if the map is one ([`LinearMap::convolution`]).
    window: Option<Images>,
}

/// A convolution's geometry per group: what lets a map be computed as one on images
/// (Cheetah's HomConv, [`tessera_he::conv`]) instead of on `cols(x)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvGeometry {
    /// Input channels per group.
    pub channels: usize,
    /// The image's height after padding.
    pub height: usize,
    /// The image's width after padding.
    pub width: usize,
    /// The kernel's height and width.
    pub kernel: [usize; 2],
    /// The stride's.
    pub stride: [usize; 2],
}

impl ConvGeometry {
    /// The output's height and width.
    pub fn output(&self) -> [usize; 2] {
        [
            (self.height - self.kernel[0]) / self.stride[0] + 1,
            (self.width - self.kernel[1]) / self.stride[1] + 1,
        ]
    }
}

/// A map's inputs as padded images: its geometry, the images per group (a batch's), and
/// the input element at each place of each (group by group, image by image, channel, row,
/// column), or [`ZERO`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Images {
    geometry: ConvGeometry,
    count: usize,
    gather: Vec<u32>,
}

/// How a map's products with the other party's mask are made in the setup: the choice each
/// [`super::Program::linear`] names, which both parties' programs (their fingerprints) share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinearMethod {
    /// Gilboa's products on correlated OT (MOTION2NX; this module's documentation).
    Products,
    /// Homomorphic products on the other party's encrypted mask (Cheetah §4, HomConv and
    /// HomFC; `hybrid::lattice`).
    Lattice,
}

impl LinearMethod {
    /// The bytes both parties send in the setup for `map`'s products in Z_2^`bits` by this
    /// method, with `ot`'s correlated OTs and the owner's coefficients of `width` bits (the
    /// lattice keys, sent once per session, left out); infinite where the method cannot
    /// make them (a map the lattice parameters cannot encode).
    pub fn setup_bytes(self, map: &LinearMap, bits: u32, width: u32, ot: OtChoice) -> f64 {
        super::prepare::linear_bytes(map, (self, bits, width), ot.bytes_per_cot())
    }

    /// The method whose setup sends fewer bytes for `map` ([`LinearMethod::setup_bytes`]).
    pub fn cheaper(map: &LinearMap, bits: u32, width: u32, ot: OtChoice) -> LinearMethod {
        let bytes = |m: LinearMethod| m.setup_bytes(map, bits, width, ot);
        if bytes(LinearMethod::Lattice) < bytes(LinearMethod::Products) {
            LinearMethod::Lattice
        } else {
            LinearMethod::Products
        }
    }

    /// The byte a fingerprint covers.
    pub(super) fn code(self) -> u8 {
        match self {
            LinearMethod::Products => 0,
            LinearMethod::Lattice => 1,
        }
    }
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
            window: None,
        })
    }

    /// This map as a convolution of `geometry` over its input (group by group): `cols(x)`
    /// then reads, for column `(image, oy, ox)` and row `(c, i, j)` of a group, the place
    /// `(c, oy·stride + i, ox·stride + j)` of that image. An error unless `inner` and `cols`
    /// fit the geometry and every place is read from one input element (or zero) throughout.
    pub fn convolution(mut self, geometry: ConvGeometry) -> Result<Self, Error> {
        let g = geometry;
        let bad = |why: String| Err(Error::Input(format!("convolution map: {why}")));
        let [kh, kw] = g.kernel;
        let fits = kh >= 1 && kw >= 1 && kh <= g.height && kw <= g.width;
        let rows = g.channels.checked_mul(kh).and_then(|n| n.checked_mul(kw));
        let image_len = g.channels.checked_mul(g.height);
        let image_len = image_len.and_then(|n| n.checked_mul(g.width));
        let image_len = match image_len {
            Some(n) if fits && !g.stride.contains(&0) && rows == Some(self.inner) => n,
            _ => return bad(format!("{g:?} for {} rows of cols(x)", self.inner)),
        };
        let [oh, ow] = g.output();
        if !self.cols.is_multiple_of(oh * ow) {
            return bad(format!("{} columns for outputs of {oh} × {ow}", self.cols));
        }
        let count = self.cols / (oh * ow);
        // Images hold what the gather reads and their padding: a few times its entries at
        // most for a real convolution, never an allocation a huge padding or stride asks.
        let places = (self.groups * count)
            .checked_mul(image_len)
            .filter(|&n| n <= 16 * (self.gather.len() + self.inputs))
            .ok_or_else(|| Error::Input(format!("convolution map: images of {g:?}")))?;
        let mut gather = vec![None; places];
        for (k, row) in self.gather.chunks_exact(self.cols).enumerate() {
            let (group, k) = (k / self.inner, k % self.inner);
            let (c, i, j) = (k / (kh * kw), k / kw % kh, k % kw);
            for (col, &source) in row.iter().enumerate() {
                let (image, y, x) = (col / (oh * ow), col / ow % oh, col % ow);
                let (y, x) = (y * g.stride[0] + i, x * g.stride[1] + j);
                let place =
                    (((group * count + image) * g.channels + c) * g.height + y) * g.width + x;
                match gather[place] {
                    None => gather[place] = Some(source),
                    Some(s) if s == source => {}
                    Some(_) => return bad(format!("place {place} of the images read twice")),
                }
            }
        }
        self.window = Some(Images {
            geometry,
            count,
            gather: gather.into_iter().map(|s| s.unwrap_or(ZERO)).collect(),
        });
        Ok(self)
    }

    /// The convolution this map is, per group: its geometry and images per group. A map
    /// made without one is a 1 × 1 convolution over one image of `inner` channels, one row
    /// of `cols` places: `cols(x)` itself.
    pub fn geometry(&self) -> (ConvGeometry, usize) {
        match &self.window {
            Some(w) => (w.geometry, w.count),
            None => (
                ConvGeometry {
                    channels: self.inner,
                    height: 1,
                    width: self.cols,
                    kernel: [1, 1],
                    stride: [1, 1],
                },
                1,
            ),
        }
    }

    /// The images of `x` ([`LinearMap::geometry`]): group by group, image by image.
    pub fn images(&self, x: &[u64]) -> Vec<u64> {
        match &self.window {
            Some(w) => w
                .gather
                .iter()
                .map(|&g| if g == ZERO { 0 } else { x[g as usize] })
                .collect(),
            None => self.gather(x),
        }
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
        let map = LinearMap::grouped(self.groups, (rows, inner, cols * batch), inputs, gather)?;
        match &self.window {
            Some(w) => map.convolution(w.geometry),
            None => Ok(map),
        }
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
        if let Some(w) = &self.window {
            let g = w.geometry;
            let [kh, kw] = g.kernel;
            let [sh, sw] = g.stride;
            for v in [g.channels, g.height, g.width, kh, kw, sh, sw] {
                b.extend_from_slice(&(v as u64).to_le_bytes());
            }
        }
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
