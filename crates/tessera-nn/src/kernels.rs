//! The layers' arithmetic, one generic kernel per concept over any [`Arith`]: matrix products
//! (dense layers, and convolutions in the image-to-column layout), windows for pooling, and
//! the moves of data (axis permutations, concatenations, paddings; over indices, they are the
//! secure layers' gathers). The secure layers use the same layouts, so their plaintext reference is
//! these kernels over [`crate::fixed::Fixed`].

use crate::fixed::Arith;
use crate::model::{Pool, Window};
use rayon::prelude::*;

/// `y = rescale(W·X + b)` for `W` of `rows × inner` and `X` of `groups · inner × cols`,
/// row-major, with `b` (at the product's scale) added to every column of row r; with groups,
/// row r takes its group's block of `X` (`rows / groups` rows per group: a grouped or
/// depthwise convolution). Rows on rayon's threads, each summed in the order of `inner`.
pub fn matmul_bias<A: Arith>(
    a: &A,
    w: &[A::E],
    x: &[A::E],
    bias: &[A::E],
    (rows, inner, cols): (usize, usize, usize),
    groups: usize,
) -> Vec<A::E> {
    if cols == 0 {
        return Vec::new();
    }
    let mut y = vec![A::E::default(); rows * cols];
    let per_group = (rows / groups.max(1)).max(1);
    y.par_chunks_mut(cols).enumerate().for_each(|(r, acc)| {
        acc.fill(bias[r]);
        let wrow = &w[r * inner..][..inner];
        let block = &x[r / per_group * inner * cols..][..inner * cols];
        for (&wk, xrow) in wrow.iter().zip(block.chunks_exact(cols)) {
            for (s, &xv) in acc.iter_mut().zip(xrow) {
                *s = a.add(*s, a.mul(wk, xv));
            }
        }
        for s in acc.iter_mut() {
            *s = a.rescale(*s);
        }
    });
    y
}

/// The image-to-column matrix of `x` (`[channels, height, width]`) for `window`: row
/// `(c, i, j)` (channel, kernel row, kernel column) and column `(oy, ox)` (output position)
/// holds `x[c, oy·s + i − top, ox·s + j − left]`, or zero in the padding. A convolution is then
/// `W (out_channels × channels·kh·kw) · cols`.
pub fn im2col<E: Copy + Default>(
    x: &[E],
    [channels, height, width]: [usize; 3],
    window: &Window,
    [oh, ow]: [usize; 2],
) -> Vec<E> {
    let [kh, kw] = window.kernel;
    let mut cols = Vec::with_capacity(channels * kh * kw * oh * ow);
    for c in 0..channels {
        let plane = &x[c * height * width..(c + 1) * height * width];
        for i in 0..kh {
            for j in 0..kw {
                for oy in 0..oh {
                    let y = (oy * window.stride[0] + i).checked_sub(window.pads[0]);
                    for ox in 0..ow {
                        let xx = (ox * window.stride[1] + j).checked_sub(window.pads[1]);
                        cols.push(match (y, xx) {
                            (Some(y), Some(xx)) if y < height && xx < width => {
                                plane[y * width + xx]
                            }
                            _ => E::default(),
                        });
                    }
                }
            }
        }
    }
    cols
}

/// The input positions (as flat indices into one channel's plane) under the window of output
/// `(oy, ox)`.
pub fn window_positions(
    window: &Window,
    [height, width]: [usize; 2],
    (oy, ox): (usize, usize),
) -> impl Iterator<Item = usize> {
    let [kh, kw] = window.kernel;
    let (stride, pads) = (window.stride, window.pads);
    (0..kh).flat_map(move |i| {
        (0..kw).filter_map(move |j| {
            let y = (oy * stride[0] + i).checked_sub(pads[0])?;
            let x = (ox * stride[1] + j).checked_sub(pads[1])?;
            (y < height && x < width).then_some(y * width + x)
        })
    })
}

/// Max or average pooling of `x` (`[channels, height, width]`) to `[channels, oh, ow]`.
pub fn pool<A: Arith>(
    a: &A,
    x: &[A::E],
    [channels, height, width]: [usize; 3],
    pool: &Pool,
    max: bool,
    [oh, ow]: [usize; 2],
) -> Vec<A::E> {
    let mut y = Vec::with_capacity(channels * oh * ow);
    for plane in x.chunks_exact(height * width).take(channels) {
        for oy in 0..oh {
            for ox in 0..ow {
                let mut it = window_positions(&pool.window, [height, width], (oy, ox));
                let first = it.next().map_or(A::E::default(), |p| plane[p]);
                let mut acc = first;
                for p in it {
                    acc = if max {
                        a.max(acc, plane[p])
                    } else {
                        a.add(acc, plane[p])
                    };
                }
                y.push(if max {
                    acc
                } else {
                    a.mean(acc, pool.divisor([height, width], (oy, ox)))
                });
            }
        }
    }
    y
}

/// `x` of `shape` with its axes permuted: output axis `i` is input axis `perm[i]`.
pub fn transpose<E: Copy>(x: &[E], shape: &[usize], perm: &[usize]) -> Vec<E> {
    let rank = shape.len();
    let mut strides = vec![1; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let mut index = vec![0; rank];
    let mut y = Vec::with_capacity(x.len());
    for _ in 0..x.len() {
        let src: usize = index.iter().zip(perm).map(|(&i, &p)| i * strides[p]).sum();
        y.push(x[src]);
        for axis in (0..rank).rev() {
            index[axis] += 1;
            if index[axis] < out_shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    y
}

/// Tensors of `shapes` (equal but on `axis`) joined along `axis`, from `parts` in order.
pub fn concat<E: Copy>(parts: &[&[E]], shapes: &[&[usize]], axis: usize) -> Vec<E> {
    // Each part is `outer` blocks of `shape[axis] · inner` elements; the output takes one
    // block of each part in turn, `outer` times.
    let (outer, inner): (usize, usize) = match shapes.first() {
        Some(s) => (s[..axis].iter().product(), s[axis + 1..].iter().product()),
        None => return Vec::new(),
    };
    let total = parts.iter().map(|p| p.len()).sum();
    let mut y = Vec::with_capacity(total);
    for o in 0..outer {
        for (part, shape) in parts.iter().zip(shapes) {
            let block = shape[axis] * inner;
            y.extend_from_slice(&part[o * block..(o + 1) * block]);
        }
    }
    y
}

/// `x` of `shape` with `zero`s added before and after each axis: `pads[i]` is `(before,
/// after)` for axis i.
pub fn pad<E: Copy>(x: &[E], shape: &[usize], pads: &[(usize, usize)], zero: E) -> Vec<E> {
    let out: usize = shape
        .iter()
        .zip(pads)
        .map(|(&d, &(b, a))| d + b + a)
        .product();
    let mut y = Vec::with_capacity(out);
    pad_into(x, shape, pads, zero, &mut y);
    y
}

/// [`pad`], appended to `y`: axis by axis, into the one output.
fn pad_into<E: Copy>(x: &[E], shape: &[usize], pads: &[(usize, usize)], zero: E, y: &mut Vec<E>) {
    let Some((&(before, after), inner_pads)) = pads.split_first() else {
        y.extend_from_slice(x);
        return;
    };
    let inner_shape = &shape[1..];
    let inner_out: usize = inner_shape
        .iter()
        .zip(inner_pads)
        .map(|(&d, &(b, a))| d + b + a)
        .product();
    let inner_in: usize = inner_shape.iter().product();
    y.extend(std::iter::repeat_n(zero, before * inner_out));
    for row in x.chunks_exact(inner_in.max(1)).take(shape[0]) {
        pad_into(row, inner_shape, inner_pads, zero, y);
    }
    y.extend(std::iter::repeat_n(zero, after * inner_out));
}

/// `shape` (an ONNX shape, which may carry a leading batch axis of 1) as a per-sample shape of
/// `to`'s rank that broadcasts to `to` (NumPy's rules: axes aligned on the right, each 1 or
/// equal), or `None` if it does not.
pub fn aligned(shape: &[usize], to: &[usize]) -> Option<Vec<usize>> {
    let mut shape = shape;
    while shape.len() > to.len() {
        let (&first, rest) = shape.split_first()?;
        if first != 1 {
            return None;
        }
        shape = rest;
    }
    let lead = to.len() - shape.len();
    let full: Vec<usize> = (0..to.len())
        .map(|i| if i < lead { 1 } else { shape[i - lead] })
        .collect();
    full.iter()
        .zip(to)
        .all(|(&s, &t)| s == 1 || s == t)
        .then_some(full)
}

/// For each element of a tensor of shape `to` (row-major), the element of a tensor of shape
/// `from` that broadcasting reads there: `from`'s axes aligned on the right, each 1 or equal
/// to `to`'s (a lower rank has leading axes of 1).
pub fn broadcast_indices(from: &[usize], to: &[usize]) -> Vec<usize> {
    let lead = to.len().saturating_sub(from.len());
    let dim = |axis: usize| if axis < lead { 1 } else { from[axis - lead] };
    let n: usize = to.iter().product();
    let mut out = Vec::with_capacity(n);
    for flat in 0..n {
        let (mut rem, mut idx, mut stride) = (flat, 0, 1);
        for axis in (0..to.len()).rev() {
            let i = rem % to[axis];
            rem /= to[axis];
            if dim(axis) != 1 {
                idx += i * stride;
            }
            stride *= dim(axis);
        }
        out.push(idx);
    }
    out
}

/// The sums over `axes` of a tensor of `shape`: for each output element (the reduced axes
/// dropped, row-major), the input elements it sums, one list per place in the reduced axes,
/// so that list `j` holds every output's `j`-th summand.
pub fn reduction_groups(shape: &[usize], axes: &[usize]) -> Vec<Vec<usize>> {
    let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
    let count = |over: &[usize]| over.iter().map(|&a| shape[a]).product::<usize>();
    let (outputs, per_output) = (count(&kept), count(axes));
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    // The flat offset of the `k`-th combination of the axes `over`, row-major.
    let offset = |over: &[usize], mut k: usize| {
        let mut at = 0;
        for &a in over.iter().rev() {
            at += (k % shape[a]) * strides[a];
            k /= shape[a];
        }
        at
    };
    let bases: Vec<usize> = (0..outputs).map(|o| offset(&kept, o)).collect();
    (0..per_output)
        .map(|j| {
            let shift = offset(axes, j);
            bases.iter().map(|&b| b + shift).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::Float;

    #[test]
    fn transpose_moves_axes() {
        // [2, 3] → [3, 2]
        let x = [1, 2, 3, 4, 5, 6];
        assert_eq!(transpose(&x, &[2, 3], &[1, 0]), vec![1, 4, 2, 5, 3, 6]);
        let y: Vec<u32> = (0..24).collect();
        let t = transpose(&y, &[2, 3, 4], &[2, 0, 1]);
        // t[k, i, j] = y[i, j, k]
        assert_eq!(t[(3 * 2 + 1) * 3 + 2], y[(3 + 2) * 4 + 3]);
    }

    #[test]
    fn concat_joins_along_an_axis() {
        // [2, 2] and [2, 1] along axis 1; [1, 2] and [2, 2] along axis 0.
        let (a, b) = ([1, 2, 3, 4], [5, 6]);
        assert_eq!(
            concat(&[&a, &b], &[&[2, 2], &[2, 1]], 1),
            vec![1, 2, 5, 3, 4, 6]
        );
        assert_eq!(
            concat(&[&b, &a], &[&[1, 2], &[2, 2]], 0),
            vec![5, 6, 1, 2, 3, 4]
        );
    }

    #[test]
    fn broadcasts_and_reductions_index_as_numpy_does() {
        assert_eq!(aligned(&[1, 3, 1, 1], &[3, 2, 2]), Some(vec![3, 1, 1]));
        assert_eq!(aligned(&[2], &[3, 2]), Some(vec![1, 2]));
        assert_eq!(aligned(&[2, 3], &[3, 2]), None);
        // [3, 1] read as [3, 2]: each row's one element twice.
        assert_eq!(broadcast_indices(&[3, 1], &[3, 2]), vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(broadcast_indices(&[1, 2], &[3, 2]), vec![0, 1, 0, 1, 0, 1]);
        assert_eq!(broadcast_indices(&[2], &[3, 2]), vec![0, 1, 0, 1, 0, 1]);
        // [2, 3, 2] summed over axes 0 and 2: three outputs of four summands each.
        let groups = reduction_groups(&[2, 3, 2], &[0, 2]);
        assert_eq!(groups.len(), 4);
        let mut sums = [0; 3];
        for g in &groups {
            for (o, &i) in g.iter().enumerate() {
                sums[o] += i;
            }
        }
        // Output 1 sums elements 2, 3, 8 and 9.
        assert_eq!(sums, [14, 22, 30]);
    }

    #[test]
    fn pad_surrounds_with_zeros() {
        // [2, 2] padded by (1, 0) rows and (0, 1) columns: [3, 3].
        let x = [1, 2, 3, 4];
        let y = pad(&x, &[2, 2], &[(1, 0), (0, 1)], 0);
        assert_eq!(y, vec![0, 0, 0, 1, 2, 0, 3, 4, 0]);
        assert_eq!(pad(&x, &[4], &[(2, 1)], 9), vec![9, 9, 1, 2, 3, 4, 9]);
    }

    #[test]
    fn im2col_convolution_matches_direct_sums() {
        let window = Window {
            kernel: [2, 3],
            stride: [2, 1],
            pads: [1, 0, 0, 2],
        };
        let (c, h, w) = (2, 5, 4);
        let x: Vec<f32> = (0..c * h * w).map(|v| (v as f32 * 0.37).sin()).collect();
        let [oh, ow] = window.output([h, w]).unwrap();
        let weights: Vec<f32> = (0..3 * c * 6).map(|v| (v as f32 * 0.11).cos()).collect();
        let bias = [0.5, -1.0, 2.0];
        let cols = im2col(&x, [c, h, w], &window, [oh, ow]);
        let y = matmul_bias(&Float, &weights, &cols, &bias, (3, c * 6, oh * ow), 1);
        for o in 0..3 {
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut s = bias[o];
                    for ci in 0..c {
                        for i in 0..2 {
                            for j in 0..3 {
                                let yy = (oy * 2 + i) as isize - 1;
                                let xx = (ox + j) as isize;
                                if (0..h as isize).contains(&yy) && (0..w as isize).contains(&xx) {
                                    s += weights[((o * c + ci) * 2 + i) * 3 + j]
                                        * x[(ci * h + yy as usize) * w + xx as usize];
                                }
                            }
                        }
                    }
                    assert!((y[(o * oh + oy) * ow + ox] - s).abs() < 1e-5);
                }
            }
        }
    }
}
