//! The setup's arithmetic on shared random vectors: vectors known as shares (a party's random
//! masks, its private values with the peer's share zero), sums, products of two shared
//! vectors, which Beaver's method (Beaver, CRYPTO 1991) resolves with the triples of the
//! fast-OT issue, and cross products of one party's private ring elements with the other's
//! private bits, which take one correlated OT per element (Gilboa's multiplication with a
//! one-bit multiplier, CRYPTO 1999): ℓ OTs fewer than a triple. Everything of one depth is
//! resolved at once. ABY2.0's setup (mask products δx·δy, the arithmetic sharing of a Boolean
//! mask, daBits) is a few such expressions per operation.

use super::matrix::{self, MatShape};
use super::ring;
use crate::Error;
use crate::boolean::bits;
use std::collections::{BTreeMap, VecDeque};
use tessera_ot::triples::{ArithTriples, BoolTriples, Ring};

/// What a vector holds: bits (XOR and AND), `width` wires of `n` copies, wire after wire in
/// `words(n)` words each; or `n` elements of Z_2^`bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Bits { width: usize, n: usize },
    Ring { bits: u32, n: usize },
}

impl Field {
    /// Words of a vector of this field.
    pub(crate) fn words(self) -> usize {
        match self {
            Field::Bits { width, n } => width * bits::words(n),
            Field::Ring { n, .. } => n,
        }
    }
}

/// An entry of the setup's arithmetic.
pub(crate) type Id = usize;

#[derive(Debug)]
enum Expr {
    Known,
    /// Σ c·v over Z_2^64 (bits: the XOR of the terms).
    Sum(Vec<(u64, Id)>),
    Product(Id, Id),
    /// The batch of matrix products of the two entries.
    MatProduct(Id, Id, MatShape),
    /// x·b for ring elements x private to party `from` (the other's entry zero) and bits b
    /// private to the other party (0 or 1 as ring elements; zero at `from`).
    Cross {
        x: Id,
        bit: Id,
        from: usize,
    },
}

/// A matrix triple's kind: its ring's bits and one product's `(rows, inner, cols)`.
type MatrixKind = (u32, (usize, usize, usize));

/// Triples from the OT, taken in order.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    bits: [Vec<u64>; 3],
    bits_at: usize,
    ring: [([Vec<u64>; 3], usize); 4],
    /// Matrix triples by ring and shape of one product, in the order drawn.
    matrices: BTreeMap<MatrixKind, VecDeque<[Vec<u64>; 3]>>,
}

impl Pool {
    /// A pool of Boolean triples and arithmetic triples per ring size.
    pub(crate) fn new(b: BoolTriples, rings: [[Vec<u64>; 3]; 4]) -> Pool {
        let flat = |v: &[tessera_core::Block]| v.iter().flat_map(|b| [b.low(), b.high()]).collect();
        Pool {
            bits: [flat(&b.a), flat(&b.b), flat(&b.c)],
            bits_at: 0,
            ring: rings.map(|t| (t, 0)),
            matrices: BTreeMap::new(),
        }
    }

    /// Adds a matrix triple over Z_2^`bits` of one product's shape `(rows, inner, cols)`.
    pub(crate) fn add_matrix(&mut self, bits: u32, shape: (usize, usize, usize), t: [Vec<u64>; 3]) {
        self.matrices.entry((bits, shape)).or_default().push_back(t);
    }

    /// Matrix triples for a batch of products of `shape` over Z_2^`bits`, one per product,
    /// laid out as the batch's matrices are.
    pub(crate) fn take_matrices(
        &mut self,
        bits: u32,
        shape: MatShape,
    ) -> Result<[Vec<u64>; 3], Error> {
        let queue = self.matrices.get_mut(&(bits, shape.one()));
        let short = || Error::Input("the setup drew fewer matrix triples than it uses".into());
        let queue = queue.ok_or_else(short)?;
        if queue.len() < shape.batch {
            return Err(short());
        }
        let mut out: [Vec<u64>; 3] = Default::default();
        for t in queue.drain(..shape.batch) {
            for (o, part) in out.iter_mut().zip(t) {
                o.extend(part);
            }
        }
        Ok(out)
    }

    /// Arithmetic triples as `u64`s.
    pub(crate) fn ring_of<R: Ring>(t: ArithTriples<R>) -> [Vec<u64>; 3] {
        let up = |v: Vec<R>| v.into_iter().map(R::to_u64).collect();
        [up(t.a), up(t.b), up(t.c)]
    }

    /// Triples for a vector of `field`, laid out as its vectors are.
    pub(crate) fn take(&mut self, field: Field) -> Result<[Vec<u64>; 3], Error> {
        let short = || Error::Input("the setup drew fewer triples than it uses".into());
        match field {
            Field::Bits { width, n } => {
                let w = bits::words(n);
                if self.bits_at + width * n > 64 * self.bits[0].len() {
                    return Err(short());
                }
                let mut out = [
                    vec![0u64; width * w],
                    vec![0u64; width * w],
                    vec![0u64; width * w],
                ];
                for (o, src) in out.iter_mut().zip(&self.bits) {
                    for wire in 0..width {
                        let at = self.bits_at + wire * n;
                        bits::get(src, at, n, &mut o[wire * w..(wire + 1) * w]);
                    }
                }
                self.bits_at += width * n;
                Ok(out)
            }
            Field::Ring { bits, n } => {
                let (t, at) = &mut self.ring[ring::index(bits)];
                if *at + n > t[0].len() {
                    return Err(short());
                }
                let out = [0, 1, 2].map(|k| t[k][*at..*at + n].to_vec());
                *at += n;
                Ok(out)
            }
        }
    }
}

/// Triples the setup needs: Boolean (bits), per ring size (elements), and matrix triples by
/// ring and shape of one product.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    pub(crate) bits: usize,
    pub(crate) ring: [usize; 4],
    pub(crate) matrices: BTreeMap<MatrixKind, usize>,
}

impl Needs {
    pub(crate) fn add(&mut self, field: Field) {
        match field {
            Field::Bits { width, n } => self.bits += width * n,
            Field::Ring { bits, n } => self.ring[ring::index(bits)] += n,
        }
    }

    /// Matrix triples for a batch of products of `shape` over Z_2^`bits`.
    pub(crate) fn add_matrices(&mut self, bits: u32, shape: MatShape) {
        *self.matrices.entry((bits, shape.one())).or_default() += shape.batch;
    }
}

/// The bytes both parties send for the matrix triples of a batch of products of `shape` over
/// Z_2^`bits` ([`tessera_ot::triples::matrix_bytes`]).
pub(crate) fn matrix_triple_bytes(bits: u32, shape: MatShape, cot_bytes: f64) -> f64 {
    shape.batch as f64 * tessera_ot::triples::matrix_bytes(bits, shape.one(), cot_bytes)
}

/// What resolving the algebra asks of the peer.
pub(crate) trait Peer {
    /// Sends this party's bytes and returns the peer's, of the same length.
    fn exchange(&mut self, mine: &[u8]) -> Result<Vec<u8>, Error>;
    /// The error for a malformed message from the peer.
    fn malformed(&self, what: &str) -> Error;
    /// Shares of x_j·b_j for ring elements x_j of party `from` (of `bits[j]` bits) and bits b_j
    /// of the other party: this party passes its own (x at `from`, the bits elsewhere).
    fn cross(
        &mut self,
        from: usize,
        x: &[u64],
        choices: &[bool],
        bits: &[u32],
    ) -> Result<Vec<u64>, Error>;
}

/// The setup's vectors; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Algebra {
    fields: Vec<Field>,
    exprs: Vec<Expr>,
    values: Vec<Option<Vec<u64>>>,
}

impl Algebra {
    fn push(&mut self, field: Field, expr: Expr, value: Option<Vec<u64>>) -> Id {
        self.fields.push(field);
        self.exprs.push(expr);
        self.values.push(value);
        self.values.len() - 1
    }

    /// A vector this party knows its share of.
    pub(crate) fn known(&mut self, field: Field, v: Vec<u64>) -> Id {
        debug_assert_eq!(v.len(), field.words());
        self.push(field, Expr::Known, Some(v))
    }

    /// Σ c·v (bits: XOR, coefficients ignored).
    pub(crate) fn sum(&mut self, terms: Vec<(u64, Id)>) -> Id {
        let field = self.fields[terms[0].1];
        self.push(field, Expr::Sum(terms), None)
    }

    /// The element-wise product (bits: AND).
    pub(crate) fn product(&mut self, a: Id, b: Id) -> Id {
        let field = self.fields[a];
        self.push(field, Expr::Product(a, b), None)
    }

    /// The batch of matrix products of `a` and `b` (vectors of Z_2^`bits`), of `shape`.
    pub(crate) fn matrix_product(&mut self, a: Id, b: Id, bits: u32, shape: MatShape) -> Id {
        let field = Field::Ring {
            bits,
            n: shape.batch * shape.rows * shape.cols,
        };
        self.push(field, Expr::MatProduct(a, b, shape), None)
    }

    /// The cross product of ring elements `x` private to party `from` and bits `bit` (as ring
    /// elements) private to the other party.
    pub(crate) fn cross(&mut self, from: usize, x: Id, bit: Id) -> Id {
        let field = self.fields[x];
        self.push(field, Expr::Cross { x, bit, from }, None)
    }

    /// How many entries there are: the next one's [`Id`].
    pub(crate) fn len(&self) -> usize {
        self.exprs.len()
    }

    /// The bytes both parties send to resolve entries `ids` when a random correlated OT
    /// costs `cot_bytes`: per product its triple and Beaver's openings (two vectors per
    /// party), per matrix product its matrix triples and the openings of both operands, per
    /// cross product a correlated OT (a random one and its choice bit) and τ.
    pub(crate) fn bytes(&self, ids: std::ops::Range<Id>, cot_bytes: f64) -> f64 {
        ids.map(|i| match (&self.exprs[i], self.fields[i]) {
            (Expr::Product(..), f) => triple_bytes(f, cot_bytes) + 4.0 * wire_bytes(f) as f64,
            (&Expr::MatProduct(a, b, shape), Field::Ring { bits, .. }) => {
                let openings = wire_bytes(self.fields[a]) + wire_bytes(self.fields[b]);
                matrix_triple_bytes(bits, shape, cot_bytes) + 2.0 * openings as f64
            }
            (Expr::Cross { .. }, Field::Ring { bits, n }) => {
                n as f64 * (cot_bytes + 0.125 + ring::bytes_per(bits) as f64)
            }
            _ => 0.0,
        })
        .sum()
    }

    /// The words its entries hold once resolved: what a setup of them keeps at once.
    pub(crate) fn words(&self) -> usize {
        self.fields.iter().map(|f| f.words()).sum()
    }

    /// The triples the products take.
    pub(crate) fn needs(&self, into: &mut Needs) {
        for (f, e) in self.fields.iter().zip(&self.exprs) {
            match (e, f) {
                (Expr::Product(..), _) => into.add(*f),
                (&Expr::MatProduct(_, _, shape), &Field::Ring { bits, .. }) => {
                    into.add_matrices(bits, shape)
                }
                _ => {}
            }
        }
    }

    /// Computes every vector: sums locally, products by Beaver's method and cross products by
    /// OT, one exchange of each per depth.
    pub(crate) fn resolve(
        &mut self,
        side: usize,
        pool: &mut Pool,
        peer: &mut dyn Peer,
    ) -> Result<(), Error> {
        loop {
            let (mut products, mut crosses) = (Vec::new(), Vec::new());
            for i in 0..self.values.len() {
                if self.values[i].is_some() {
                    continue;
                }
                let ready = |id: Id| self.values[id].is_some();
                match &self.exprs[i] {
                    Expr::Known => {}
                    Expr::Sum(terms) if terms.iter().all(|&(_, t)| ready(t)) => {
                        let v = self.sum_of(self.fields[i], terms);
                        self.values[i] = Some(v);
                    }
                    &Expr::Product(a, b) | &Expr::MatProduct(a, b, _) if ready(a) && ready(b) => {
                        products.push(i)
                    }
                    &Expr::Cross { x, bit, .. } if ready(x) && ready(bit) => crosses.push(i),
                    _ => {}
                }
            }
            if products.is_empty() && crosses.is_empty() {
                return match self.values.iter().position(Option::is_none) {
                    None => Ok(()),
                    Some(i) => Err(Error::Input(format!("setup vector {i} depends on itself"))),
                };
            }
            if !products.is_empty() {
                self.beaver(side, pool, &products, peer)?;
            }
            for from in 0..2 {
                self.crosses(from, &crosses, peer)?;
            }
        }
    }

    /// The cross products from party `from` among `batch`, in one OT batch.
    fn crosses(&mut self, from: usize, batch: &[Id], peer: &mut dyn Peer) -> Result<(), Error> {
        let mine: Vec<Id> = batch
            .iter()
            .copied()
            .filter(|&i| matches!(self.exprs[i], Expr::Cross { from: f, .. } if f == from))
            .collect();
        if mine.is_empty() {
            return Ok(());
        }
        let (mut x, mut choices, mut bits) = (Vec::new(), Vec::new(), Vec::new());
        for &i in &mine {
            let Expr::Cross { x: xi, bit, .. } = self.exprs[i] else {
                continue;
            };
            let Field::Ring { bits: l, n } = self.fields[i] else {
                continue;
            };
            x.extend_from_slice(self.values[xi].as_deref().unwrap_or_default());
            choices.extend(
                self.values[bit]
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .map(|&b| b & 1 == 1),
            );
            bits.extend(std::iter::repeat_n(l, n));
        }
        let shares = peer.cross(from, &x, &choices, &bits)?;
        let mut at = 0;
        for &i in &mine {
            let n = self.fields[i].words();
            self.values[i] = Some(shares[at..at + n].to_vec());
            at += n;
        }
        Ok(())
    }

    fn sum_of(&self, field: Field, terms: &[(u64, Id)]) -> Vec<u64> {
        let mut out = vec![0u64; field.words()];
        for &(c, t) in terms {
            let v = self.values[t].as_deref().unwrap_or_default();
            for (o, x) in out.iter_mut().zip(v) {
                *o = match field {
                    Field::Bits { .. } => *o ^ x,
                    Field::Ring { .. } => o.wrapping_add(c.wrapping_mul(*x)),
                };
            }
        }
        out
    }

    /// One round of Beaver multiplications: open x − a and y − b of every product in `batch`
    /// (elementwise or of matrices).
    fn beaver(
        &mut self,
        side: usize,
        pool: &mut Pool,
        batch: &[Id],
        peer: &mut dyn Peer,
    ) -> Result<(), Error> {
        let mut triples = Vec::with_capacity(batch.len());
        let mut mine = Vec::new();
        for &i in batch {
            let (a, b, t) = match (&self.exprs[i], self.fields[i]) {
                (&Expr::Product(a, b), field) => (a, b, pool.take(field)?),
                (&Expr::MatProduct(a, b, shape), Field::Ring { bits, .. }) => {
                    (a, b, pool.take_matrices(bits, shape)?)
                }
                _ => continue,
            };
            let (x, y) = (
                self.values[a].as_deref().unwrap_or_default(),
                self.values[b].as_deref().unwrap_or_default(),
            );
            let (d, e) = open(self.fields[a], x, y, &t);
            encode(self.fields[a], &d, &mut mine);
            encode(self.fields[b], &e, &mut mine);
            triples.push((d, e, t));
        }
        let theirs = peer.exchange(&mine)?;
        let mut at = 0;
        let first = side == 0;
        for (&i, (mut d, mut e, t)) in batch.iter().zip(triples) {
            let (a, b, shape) = match self.exprs[i] {
                Expr::Product(a, b) => (a, b, None),
                Expr::MatProduct(a, b, shape) => (a, b, Some(shape)),
                _ => continue,
            };
            for (v, field) in [(&mut d, self.fields[a]), (&mut e, self.fields[b])] {
                let len = wire_bytes(field);
                if !combine(field, v, &theirs[at..at + len]) {
                    return Err(peer.malformed("bits set past a vector's copies"));
                }
                at += len;
            }
            let z = match shape {
                Some(shape) => matrix::beaver(first, (&d, &e), &t, shape),
                None => elementwise_beaver(self.fields[i], first, (&d, &e), &t),
            };
            self.values[i] = Some(z);
        }
        Ok(())
    }

    /// The vector `id` (after [`Algebra::resolve`]), taken out.
    pub(crate) fn take(&mut self, id: Id) -> Vec<u64> {
        self.values[id].take().unwrap_or_default()
    }
}

/// The bytes both parties send for triples of a vector of `field` ([`tessera_ot::triples`]).
pub(crate) fn triple_bytes(field: Field, cot_bytes: f64) -> f64 {
    match field {
        Field::Bits { width, n } => tessera_ot::triples::boolean_bytes(width * n, cot_bytes),
        Field::Ring { bits, n } => tessera_ot::triples::arithmetic_bytes(bits, n, cot_bytes),
    }
}

/// This party's share of x·y (bits: x ∧ y) by Beaver's method, once d = x − a and e = y − b
/// are open: c + d·b + e·a, and d·e at the `first` party.
pub(crate) fn elementwise_beaver(
    field: Field,
    first: bool,
    (d, e): (&[u64], &[u64]),
    [a, b, c]: &[Vec<u64>; 3],
) -> Vec<u64> {
    (0..field.words())
        .map(|k| match field {
            Field::Bits { .. } => {
                let de = if first { d[k] & e[k] } else { 0 };
                c[k] ^ (d[k] & b[k]) ^ (e[k] & a[k]) ^ de
            }
            Field::Ring { .. } => {
                let de = if first { d[k].wrapping_mul(e[k]) } else { 0 };
                c[k].wrapping_add(d[k].wrapping_mul(b[k]))
                    .wrapping_add(e[k].wrapping_mul(a[k]))
                    .wrapping_add(de)
            }
        })
        .collect()
}

/// Beaver's openings d = x − a, e = y − b (bits: XOR).
fn open(field: Field, x: &[u64], y: &[u64], t: &[Vec<u64>; 3]) -> (Vec<u64>, Vec<u64>) {
    let op = |u: &[u64], v: &[u64]| -> Vec<u64> {
        u.iter()
            .zip(v)
            .map(|(u, v)| match field {
                Field::Bits { .. } => u ^ v,
                Field::Ring { .. } => u.wrapping_sub(*v),
            })
            .collect()
    };
    (op(x, &t[0]), op(y, &t[1]))
}

/// Bytes of a vector of `field` on the wire.
pub(crate) fn wire_bytes(field: Field) -> usize {
    match field {
        Field::Bits { .. } => 8 * field.words(),
        Field::Ring { bits, n } => n * ring::bytes_per(bits),
    }
}

/// Appends a vector's wire bytes.
pub(crate) fn encode(field: Field, v: &[u64], out: &mut Vec<u8>) {
    match field {
        Field::Bits { .. } => out.extend(v.iter().flat_map(|w| w.to_le_bytes())),
        Field::Ring { bits, .. } => ring::put(v, bits, out),
    }
}

/// Adds (XORs) the peer's opening, read from `bytes`, into `v`; false (and `v` unchanged) if
/// the peer set bits past a Boolean vector's copies.
#[must_use]
pub(crate) fn combine(field: Field, v: &mut [u64], bytes: &[u8]) -> bool {
    let mut theirs = vec![0u64; v.len()];
    match field {
        Field::Bits { n, .. } => {
            for (t, b) in theirs.iter_mut().zip(bytes.chunks_exact(8)) {
                *t = u64::from_le_bytes(b.try_into().unwrap_or_default());
            }
            let (w, tail) = (bits::words(n), bits::tail_mask(n));
            if w > 0 && theirs.chunks(w).any(|wire| wire[w - 1] & !tail != 0) {
                return false;
            }
        }
        Field::Ring { bits, .. } => ring::get(bytes, bits, &mut theirs),
    }
    for (x, t) in v.iter_mut().zip(theirs) {
        *x = match field {
            Field::Bits { .. } => *x ^ t,
            Field::Ring { .. } => x.wrapping_add(t),
        };
    }
    true
}
