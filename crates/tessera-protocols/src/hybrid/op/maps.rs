//! Private linear maps on α values (the owner's coefficients; setup by Gilboa's products, see
//! [`crate::hybrid::linear`]; online local) and gathers of ring copies.

use super::{Op, Operation, Program, bad};
use crate::Error;
use crate::hybrid::linear::{LinearMap, LinearMethod, ZERO};
use crate::hybrid::online::{Run, zip_map};
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Kind, Sharing, Type, Value};
use sha2::{Digest, Sha256};

/// Map `map` with `owner`'s coefficients on the α value `x`, into the A value `out`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Linear {
    x: usize,
    map: usize,
    owner: usize,
    method: LinearMethod,
    out: usize,
}

/// Copies of ring values picked by the program's gather `indices` from their concatenation
/// (or zeros).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Gather {
    sources: Vec<usize>,
    indices: usize,
    out: usize,
}

impl Program {
    /// `map` on the α value `x` with coefficients private to party `owner`, given to its
    /// [`Program::setup_with`]: an A value of `map.outputs()` elements, the owner's bias added.
    /// Setup: the products of the other party's mask share by the coefficients as `method`
    /// makes them (Gilboa's, see [`crate::hybrid::linear`], or homomorphic, see
    /// `hybrid::lattice`); online: local.
    pub fn linear(
        &mut self,
        x: Value,
        map: LinearMap,
        owner: usize,
        method: LinearMethod,
    ) -> Result<Value, Error> {
        let t = self.ty(x)?;
        if t.sharing != Sharing::Alpha || !matches!(t.kind, Kind::Ring(_)) {
            return Err(bad(format!(
                "a linear map on a {} value; it takes α",
                t.sharing.name()
            )));
        }
        if t.n != map.inputs() || owner > 1 {
            return Err(bad(format!(
                "a linear map of {} inputs on {} copies, owner {owner}",
                map.inputs(),
                t.n
            )));
        }
        let t = Type {
            sharing: Sharing::A,
            kind: t.kind,
            n: map.outputs(),
        };
        let mut digest = map.digest_bytes();
        digest.push(method.code());
        self.digests.push(Sha256::digest(digest).into());
        self.maps.push(map);
        let (x, map) = (x.0, self.maps.len() - 1);
        Ok(self.push(t, |out| {
            Op::Linear(Linear {
                x,
                map,
                owner,
                method,
                out,
            })
        }))
    }

    /// The linear maps, in order: each one's owner, ring bits and method.
    pub(in crate::hybrid) fn linear_maps(&self) -> Vec<(usize, u32, LinearMethod)> {
        let mut maps = vec![(0, 0, LinearMethod::Products); self.maps.len()];
        for op in &self.ops {
            if let Op::Linear(l) = op {
                maps[l.map] = (l.owner, self.types[l.x].ring_bits(), l.method);
            }
        }
        maps
    }

    /// The copies `indices` of a ring value (A or α), in that order (repeats allowed): a
    /// vector of `indices.len()` copies. Local.
    pub fn gather(&mut self, a: Value, indices: Vec<u32>) -> Result<Value, Error> {
        self.gather_from(&[a], indices)
    }

    /// The copies `indices` of the concatenation of ring values `sources` of one sharing (A or
    /// α) and ring, in that order (repeats allowed; [`ZERO`] for a zero): a vector of
    /// `indices.len()` copies. What concatenations, paddings and transpositions of tensors are.
    /// Local.
    pub fn gather_from(&mut self, sources: &[Value], indices: Vec<u32>) -> Result<Value, Error> {
        let types = sources
            .iter()
            .map(|&v| self.ty(v))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(&first) = types.first() else {
            return Err(bad("a gather from no value".to_owned()));
        };
        let total: usize = types.iter().map(|t| t.n).sum();
        let alike = types
            .iter()
            .all(|t| t.sharing == first.sharing && t.kind == first.kind);
        if first.sharing.is_boolean()
            || !alike
            || indices.is_empty()
            || indices.iter().any(|&i| i != ZERO && i as usize >= total)
        {
            let names: Vec<&str> = types.iter().map(|t| t.sharing.name()).collect();
            return Err(bad(format!(
                "gathering {} copies of {} values of {names:?} sharing, {total} copies in all",
                indices.len(),
                types.len()
            )));
        }
        let t = Type {
            n: indices.len(),
            ..first
        };
        let bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        self.digests.push(Sha256::digest(&bytes).into());
        self.gathers.push(indices);
        let sources = sources.iter().map(|v| v.0).collect();
        let indices = self.gathers.len() - 1;
        Ok(self.push(t, |out| {
            Op::Gather(Gather {
                sources,
                indices,
                out,
            })
        }))
    }
}

impl Gather {
    /// The copies at the gather's indices of the sources' concatenation (read in place: each
    /// index is looked up among the sources' starts, not copied into one vector first).
    fn pick<'v>(&self, indices: &[u32], of: impl Fn(usize) -> &'v [u64]) -> Vec<u64> {
        let parts: Vec<&[u64]> = self.sources.iter().map(|&v| of(v)).collect();
        let starts: Vec<usize> = parts
            .iter()
            .scan(0, |at, p| {
                let start = *at;
                *at += p.len();
                Some(start)
            })
            .collect();
        indices
            .iter()
            .map(|&i| {
                if i == ZERO {
                    return 0;
                }
                let i = i as usize;
                let j = starts.partition_point(|&s| s <= i) - 1;
                parts[j][i - starts[j]]
            })
            .collect()
    }
}

impl Operation for Linear {
    fn uses(&self) -> Vec<usize> {
        vec![self.x, self.out]
    }

    fn name(&self) -> &'static str {
        "linear map"
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        vec![Slot::Linear {
            map: self.map,
            owner: self.owner,
            method: self.method,
            bits: walk.ty(self.x).ring_bits(),
            mask: walk.masks[self.x].clone(),
        }]
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        let map = &run.p.maps[self.map];
        run.data[self.out] = match &m[..] {
            // W·cols(Δx) + bias − (W·cols(δₒ) + its share of W·cols(δₚ)).
            [w, bias, c] if self.owner == run.side => {
                let y = map.multiply(w, &map.gather(&run.data[self.x]), Some(bias));
                zip_map(&y, c, u64::wrapping_sub)
            }
            [share] => share.iter().map(|s| s.wrapping_neg()).collect(),
            _ => return Err(Error::Input("a linear map's setup is missing".into())),
        };
        Ok(())
    }
}

impl Operation for Gather {
    fn uses(&self) -> Vec<usize> {
        [&self.sources[..], &[self.out]].concat()
    }

    fn name(&self) -> &'static str {
        "gather"
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        if walk.ty(self.out).sharing.is_masked() {
            let masks = &walk.masks;
            let picked = self.pick(&walk.p.gathers[self.indices], |v| &masks[v]);
            walk.masks[self.out] = picked;
        }
        Vec::new()
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let data = &run.data;
        run.data[self.out] = self.pick(&run.p.gathers[self.indices], |v| &data[v]);
        Ok(())
    }
}
