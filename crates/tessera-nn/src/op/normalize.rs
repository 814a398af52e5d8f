//! Softmax inside a network and LayerNormalization (ONNX Operators), over per-sample axes,
//! written once over [`Numbers`] as the smooth functions are:
//!
//! - softmax as `e^(x − max)/Σ e^(x − max)` (the maximum by a tree of comparisons, so that exp
//!   sees x ≤ 0, where its limit form is accurate; the sum's reciprocal by Newton's steps, the
//!   sum first divided by ⌈n/250⌉ to stay in their reach: axes of up to 5 000 elements); a
//!   Softmax at the end of the graph is still the client's to apply in the clear;
//! - LayerNormalization (opset 17, and the ReduceMean/Sub/Pow/Sqrt/Div pattern PyTorch exports
//!   before it, which the other operators import) as `(x − μ)·(σ² + ε)^(−1/2)`, the mean and
//!   variance by sums times 1/n kept to f bits of relative precision
//!   ([`crate::fixed::Fixed::multiplier`]), then γ and β as a product by constants and an
//!   addition of them (the server's weights).

use super::smooth::{EXP_PRODUCTS, RECIPROCAL_PRODUCTS, RSQRT_PRODUCTS};
use super::smooth::{Numbers, Plain, exp, reciprocal, rsqrt};
use super::{AddConst, Evaluate, Family, Io, Operator, Scale};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{computed, weight};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::model::LayerCost;
use crate::secure::{Compiler, Shared};

/// The largest axis a softmax's reciprocal reaches: its sum over at most this many is divided
/// by at most 20 to stay in [0.05, 250].
const SOFTMAX_MOST: usize = 5000;

/// A softmax over per-sample `axes` (ONNX's less one; one axis from opset 13 on, the axis and
/// those after it before).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Softmax {
    /// The axes, ascending.
    pub axes: Vec<usize>,
}

/// A layer normalisation over the per-sample axes from `axis` on, then `γ·y + β`.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerNorm {
    /// The first normalised axis (ONNX's less one).
    pub axis: usize,
    /// ε.
    pub epsilon: f32,
    /// γ, of the normalised axes' shape.
    pub scale: Vec<f32>,
    /// β, likewise.
    pub bias: Vec<f32>,
}

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Softmax",
        import: softmax_node,
        supported: "Softmax (any axis; at the output the client's), LayerNormalization",
    },
    Family {
        name: "LayerNormalization",
        import: layer_norm,
        supported: "",
    },
];

/// For a reduction's groups over a tensor of `n` elements, each element's output.
fn owners(groups: &[Vec<u32>], n: usize) -> Vec<u32> {
    let mut owner = vec![0u32; n];
    for g in groups {
        for (o, &i) in g.iter().enumerate() {
            owner[i as usize] = o as u32;
        }
    }
    owner
}

/// The groups of a reduction over `axes` of `shape`, and each element's output.
fn reduction(shape: &[usize], axes: &[usize]) -> (Vec<Vec<u32>>, Vec<u32>) {
    let groups: Vec<Vec<u32>> = kernels::reduction_groups(shape, axes)
        .into_iter()
        .map(|g| g.into_iter().map(|i| i as u32).collect())
        .collect();
    let owner = owners(&groups, shape.iter().product());
    (groups, owner)
}

/// `e^(x − max)/Σ e^(x − max)` over `axes` of `shape`.
fn softmax<N: Numbers>(
    n: &mut N,
    x: &N::V,
    shape: &[usize],
    axes: &[usize],
) -> Result<N::V, Error> {
    let (groups, owner) = reduction(shape, axes);
    let count = groups.len();
    let most = n.maximum(x, &groups)?;
    let most = n.gather(&most, &owner)?;
    let shifted = n.sub(x, &most)?;
    let e = exp(n, &shifted)?;
    let sum = n.sum(&e, &groups)?;
    // Σ in [1, count]: divided by k into Newton's reach [0.05, 250], 1/Σ = (1/(Σ/k))/k.
    let k = count.div_ceil(250).max(1) as f32;
    let sum = n.scale(&sum, 1.0 / k)?;
    let r = reciprocal(n, &sum)?;
    let r = n.scale(&r, 1.0 / k)?;
    let r = n.gather(&r, &owner)?;
    n.mul(&e, &r)
}

/// `(x − μ)/√(σ² + ε)` over `axes` of `shape`.
fn normalized<N: Numbers>(
    n: &mut N,
    x: &N::V,
    shape: &[usize],
    axes: &[usize],
    epsilon: f32,
) -> Result<N::V, Error> {
    let (groups, owner) = reduction(shape, axes);
    let share = 1.0 / groups.len() as f32;
    let sum = n.sum(x, &groups)?;
    let mean = n.scale(&sum, share)?;
    let mean = n.gather(&mean, &owner)?;
    let centred = n.sub(x, &mean)?;
    let squares = n.mul(&centred, &centred)?;
    let sum = n.sum(&squares, &groups)?;
    let variance = n.scale(&sum, share)?;
    let variance = n.shift(&variance, epsilon)?;
    let r = rsqrt(n, &variance)?;
    let r = n.gather(&r, &owner)?;
    n.mul(&centred, &r)
}

impl Operator for Softmax {
    fn ring_bits(&self) -> u32 {
        64
    }

    fn kind(&self) -> &'static str {
        "Softmax"
    }

    fn class(&self) -> &'static str {
        "Softmax"
    }

    /// Per element: exp's products and floor, one product for the quotient; per group: the
    /// maximum's comparisons, the reciprocal's products and floor.
    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let n = io.output_len()?;
        let count: usize = self.axes.iter().map(|&a| io.output[a]).product();
        let groups = n / count.max(1);
        let per_element = n.checked_mul(EXP_PRODUCTS + 1)?;
        Some(LayerCost {
            products: per_element.checked_add(groups.checked_mul(RECIPROCAL_PRODUCTS)?)?,
            maxima: groups.checked_mul(count.saturating_sub(1))?,
            relus: n.checked_add(groups)?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        softmax(c, &args[0], io.input(), &self.axes)
    }

    /// One axis (opset 13 on).
    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        w.int("axis", self.axes[0] as i64 + 1);
        "Softmax"
    }
}

impl<A: Arith> Evaluate<A> for Softmax {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let x = args[0].to_vec();
        // The reference's arithmetic cannot fail.
        softmax(&mut Plain::new(a), &x, io.input(), &self.axes).unwrap_or_default()
    }
}

impl LayerNorm {
    /// The normalised axes of `shape`.
    fn axes(&self, shape: &[usize]) -> Vec<usize> {
        (self.axis..shape.len()).collect()
    }

    /// γ and β as a product by constants and an addition, on values of `shape`.
    fn affine(&self, shape: &[usize]) -> (Scale, AddConst) {
        let mut gamma = vec![1; self.axis];
        gamma.extend_from_slice(&shape[self.axis..]);
        let at = kernels::broadcast_indices(&gamma, shape);
        let beta = at.iter().map(|&i| self.bias[i]).collect();
        let scale = Scale {
            shape: gamma,
            factors: self.scale.clone(),
        };
        (scale, AddConst(beta))
    }
}

impl Operator for LayerNorm {
    fn ring_bits(&self) -> u32 {
        64
    }

    fn kind(&self) -> &'static str {
        "LayerNormalization"
    }

    fn class(&self) -> &'static str {
        "LayerNorm"
    }

    fn weights(&self) -> Vec<&[f32]> {
        vec![&self.scale, &self.bias]
    }

    fn ranges(&self) -> [&[f32]; 2] {
        [&self.scale, &self.bias]
    }

    /// Per element: the square, the quotient and γ; per group: 1/√x's products and floor.
    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let n = io.output_len()?;
        let count: usize = io.output[self.axis..].iter().product();
        let groups = n / count.max(1);
        Some(LayerCost {
            products: n
                .checked_mul(2)?
                .checked_add(groups.checked_mul(RSQRT_PRODUCTS)?)?,
            multiplications: n,
            relus: groups,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let shape = io.input();
        let y = normalized(c, &args[0], shape, &self.axes(shape), self.epsilon)?;
        let (scale, shift) = self.affine(shape);
        let y = scale.lower(c, &[y], io)?;
        shift.lower(c, &[y], io)
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let shape = w.out_shape[self.axis..].to_vec();
        w.floats("scale", &shape, &self.scale);
        w.floats("bias", &shape, &self.bias);
        w.int("axis", self.axis as i64 + 1);
        w.float("epsilon", self.epsilon);
        "LayerNormalization"
    }
}

impl<A: Arith> Evaluate<A> for LayerNorm {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        vec![a.encode_all(&self.scale)]
    }

    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let shape = io.input();
        let x = args[0].to_vec();
        let y = normalized(
            &mut Plain::new(a),
            &x,
            shape,
            &self.axes(shape),
            self.epsilon,
        )
        .unwrap_or_default();
        let (scale, shift) = self.affine(shape);
        let y = scale.eval(a, k, &[&y], io);
        let beta = shift.encode(a);
        shift.eval(a, &beta, &[&y], io)
    }
}

/// A per-sample axis of a node's attribute `name` (ONNX's, negative from the end), not the
/// batch axis.
fn sample_axis(
    imp: &Importer<'_>,
    at: &At<'_>,
    rank: usize,
    name: &str,
    default: i64,
) -> Result<usize, Refusal> {
    let axis = Attributes::of(at.node).int(name, default)?;
    imp.sample_axis(axis, rank)
        .ok_or_else(|| format!("{name} {axis}: an axis of the sample, not the batch").into())
}

/// Softmax: its axis (opset 13 on) or that axis and those after it (before, as ONNX then
/// flattened them).
fn softmax_node<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let old = imp.opset < 13;
    let axis = sample_axis(imp, at, shape.len(), "axis", if old { 1 } else { -1 })?;
    let axes: Vec<usize> = if old {
        (axis..shape.len()).collect()
    } else {
        vec![axis]
    };
    let count: usize = axes.iter().map(|&a| shape[a]).product();
    if count > SOFTMAX_MOST {
        return Err(format!("a softmax over {count} elements (at most {SOFTMAX_MOST})").into());
    }
    imp.push(at, super::Op::Softmax(Softmax { axes }), vec![x], shape)
}

/// LayerNormalization (opset 17): X, Scale and an optional B; only Y computed.
fn layer_norm<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if at.node.output.iter().skip(1).any(|o| !o.is_empty()) {
        return Err("its mean and inverse deviation outputs are not computed".into());
    }
    let (x, shape) = computed(imp, at)?;
    let axis = sample_axis(imp, at, shape.len(), "axis", -1)?;
    let epsilon = Attributes::of(at.node).float("epsilon", 1e-5)?;
    let normalised = &shape[axis..];
    let count: usize = normalised.iter().product();
    let mut part = |index: usize, what: &str, default: f32| -> Result<Vec<f32>, Refusal> {
        if at.node.input.get(index).is_none_or(|n| n.is_empty()) {
            return Ok(vec![default; count]);
        }
        let (s, values) = weight(imp, at, index, what)?;
        let fits = kernels::aligned(&s, normalised).is_some_and(|a| a == normalised);
        if !fits {
            return Err(format!("{what} of shape {s:?} for normalised axes {normalised:?}").into());
        }
        Ok(values)
    };
    let (scale, bias) = (part(1, "the scale", 1.0)?, part(2, "the bias", 0.0)?);
    let op = super::Op::LayerNorm(LayerNorm {
        axis,
        epsilon,
        scale,
        bias,
    });
    imp.push(at, op, vec![x], shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{Fixed, Float};

    /// Rows of `width` values spread over ±`spread`, as `[rows, width]`.
    fn rows(rows: usize, width: usize, spread: f32) -> Vec<f32> {
        (0..rows * width)
            .map(|i| spread * ((i as f32 * 0.618_034).fract() * 2.0 - 1.0))
            .collect()
    }

    /// The methods (in float alone, and at ℓ = 64, f = 16) against the functions in `f64`:
    /// softmax over rows of 8 and of 128 (a BERT attention row) within 10⁻³, layer
    /// normalisation within 3·10⁻³.
    #[test]
    fn softmax_and_layer_normalisation_keep_their_error() {
        let fixed = Fixed::new(64, 16).unwrap();
        for width in [8, 128] {
            let x = rows(4, width, 6.0);
            let shape = [4, width];
            let want: Vec<f64> = x
                .chunks(width)
                .flat_map(|r| {
                    let m = r.iter().fold(f32::MIN, |a, &b| a.max(b));
                    let e: Vec<f64> = r.iter().map(|&v| f64::from(v - m).exp()).collect();
                    let s: f64 = e.iter().sum();
                    e.into_iter().map(move |v| v / s)
                })
                .collect();
            let mut method = Plain::methods(&Float);
            let float = softmax(&mut method, &x, &shape, &[1]).unwrap();
            let encoded: Vec<u64> = x.iter().map(|&v| fixed.encode(v)).collect();
            let got = softmax(&mut Plain::new(&fixed), &encoded, &shape, &[1]).unwrap();
            for (name, got) in [
                ("float", float),
                ("fixed", got.iter().map(|&g| fixed.decode(g)).collect()),
            ] {
                let err = got
                    .iter()
                    .zip(&want)
                    .map(|(&g, &w)| (f64::from(g) - w).abs())
                    .fold(0.0, f64::max);
                eprintln!("softmax over {width}, {name}: {err:.2e}");
                assert!(err < 1e-3, "softmax over {width}, {name}: {err}");
            }
        }
        let x = rows(4, 16, 3.0);
        let want: Vec<f64> = x
            .chunks(16)
            .flat_map(|r| {
                let n = r.len() as f64;
                let mean = r.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
                let var = r
                    .iter()
                    .map(|&v| (f64::from(v) - mean).powi(2))
                    .sum::<f64>()
                    / n;
                r.iter()
                    .map(move |&v| (f64::from(v) - mean) / (var + 1e-5).sqrt())
            })
            .collect();
        let encoded: Vec<u64> = x.iter().map(|&v| fixed.encode(v)).collect();
        let got = normalized(&mut Plain::new(&fixed), &encoded, &[4, 16], &[1], 1e-5).unwrap();
        let err = got
            .iter()
            .zip(&want)
            .map(|(&g, &w)| (f64::from(fixed.decode(g)) - w).abs())
            .fold(0.0, f64::max);
        eprintln!("layer normalisation, fixed: {err:.2e}");
        assert!(err < 3e-3, "layer normalisation: {err}");
    }
}
