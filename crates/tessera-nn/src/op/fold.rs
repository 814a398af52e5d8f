//! Arithmetic on constants, folded at import (ONNX Operators: Add, Sub, Mul, Div, Mod, Neg,
//! Sqrt, Cast, Equal, Where, Expand, Trilu, Gather, Slice, Reshape and ConstantOfShape of
//! constants): the tensors that
//! exporters compute from static shapes. PyTorch's attention, for one, scales by 1/√d with a
//! d it reads off a Shape (Shape, Slice, Cast, Sqrt, Div), and makes a causal mask from the
//! sequence's length (Expand, Trilu, Equal, Where). Integers stay exact (checked arithmetic; an
//! overflow or a division by zero is refused); reals are computed in `f64` and must stay
//! finite, but for Where's infinite fills. A folded tensor holds at most [`FOLDED_MOST`]
//! elements: these are shapes, scales and masks, not data.

use super::Family;
use super::constant::{MOST, fold, integers};
use crate::import::args::constant_input;
use crate::import::proto::{self, Attributes};
use crate::import::{At, Constant, FoldedTensor, Importer, Refusal, is_float, output, shown};
use crate::kernels;

/// The most elements a folded tensor holds: a causal mask over 1 024 positions.
pub const FOLDED_MOST: usize = 1 << 20;

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Mod",
        import: binary,
        supported: "Add, Sub, Mul, Div, Mod, Neg, Sqrt, Cast, Equal, Where, Expand, Trilu, Gather, Slice, Reshape, ConstantOfShape of constants (folded at import); Gather of an embedding table by the input's token ids (the client's lookup)",
    },
    Family {
        name: "Equal",
        import: binary,
        supported: "",
    },
    Family {
        name: "Trilu",
        import: trilu,
        supported: "",
    },
    Family {
        name: "ConstantOfShape",
        import: constant_of_shape,
        supported: "",
    },
];

/// A folded tensor's elements.
#[derive(Clone)]
enum Numbers {
    Ints(Vec<i64>),
    Reals(Vec<f64>),
}

/// A constant tensor: its shape (empty for a scalar) and elements.
struct Tensor {
    shape: Vec<usize>,
    numbers: Numbers,
}

impl Numbers {
    fn len(&self) -> usize {
        match self {
            Numbers::Ints(v) => v.len(),
            Numbers::Reals(v) => v.len(),
        }
    }

    fn reals(&self) -> Vec<f64> {
        match self {
            Numbers::Ints(v) => v.iter().map(|&i| i as f64).collect(),
            Numbers::Reals(v) => v.clone(),
        }
    }

    /// `self`'s elements then `other`'s: integers if both are.
    fn join(&self, other: &Numbers) -> Numbers {
        match (self, other) {
            (Numbers::Ints(a), Numbers::Ints(b)) => Numbers::Ints([&a[..], &b[..]].concat()),
            _ => Numbers::Reals([self.reals(), other.reals()].concat()),
        }
    }

    /// The elements at `places`.
    fn pick(&self, places: impl Iterator<Item = usize>) -> Numbers {
        match self {
            Numbers::Ints(v) => Numbers::Ints(places.map(|i| v[i]).collect()),
            Numbers::Reals(v) => Numbers::Reals(places.map(|i| v[i]).collect()),
        }
    }
}

/// Input `index` of the node, which must be a constant of at most [`FOLDED_MOST`] elements.
fn input<'a>(imp: &mut Importer<'a>, at: &At<'a>, index: usize) -> Result<Tensor, Refusal> {
    let c = constant_input(imp, at, index)
        .ok_or_else(|| format!("input {index} is computed at run time: only constants fold"))?;
    tensor(imp, c, FOLDED_MOST)
}

/// An integer constant's shape (empty for a scalar) and elements, however the file or a fold
/// gives it (Gather's indices, Where's condition).
pub(super) fn integers_shaped(
    imp: &mut Importer<'_>,
    c: Constant<'_>,
) -> Result<(Vec<usize>, Vec<i64>), Refusal> {
    let most = imp.ceiling.tensor_elements;
    match tensor(imp, c, most)? {
        Tensor {
            shape,
            numbers: Numbers::Ints(v),
        } => Ok((shape, v)),
        _ => Err("real numbers where integers are needed".into()),
    }
}

/// A constant of at most `most` elements as a tensor: its shape and its elements (a file's
/// tensor counted from its dimensions, before its data is read).
fn tensor(imp: &mut Importer<'_>, c: Constant<'_>, most: usize) -> Result<Tensor, Refusal> {
    let stated = match c {
        Constant::Tensor(t) => proto::dims(t, imp.ceiling)?.1,
        _ => 0,
    };
    if stated > most {
        return Err(format!("folds {stated} numbers (at most {most})").into());
    }
    let reals = |v: &[f32]| Numbers::Reals(v.iter().map(|&x| f64::from(x)).collect());
    let (shape, numbers) = match c {
        Constant::Tensor(t) if is_float(t.data_type) => {
            let (shape, v) = proto::floats(t, imp.ceiling, imp.zeros.as_mut())?;
            (shape, reals(&v))
        }
        Constant::Tensor(t) => {
            let shape = proto::dims(t, imp.ceiling)?.0;
            (shape, Numbers::Ints(proto::ints(t, imp.ceiling)?))
        }
        Constant::Floats(v, scalar) => (if scalar { vec![] } else { vec![v.len()] }, reals(v)),
        Constant::FoldedReals(i) => {
            let t = &imp.folded_reals[i];
            let numbers = if t.integer {
                Numbers::Ints(t.values.iter().map(|&v| v as i64).collect())
            } else {
                reals(&t.values)
            };
            (t.shape.clone(), numbers)
        }
        Constant::Ints(_) | Constant::Folded(_) => {
            let (v, scalar) = integers(imp, c)?;
            (
                if scalar { vec![] } else { vec![v.len()] },
                Numbers::Ints(v),
            )
        }
    };
    if numbers.len() > most {
        return Err(format!("folds {} numbers (at most {most})", numbers.len()).into());
    }
    Ok(Tensor { shape, numbers })
}

/// Writes the node's output as the folded `t`: integer vectors of at most [`MOST`]
/// elements as a shape subgraph's, the rest as tensors (integers exactly, below 2^24).
fn write<'a>(imp: &mut Importer<'a>, at: &At<'a>, t: Tensor) -> Result<(), Refusal> {
    let integer = matches!(t.numbers, Numbers::Ints(_));
    let mut reals = match t.numbers {
        Numbers::Ints(v) if t.shape.len() <= 1 && v.len() <= MOST => {
            return fold(imp, at, v, t.shape.is_empty());
        }
        Numbers::Ints(v) if v.iter().all(|i| i.abs() < 1 << 24) => {
            v.iter().map(|&i| i as f64).collect()
        }
        Numbers::Ints(_) => return Err("folds to large integers of more than one axis".into()),
        Numbers::Reals(v) => v,
    };
    if imp.zeros.is_some() {
        // A stripped architecture's folds stand for shapes: what its zeros make of a divisor
        // (∞, NaN) is taken as 0, so that it imports wherever the model does.
        reals
            .iter_mut()
            .filter(|x| !x.is_finite())
            .for_each(|x| *x = 0.0);
    }
    if reals
        .iter()
        .any(|x| x.is_nan() || (x.is_finite() && x.abs() > f64::from(f32::MAX)))
    {
        return Err("folds to a value that is not a number or too large".into());
    }
    let name = output(at)?;
    let values = reals.iter().map(|&x| x as f32).collect();
    imp.folded_reals.push(FoldedTensor {
        shape: t.shape,
        values,
        integer,
    });
    let c = Constant::FoldedReals(imp.folded_reals.len() - 1);
    if imp.value(name).is_ok() || imp.constants.insert(name, c).is_some() {
        return Err(format!("writes \"{}\", which is already written", shown(name)).into());
    }
    Ok(())
}

/// The shape `shapes` broadcast to (NumPy's rules), and for each the place read at every
/// output place; an error where they do not broadcast or the output is too large.
fn broadcast(shapes: &[&[usize]]) -> Result<(Vec<usize>, Vec<Vec<usize>>), Refusal> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1; rank];
    for s in shapes {
        for (o, &d) in out[rank - s.len()..].iter_mut().zip(s.iter()) {
            *o = match (*o, d) {
                (a, b) if a == b || b == 1 => a,
                (1, b) => b,
                _ => return Err(format!("constants of shapes {shapes:?} do not broadcast").into()),
            };
        }
    }
    let n = out.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if n.is_none_or(|n| n > FOLDED_MOST) {
        return Err(format!("folds to shape {out:?} (at most {FOLDED_MOST} elements)").into());
    }
    let places = shapes
        .iter()
        .map(|s| kernels::broadcast_indices(s, &out))
        .collect();
    Ok((out, places))
}

/// Add, Sub, Mul, Div, Mod or Equal of two constants, broadcast: of integers exactly (Div
/// truncates, Mod takes the divisor's sign unless `fmod`, as ONNX says), else of reals.
pub(super) fn binary<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let op = at.node.op_type.as_str();
    let fmod = Attributes::of(at.node).int("fmod", 0)? != 0;
    let (a, b) = (input(imp, at, 0)?, input(imp, at, 1)?);
    let (shape, places) = broadcast(&[&a.shape, &b.shape])?;
    let pairs = places[0].iter().zip(&places[1]);
    let numbers = match (&a.numbers, &b.numbers) {
        (Numbers::Ints(x), Numbers::Ints(y)) => {
            let each = pairs.map(|(&i, &j)| integer(op, fmod, x[i], y[j]));
            let v = each.collect::<Option<Vec<i64>>>();
            Numbers::Ints(v.ok_or("the integers overflow or divide by zero")?)
        }
        _ if op == "Equal" => {
            let (x, y) = (a.numbers.reals(), b.numbers.reals());
            Numbers::Ints(pairs.map(|(&i, &j)| i64::from(x[i] == y[j])).collect())
        }
        _ => {
            let (x, y) = (a.numbers.reals(), b.numbers.reals());
            Numbers::Reals(pairs.map(|(&i, &j)| real(op, x[i], y[j])).collect())
        }
    };
    write(imp, at, Tensor { shape, numbers })
}

/// `x op y` of integers, `None` on overflow or division by zero.
fn integer(op: &str, fmod: bool, x: i64, y: i64) -> Option<i64> {
    match op {
        "Add" => x.checked_add(y),
        "Sub" => x.checked_sub(y),
        "Mul" => x.checked_mul(y),
        "Div" => x.checked_div(y),
        "Equal" => Some(i64::from(x == y)),
        _ => {
            let r = x.checked_rem(y)?;
            let other_sign = r != 0 && (r < 0) != (y < 0);
            Some(if other_sign && !fmod { r + y } else { r })
        }
    }
}

/// `x op y` of reals (Mod as C's fmod, the only Mod of reals ONNX has).
fn real(op: &str, x: f64, y: f64) -> f64 {
    match op {
        "Add" => x + y,
        "Sub" => x - y,
        "Mul" => x * y,
        "Div" => x / y,
        _ => x % y,
    }
}

/// Neg, Sqrt or Cast of a constant (Cast to a real type makes reals; to an integer type
/// truncates reals toward zero).
pub(super) fn unary<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let Tensor { shape, numbers } = input(imp, at, 0)?;
    let numbers = match (at.node.op_type.as_str(), numbers) {
        ("Neg", Numbers::Ints(v)) => {
            let v = v.iter().map(|i| i.checked_neg()).collect::<Option<_>>();
            Numbers::Ints(v.ok_or("the integers overflow")?)
        }
        ("Neg", Numbers::Reals(v)) => Numbers::Reals(v.iter().map(|x| -x).collect()),
        ("Sqrt", x) => Numbers::Reals(x.reals().iter().map(|x| x.sqrt()).collect()),
        ("Cast", x) => {
            let to = Attributes::of(at.node).int("to", 0)?;
            match x {
                x if i32::try_from(to).is_ok_and(is_float) => Numbers::Reals(x.reals()),
                Numbers::Reals(v) => {
                    let whole = |r: &f64| (r.abs() < 9.2e18).then(|| r.trunc() as i64);
                    let v = v.iter().map(whole).collect::<Option<_>>();
                    Numbers::Ints(v.ok_or("reals too large for integers")?)
                }
                ints => ints,
            }
        }
        (op, _) => return Err(format!("{} of a constant does not fold", shown(op)).into()),
    };
    write(imp, at, Tensor { shape, numbers })
}

/// Where of three constants (a causal mask made from a sequence's length; integers where
/// both branches are).
pub(super) fn select<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let [c, x, y] = [0, 1, 2].map(|k| input(imp, at, k));
    let (c, x, y) = (c?, x?, y?);
    let (shape, places) = broadcast(&[&c.shape, &x.shape, &y.shape])?;
    let cond = c.numbers.reals();
    let len_x = x.numbers.len();
    let both = x.numbers.join(&y.numbers);
    let places = (0..places[0].len()).map(|k| {
        if cond[places[0][k]] != 0.0 {
            places[1][k]
        } else {
            len_x + places[2][k]
        }
    });
    let numbers = both.pick(places);
    write(imp, at, Tensor { shape, numbers })
}

/// Expand of a constant to a constant shape.
pub(super) fn expand<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let x = input(imp, at, 0)?;
    let Numbers::Ints(target) = input(imp, at, 1)?.numbers else {
        return Err("the shape must be integers".into());
    };
    let target = target
        .iter()
        .map(|&d| usize::try_from(d).ok().filter(|&d| d <= imp.ceiling.axis))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| format!("shape {target:?}: sizes from 0 to {}", imp.ceiling.axis))?;
    let (shape, places) = broadcast(&[&x.shape, &target])?;
    let numbers = x.numbers.pick(places[0].iter().copied());
    write(imp, at, Tensor { shape, numbers })
}

/// Trilu of a constant matrix (or batch of matrices): the lower (`upper` = 0) or upper
/// triangle from diagonal `k`, zeros elsewhere.
fn trilu<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let x = input(imp, at, 0)?;
    let k = if at.node.input.get(1).is_some_and(|n| !n.is_empty()) {
        match input(imp, at, 1)?.numbers {
            Numbers::Ints(v) if v.len() == 1 => v[0],
            _ => return Err("k must be one integer".into()),
        }
    } else {
        0
    };
    let upper = Attributes::of(at.node).int("upper", 1)? != 0;
    let [.., rows, cols] = x.shape[..] else {
        return Err("Trilu of a constant of fewer than two axes".into());
    };
    let keep = |p: usize| {
        let (i, j) = (((p / cols) % rows) as i64, (p % cols) as i64);
        if upper { j - i >= k } else { j - i <= k }
    };
    let numbers = match x.numbers {
        Numbers::Ints(v) => Numbers::Ints(
            v.iter()
                .enumerate()
                .map(|(p, &e)| if keep(p) { e } else { 0 })
                .collect(),
        ),
        Numbers::Reals(v) => Numbers::Reals(
            v.iter()
                .enumerate()
                .map(|(p, &e)| if keep(p) { e } else { 0.0 })
                .collect(),
        ),
    };
    write(
        imp,
        at,
        Tensor {
            shape: x.shape,
            numbers,
        },
    )
}

/// Gather of a real constant along `axis` by constant indices (negative from the end): a
/// position embedding's rows for the positions 0, 1, ... that PyTorch's BERT keeps as a buffer.
pub(super) fn gather<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let x = input(imp, at, 0)?;
    let Numbers::Ints(indices) = input(imp, at, 1)?.numbers else {
        return Err("the indices must be integers".into());
    };
    let indices_shape = input(imp, at, 1)?.shape;
    let rank = x.shape.len() as i64;
    let axis = Attributes::of(at.node).int("axis", 0)?;
    let axis = if axis < 0 { axis + rank } else { axis };
    let Some(axis) = usize::try_from(axis).ok().filter(|&a| a < x.shape.len()) else {
        return Err(format!("axis {axis} of a constant of shape {:?}", x.shape).into());
    };
    let len = x.shape[axis] as i64;
    let rows = indices
        .iter()
        .map(|&i| {
            usize::try_from(if i < 0 { i + len } else { i })
                .ok()
                .filter(|&i| (i as i64) < len)
        })
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| format!("indices outside the {len} places of axis {axis}"))?;
    let outer: usize = x.shape[..axis].iter().product();
    let inner: usize = x.shape[axis + 1..].iter().product();
    let mut shape = x.shape[..axis].to_vec();
    shape.extend_from_slice(&indices_shape);
    shape.extend_from_slice(&x.shape[axis + 1..]);
    if shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .is_none_or(|n| n > FOLDED_MOST)
    {
        return Err(format!("folds to shape {shape:?} (at most {FOLDED_MOST} elements)").into());
    }
    let places = (0..outer).flat_map(|o| {
        let len = len as usize;
        rows.iter()
            .flat_map(move |&r| (0..inner).map(move |i| (o * len + r) * inner + i))
    });
    let numbers = x.numbers.pick(places);
    write(imp, at, Tensor { shape, numbers })
}

/// ConstantOfShape: its `value` (one element; 0.0 by default) at every place of a constant
/// shape (an attention mask of ones that PyTorch's BERT makes when given none).
fn constant_of_shape<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let Numbers::Ints(dims) = input(imp, at, 0)?.numbers else {
        return Err("the shape must be integers".into());
    };
    let shape = dims
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| format!("shape {dims:?}: sizes of at least 0"))?;
    let (shape, _) = broadcast(&[&shape])?;
    let n: usize = shape.iter().product();
    let value = match at.node.attribute.iter().find(|a| a.name == "value") {
        None => Numbers::Reals(vec![0.0]),
        Some(a) => {
            let t = a.t.as_ref().ok_or("value holds no tensor")?;
            if is_float(t.data_type) {
                let (_, v) = proto::floats(t, imp.ceiling, imp.zeros.as_mut())?;
                Numbers::Reals(v.iter().map(|&x| f64::from(x)).collect())
            } else {
                Numbers::Ints(proto::ints(t, imp.ceiling)?)
            }
        }
    };
    if value.len() != 1 {
        return Err("value must hold one element".into());
    }
    let numbers = value.pick(std::iter::repeat_n(0, n));
    write(imp, at, Tensor { shape, numbers })
}

/// Slice of a constant vector (opset 10 on: starts, ends, axes [0] and steps as inputs).
pub(super) fn slice<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if imp.opset < 10 {
        return Err("a Slice of constants before opset 10 does not fold".into());
    }
    let x = input(imp, at, 0)?;
    if x.shape.len() != 1 {
        return Err("a Slice of constants folds for vectors only".into());
    }
    let given = |k: usize| at.node.input.get(k).is_some_and(|n| !n.is_empty());
    let one = |imp: &mut Importer<'a>, k: usize, default: i64| -> Result<i64, Refusal> {
        if !given(k) {
            return Ok(default);
        }
        match input(imp, at, k)?.numbers {
            Numbers::Ints(v) if v.len() == 1 => Ok(v[0]),
            _ => Err("a Slice of a constant vector takes one start, end, axis and step".into()),
        }
    };
    let (start, end) = (one(imp, 1, 0)?, one(imp, 2, i64::MAX)?);
    if !matches!(one(imp, 3, 0)?, 0 | -1) {
        return Err("a Slice of a constant vector is along axis 0".into());
    }
    let len = x.numbers.len();
    let (first, count, step) = super::select::range(len, start, end, one(imp, 4, 1)?)?;
    let places = (0..count).map(|k| (first as i64 + k as i64 * step) as usize);
    let numbers = x.numbers.pick(places);
    write(
        imp,
        at,
        Tensor {
            shape: vec![count],
            numbers,
        },
    )
}

/// Reshape of a constant to a shape of as many elements (one −1 inferred, a 0 copying the
/// input's axis).
pub(super) fn reshape<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let x = input(imp, at, 0)?;
    let Numbers::Ints(target) = input(imp, at, 1)?.numbers else {
        return Err("the target shape must be integers".into());
    };
    let shape = super::movement::reshaped(None, &x.shape, &target)
        .map_err(|why| format!("target {target:?}: {why}"))?;
    write(
        imp,
        at,
        Tensor {
            shape,
            numbers: x.numbers,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ONNX's integer Div truncates; Mod takes the divisor's sign, or the dividend's with
    /// `fmod`; an overflow or a division by zero does not fold.
    #[test]
    fn integers_fold_as_onnx_says() {
        assert_eq!(integer("Div", false, -7, 2), Some(-3));
        assert_eq!(integer("Mod", false, -1, 3), Some(2));
        assert_eq!(integer("Mod", false, 7, -3), Some(-2));
        assert_eq!(integer("Mod", true, -7, 3), Some(-1));
        assert_eq!(integer("Mod", false, 1, 0), None);
        assert_eq!(integer("Mul", false, i64::MAX, 2), None);
        assert_eq!(integer("Equal", false, 4, 4), Some(1));
    }

    #[test]
    fn constants_broadcast_as_numpy_does() {
        let (shape, places) = broadcast(&[&[2, 1], &[3]]).ok().unwrap();
        assert_eq!(shape, [2, 3]);
        assert_eq!(places, [vec![0, 0, 0, 1, 1, 1], vec![0, 1, 2, 0, 1, 2]]);
        assert!(broadcast(&[&[2], &[3]]).is_err());
        assert!(broadcast(&[&[1 << 11, 1], &[1, 1 << 11]]).is_err());
    }
}
