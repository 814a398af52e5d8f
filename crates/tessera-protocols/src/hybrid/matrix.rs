//! Products of matrices over Z_2^ℓ, as `u64`s (mod 2^64: the caller reduces): the one kernel
//! that linear maps ([`super::linear`]), Beaver's method on matrix triples and ABY2.0's matrix
//! products ([`MatShape`]) use.

/// The shape of a batch of matrix products: `batch` products of a `rows × inner` matrix by an
/// `inner × cols` one, each row-major, the batch's matrices one after another (the heads of
/// attention's Q·Kᵀ and softmax·V).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MatShape {
    /// Products in the batch.
    pub batch: usize,
    /// Rows of the left matrix and of the product.
    pub rows: usize,
    /// Columns of the left matrix, rows of the right.
    pub inner: usize,
    /// Columns of the right matrix and of the product.
    pub cols: usize,
}

impl MatShape {
    /// Elements of the left matrices, in checked arithmetic.
    pub fn left(self) -> Option<usize> {
        self.batch.checked_mul(self.rows)?.checked_mul(self.inner)
    }

    /// Elements of the right matrices, in checked arithmetic.
    pub fn right(self) -> Option<usize> {
        self.batch.checked_mul(self.inner)?.checked_mul(self.cols)
    }

    /// Elements of the products, in checked arithmetic.
    pub fn out(self) -> Option<usize> {
        self.batch.checked_mul(self.rows)?.checked_mul(self.cols)
    }

    /// One product of the batch: `(rows, inner, cols)`.
    pub(super) fn one(self) -> (usize, usize, usize) {
        (self.rows, self.inner, self.cols)
    }
}

/// Multiply-adds from which [`grouped_product`] spreads its rows over the party's pool.
const SPREAD_PRODUCTS: usize = 1 << 16;

/// `W·c` for `W` of `rows × inner` in `groups` groups of `rows / groups` rows, each row times
/// its group's block of `c` (`inner × cols`, one block per group), plus `bias` per row if
/// given; mod 2^64.
pub(super) fn grouped_product(
    w: &[u64],
    c: &[u64],
    (rows, inner, cols): (usize, usize, usize),
    groups: usize,
    bias: Option<&[u64]>,
) -> Vec<u64> {
    use rayon::prelude::*;
    let mut y = vec![0u64; rows * cols];
    let (block, per_group) = (inner * cols, rows / groups.max(1));
    // Row by row, spread over the party's pool when it has one and the product is large.
    let work = rows * inner * cols;
    let tasks = tessera_ot::spread::min_len(rows, work, SPREAD_PRODUCTS);
    w.par_chunks_exact(inner)
        .zip(y.par_chunks_exact_mut(cols))
        .enumerate()
        .with_min_len(tasks)
        .for_each(|(r, (wrow, yrow))| {
            if let Some(b) = bias {
                yrow.fill(b[r]);
            }
            let g = r / per_group.max(1);
            let own = &c[g * block..(g + 1) * block];
            for (&wk, crow) in wrow.iter().zip(own.chunks_exact(cols)) {
                for (s, &v) in yrow.iter_mut().zip(crow) {
                    *s = s.wrapping_add(wk.wrapping_mul(v));
                }
            }
        });
    y
}

/// The batch of products `x·y` of `shape`, mod 2^64.
pub(super) fn product(x: &[u64], y: &[u64], shape: MatShape) -> Vec<u64> {
    let (rows, inner, cols) = shape.one();
    let all = (shape.batch * rows, inner, cols);
    grouped_product(x, y, all, shape.batch, None)
}

/// `u + v` elementwise, mod 2^64.
fn add(mut u: Vec<u64>, v: &[u64]) -> Vec<u64> {
    for (a, b) in u.iter_mut().zip(v) {
        *a = a.wrapping_add(*b);
    }
    u
}

/// This party's share of `X·Y` by Beaver's method on the matrix triple `[A, B, C]` (its
/// shares, `C = A·B`), once `D = X − A` and `E = Y − B` are open: `C + D·B + A·E`, and `D·E` at
/// the `first` party; as `C + D·B + (A + D)·E` there, two products either way.
pub(super) fn beaver(
    first: bool,
    (d, e): (&[u64], &[u64]),
    [a, b, c]: &[Vec<u64>; 3],
    shape: MatShape,
) -> Vec<u64> {
    let left = if first { add(a.clone(), d) } else { a.clone() };
    add(
        add(c.clone(), &product(d, b, shape)),
        &product(&left, e, shape),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel against the definition, batch by batch; Beaver's method recombines to the
    /// product of the opened matrices.
    #[test]
    fn products_and_beaver_equal_the_definition() {
        let shape = MatShape {
            batch: 3,
            rows: 4,
            inner: 5,
            cols: 2,
        };
        let mut seed = 7u64;
        let mut random = |n: usize| -> Vec<u64> {
            (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    seed
                })
                .collect()
        };
        let (x, y) = (random(60), random(30));
        let z = product(&x, &y, shape);
        for b in 0..3 {
            for r in 0..4 {
                for q in 0..2 {
                    let want = (0..5).fold(0u64, |s, k| {
                        s.wrapping_add(x[b * 20 + r * 5 + k].wrapping_mul(y[b * 10 + k * 2 + q]))
                    });
                    assert_eq!(z[b * 8 + r * 2 + q], want);
                }
            }
        }
        // Shares of X, Y and of a triple; both parties' Beaver outputs add up to X·Y.
        let (a, b) = ([random(60), random(60)], [random(30), random(30)]);
        let whole = |s: &[Vec<u64>; 2]| add(s[0].clone(), &s[1]);
        let c_all = product(&whole(&a), &whole(&b), shape);
        let c0 = random(24);
        let c1: Vec<u64> = c_all
            .iter()
            .zip(&c0)
            .map(|(c, s)| c.wrapping_sub(*s))
            .collect();
        let sub = |u: &[u64], v: &[u64]| -> Vec<u64> {
            u.iter().zip(v).map(|(u, v)| u.wrapping_sub(*v)).collect()
        };
        let (d, e) = (sub(&x, &whole(&a)), sub(&y, &whole(&b)));
        let t0 = [a[0].clone(), b[0].clone(), c0];
        let t1 = [a[1].clone(), b[1].clone(), c1];
        let sum = add(
            beaver(true, (&d, &e), &t0, shape),
            &beaver(false, (&d, &e), &t1, shape),
        );
        assert_eq!(sum, z);
    }
}
