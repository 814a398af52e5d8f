//! Local linear operations: XOR on Y, B and β; addition and subtraction on A and α; a public
//! constant added or multiplied in.

use super::{Op, Operation, Program};
use crate::Error;
use crate::hybrid::online::{Run, zip_map};
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Sharing, Value};

/// How [`Combine`] joins its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::hybrid) enum How {
    Xor,
    Add,
    Sub,
}

impl How {
    fn apply(self, x: u64, y: u64) -> u64 {
        match self {
            How::Xor => x ^ y,
            How::Add => x.wrapping_add(y),
            How::Sub => x.wrapping_sub(y),
        }
    }
}

/// a ⊕ b, a + b or a − b: shares, masks and public Δ alike, so local.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Combine {
    pub(super) a: usize,
    pub(super) b: usize,
    pub(super) out: usize,
    pub(super) how: How,
}

/// a + c or c·a for a public c.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Constant {
    a: usize,
    c: u64,
    out: usize,
    multiply: bool,
}

impl Program {
    /// a ⊕ b, a + b or a − b on values of one type, Boolean or not as `boolean` says.
    pub(super) fn combine(
        &mut self,
        (a, b): (Value, Value),
        boolean: bool,
        how: How,
    ) -> Result<Value, Error> {
        let t = self.same(a, b, boolean)?;
        let (a, b) = (a.0, b.0);
        Ok(self.push(t, |out| Op::Combine(Combine { a, b, out, how })))
    }

    /// a + b on A or α: local.
    pub fn add(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        self.combine((a, b), false, How::Add)
    }

    /// a − b on A or α: local.
    pub fn sub(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        self.combine((a, b), false, How::Sub)
    }

    /// −a on A or α: local.
    pub fn neg(&mut self, a: Value) -> Result<Value, Error> {
        self.mul_const(a, u64::MAX)
    }

    /// a + c for a public c on A or α: local.
    pub fn add_const(&mut self, a: Value, c: u64) -> Result<Value, Error> {
        self.constant(a, c, false)
    }

    /// c·a for a public c on A or α: local.
    pub fn mul_const(&mut self, a: Value, c: u64) -> Result<Value, Error> {
        self.constant(a, c, true)
    }

    fn constant(&mut self, a: Value, c: u64, multiply: bool) -> Result<Value, Error> {
        let t = self.same(a, a, false)?;
        let a = a.0;
        Ok(self.push(t, |out| {
            Op::Constant(Constant {
                a,
                c,
                out,
                multiply,
            })
        }))
    }
}

impl Operation for Combine {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.b, self.out]
    }

    fn name(&self) -> &'static str {
        match self.how {
            How::Xor => "xor",
            How::Add => "add",
            How::Sub => "sub",
        }
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        // α's masks and the garbler's Y labels join as the values do, β's masks by XOR; B
        // and A have none.
        let how = match walk.ty(self.out).sharing {
            Sharing::Beta => How::Xor,
            _ => self.how,
        };
        walk.masks[self.out] = zip_map(&walk.masks[self.a], &walk.masks[self.b], |x, y| {
            how.apply(x, y)
        });
        Vec::new()
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let how = self.how;
        run.data[self.out] = zip_map(&run.data[self.a], &run.data[self.b], |x, y| how.apply(x, y));
        Ok(())
    }
}

impl Operation for Constant {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.out]
    }

    fn name(&self) -> &'static str {
        if self.multiply {
            "multiply by constant"
        } else {
            "add constant"
        }
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let c = self.c;
        walk.masks[self.out] = if self.multiply {
            walk.masks[self.a]
                .iter()
                .map(|x| x.wrapping_mul(c))
                .collect()
        } else {
            walk.masks[self.a].clone()
        };
        Vec::new()
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let x = &run.data[self.a];
        run.data[self.out] = if self.multiply {
            x.iter().map(|x| x.wrapping_mul(self.c)).collect()
        } else {
            // A: party 0 adds c; α: both add c to the public Δ.
            let add = if run.first() || run.ty(self.a).sharing == Sharing::Alpha {
                self.c
            } else {
                0
            };
            x.iter().map(|x| x.wrapping_add(add)).collect()
        };
        Ok(())
    }
}
