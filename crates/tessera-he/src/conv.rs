//! Cheetah's coefficient encoding of a two-dimensional convolution (Huang et al., USENIX
//! Security 2022, §4.1, HomConv): a block of the input, `C_w × H_w × W_w` with
//! `C_w·H_w·W_w <= N`, is the polynomial t̂ with t̂[c·H_w·W_w + i·W_w + j] = T[c, i, j]; a
//! kernel's block the polynomial k̂ with k̂[O − c·H_w·W_w − l·W_w − l'] = K[c, l, l'], where
//! O = H_w·W_w·(C_w − 1) + W_w·(h − 1) + w − 1. In t̂·k̂ mod X^N + 1 the coefficient
//! O + i·W_w + j is the convolution's output at (i, j) for i <= H_w − h, j <= W_w − w, with no
//! other product landing there and no wrap-around; no rotations, so a product of one
//! ciphertext by one plaintext per block. Blocks overlap by the kernel's size less one.
//!
//! This module is the encoding alone (plaintext polynomials in, outputs out), on an input
//! already padded; a strided convolution is computed at stride 1 and only every s-th output
//! is kept (and sent back).

use crate::Error;
use crate::linear::Encoding;

/// A convolution's public shape: `channels × height × width` in (padded), `out_channels`
/// kernels of `channels × kernel[0] × kernel[1]`, moved by `stride`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvShape {
    /// C.
    pub channels: usize,
    /// H (after padding).
    pub height: usize,
    /// W (after padding).
    pub width: usize,
    /// M.
    pub out_channels: usize,
    /// The kernel's height and width.
    pub kernel: [usize; 2],
    /// The stride: the blocks compute every place, the answer keeps every stride-th.
    pub stride: [usize; 2],
}

/// How the input is cut into polynomials: `channels` × `height` × `width` per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    /// C_w.
    pub channels: usize,
    /// H_w.
    pub height: usize,
    /// W_w.
    pub width: usize,
    /// M_w: out channels per kernel and output polynomial (see [`ConvEncoding::cheapest`]).
    pub out_channels: usize,
}

impl Partition {
    /// K = (h − 1)·W_w + w − 1: the kernel's reach within a block.
    fn kernel_reach(&self, shape: ConvShape) -> usize {
        let [kh, kw] = shape.kernel;
        self.width * (kh - 1) + kw - 1
    }

    /// The most out channels a polynomial holds at this partition: 1, or M_w with
    /// (M_w − 1)·Δ + (2C_w − 1)·S + K ≤ N with Δ = C_w·S ([`ConvEncoding::cheapest`]).
    fn out_channels_fitting(&self, shape: ConvShape, degree: usize) -> usize {
        let s = self.height * self.width;
        let reach = self.kernel_reach(shape);
        let spacing = self.channels * s;
        let footprint = (2 * self.channels - 1) * s + reach;
        let more = degree.saturating_sub(footprint) / spacing;
        (1 + more).min(shape.out_channels).max(1)
    }
}

/// The encoding of one convolution at one ring degree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvEncoding {
    shape: ConvShape,
    part: Partition,
    degree: usize,
}

impl ConvShape {
    /// The output's height and width.
    pub fn output(&self) -> [usize; 2] {
        let [h, w] = self.unstrided();
        [h.div_ceil(self.stride[0]), w.div_ceil(self.stride[1])]
    }

    /// The output's height and width at stride 1, which the blocks compute.
    fn unstrided(&self) -> [usize; 2] {
        [
            self.height + 1 - self.kernel[0],
            self.width + 1 - self.kernel[1],
        ]
    }

    fn check(&self, degree: usize) -> Result<(), Error> {
        let [kh, kw] = self.kernel;
        let fits = kh >= 1 && kw >= 1 && kh <= self.height && kw <= self.width && kh * kw <= degree;
        if !fits || self.channels == 0 || self.out_channels == 0 || self.stride.contains(&0) {
            return Err(Error::Length {
                what: "convolution kernel within its input",
                expected: degree,
                got: kh * kw,
            });
        }
        Ok(())
    }
}

impl ConvEncoding {
    /// The encoding whose partition sends the fewest words: `input_words` per input block
    /// (the client's ciphertexts) and `output_words` per output block (the server's answers),
    /// over every block height, width and channel count that fit N, each with as many out
    /// channels per output polynomial as then fit.
    ///
    /// Several out channels share a polynomial (M_w > 1) when kernel m's block is placed
    /// Δ = C_w·S further than kernel m − 1's (S = H_w·W_w, K = (h − 1)·W_w + w − 1): a
    /// product's terms for out channel m lie in [m·Δ, m·Δ + (2C_w − 1)·S + K), its outputs
    /// in [O + m·Δ, O + m·Δ + S − K) with O = (C_w − 1)·S + K, so that no other channel's
    /// terms reach them, and the last channel's terms stay below N (no wrap-around). Small
    /// images (ResNet's 14 × 14 and 7 × 7 stages) then answer with a fraction of the
    /// polynomials, one per out channel before.
    pub fn cheapest(
        shape: ConvShape,
        degree: usize,
        input_words: usize,
        output_words: usize,
    ) -> Result<Self, Error> {
        shape.check(degree)?;
        let [kh, kw] = shape.kernel;
        let mut best: Option<(usize, Partition)> = None;
        for height in kh..=shape.height {
            for width in kw..=shape.width.min(degree / height) {
                let most = shape.channels.min(degree / (height * width));
                for channels in 1..=most {
                    let mut part = Partition {
                        channels,
                        height,
                        width,
                        out_channels: 1,
                    };
                    part.out_channels = part.out_channels_fitting(shape, degree);
                    let enc = ConvEncoding {
                        shape,
                        part,
                        degree,
                    };
                    let cost =
                        enc.input_blocks() * input_words + enc.output_blocks() * output_words;
                    if best.is_none_or(|(c, _)| cost < c) {
                        best = Some((cost, part));
                    }
                }
            }
        }
        let (_, part) = best.ok_or(Error::Length {
            what: "convolution block",
            expected: degree,
            got: kh * kw,
        })?;
        Ok(ConvEncoding {
            shape,
            part,
            degree,
        })
    }

    /// The partition chosen.
    pub fn partition(&self) -> Partition {
        self.part
    }

    /// O: where out channel 0's outputs start.
    fn offset(&self) -> usize {
        let p = self.part;
        p.height * p.width * (p.channels - 1) + p.kernel_reach(self.shape)
    }

    /// Δ: how much further out channel m's outputs start than m − 1's.
    fn spacing(&self) -> usize {
        let p = self.part;
        p.channels * p.height * p.width
    }

    fn out_groups(&self) -> usize {
        self.shape.out_channels.div_ceil(self.part.out_channels)
    }

    fn steps(&self) -> [usize; 2] {
        [
            self.part.height + 1 - self.shape.kernel[0],
            self.part.width + 1 - self.shape.kernel[1],
        ]
    }

    fn channel_blocks(&self) -> usize {
        self.shape.channels.div_ceil(self.part.channels)
    }

    fn spatial_grid(&self) -> [usize; 2] {
        let [sh, sw] = self.steps();
        let [oh, ow] = self.shape.unstrided();
        [oh.div_ceil(sh), ow.div_ceil(sw)]
    }

    fn spatial_blocks(&self) -> usize {
        let [a, b] = self.spatial_grid();
        a * b
    }

    fn spatial(&self, s: usize) -> (usize, usize) {
        let cols = self.spatial_grid()[1];
        (s / cols, s % cols)
    }
}

impl Encoding for ConvEncoding {
    fn inputs(&self) -> usize {
        let s = self.shape;
        s.channels * s.height * s.width
    }

    fn weights(&self) -> usize {
        let s = self.shape;
        s.out_channels * s.channels * s.kernel[0] * s.kernel[1]
    }

    fn outputs(&self) -> usize {
        let [h, w] = self.shape.output();
        self.shape.out_channels * h * w
    }

    /// The number of input polynomials: channel blocks × spatial blocks.
    fn input_blocks(&self) -> usize {
        self.channel_blocks() * self.spatial_blocks()
    }

    /// The number of output polynomials: out-channel groups (M_w each) × spatial blocks.
    fn output_blocks(&self) -> usize {
        self.out_groups() * self.spatial_blocks()
    }

    /// The number of kernel polynomials: out-channel groups × channel blocks.
    fn weight_blocks(&self) -> usize {
        self.out_groups() * self.channel_blocks()
    }

    /// Input polynomial `block` (channel block major, then spatial blocks row by row) from the
    /// input `x` (`C × H × W`, row-major): N coefficients, zeros beyond the input.
    fn input(&self, x: &[u64], block: usize) -> Vec<u64> {
        let (cb, (bi, bj)) = (
            block / self.spatial_blocks(),
            self.spatial(block % self.spatial_blocks()),
        );
        let [sh, sw] = self.steps();
        let ConvShape {
            channels,
            height,
            width,
            ..
        } = self.shape;
        let p = self.part;
        let mut poly = vec![0u64; self.degree];
        for c in 0..p.channels {
            let ch = cb * p.channels + c;
            for i in 0..p.height {
                let row = bi * sh + i;
                if ch >= channels || row >= height {
                    continue;
                }
                for j in 0..p.width.min(width.saturating_sub(bj * sw)) {
                    poly[(c * p.height + i) * p.width + j] =
                        x[(ch * height + row) * width + bj * sw + j];
                }
            }
        }
        poly
    }

    /// Kernel polynomial `block` (out-channel group major, then channel blocks) from the
    /// kernels `k` (`M × C × h × w`, row-major): the group's out channels Δ apart.
    fn weight(&self, k: &[i64], block: usize) -> Vec<i64> {
        let (group, cb) = (block / self.channel_blocks(), block % self.channel_blocks());
        let ConvShape {
            channels,
            out_channels,
            kernel: [kh, kw],
            ..
        } = self.shape;
        let p = self.part;
        let mut poly = vec![0i64; self.degree];
        let first = group * p.out_channels;
        for (local, m) in (first..out_channels.min(first + p.out_channels)).enumerate() {
            let offset = self.offset() + local * self.spacing();
            for c in 0..p.channels.min(channels.saturating_sub(cb * p.channels)) {
                let ch = cb * p.channels + c;
                for l in 0..kh {
                    for l2 in 0..kw {
                        let at = offset - (c * p.height + l) * p.width - l2;
                        poly[at] = k[((m * channels + ch) * kh + l) * kw + l2];
                    }
                }
            }
        }
        poly
    }

    /// Output polynomial `block`'s place: the input block of spatial block `block %
    /// spatial_blocks()` times the kernels of out-channel group `block / spatial_blocks()`,
    /// summed over the channel blocks. Returns (input block, kernel block) pairs.
    fn output_terms(&self, block: usize) -> Vec<(usize, usize)> {
        let (group, s) = (block / self.spatial_blocks(), block % self.spatial_blocks());
        (0..self.channel_blocks())
            .map(|cb| {
                (
                    cb * self.spatial_blocks() + s,
                    group * self.channel_blocks() + cb,
                )
            })
            .collect()
    }

    /// An out-channel group's spatial blocks read its kernel polynomials.
    fn weight_run(&self) -> usize {
        self.spatial_blocks()
    }

    /// The outputs output polynomial `block` holds: (coefficient, index into the `M × H' × W'`
    /// output, row-major), out channel by out channel of its group.
    fn output_places(&self, block: usize) -> Vec<(usize, usize)> {
        let (group, (bi, bj)) = (
            block / self.spatial_blocks(),
            self.spatial(block % self.spatial_blocks()),
        );
        let [sh, sw] = self.steps();
        let [fh, fw] = self.shape.unstrided();
        let [oh, ow] = self.shape.output();
        let [s0, s1] = self.shape.stride;
        let p = self.part;
        let first = group * p.out_channels;
        let mut places = Vec::with_capacity(p.out_channels * sh * sw);
        for (local, m) in (first..self.shape.out_channels.min(first + p.out_channels)).enumerate() {
            let offset = self.offset() + local * self.spacing();
            for i in 0..sh.min(fh.saturating_sub(bi * sh)) {
                for j in 0..sw.min(fw.saturating_sub(bj * sw)) {
                    let (row, col) = (bi * sh + i, bj * sw + j);
                    if row % s0 == 0 && col % s1 == 0 {
                        let out = (m * oh + row / s0) * ow + col / s1;
                        places.push((offset + i * p.width + j, out));
                    }
                }
            }
        }
        places
    }
}
