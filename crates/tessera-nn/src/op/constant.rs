//! Constants (ONNX Operators: Constant), and shape subgraphs folded at import: the Shape,
//! Gather, Unsqueeze, Squeeze, Concat (and [`super::fold`]'s Cast, Mul, ...) chains that PyTorch exports for
//! `x.view(x.size(0), -1)` and the like compute integer vectors from static shapes, so they
//! become constants ([`Constant::Folded`]) that a Reshape reads. Anything in them that does not
//! fold is refused naming the node.

use super::Family;
use crate::import::proto::{self, Attributes};
use crate::import::{At, Constant, Importer, Refusal, output};
use crate::onnx::AttributeType;

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "Constant",
        import: constant,
        supported: "Constant",
    },
    Family {
        name: "Shape",
        import: shape,
        supported: "Shape, Gather, Unsqueeze, Squeeze, Concat of constants (shape subgraphs, folded at import); Squeeze, Unsqueeze of computed tensors",
    },
    Family {
        name: "Gather",
        import: gather,
        supported: "",
    },
    Family {
        name: "Unsqueeze",
        import: squeeze,
        supported: "",
    },
    Family {
        name: "Squeeze",
        import: squeeze,
        supported: "",
    },
    Family {
        name: "Cast",
        import: super::fold::unary,
        supported: "",
    },
];

/// A Constant node: its value, under its output's name, for the nodes after it to read.
fn constant<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let [a] = &at.node.attribute[..] else {
        return Err("needs exactly one attribute, its value".into());
    };
    // Read as its declared type says, as `nn strip` removes it.
    let kind = match a.name.as_str() {
        "value" => AttributeType::Tensor,
        "value_float" => AttributeType::Float,
        "value_floats" => AttributeType::Floats,
        "value_int" => AttributeType::Int,
        _ => AttributeType::Ints,
    };
    Attributes::of(at.node).get(&a.name, kind)?;
    let value = match a.name.as_str() {
        "value" => Constant::Tensor(a.t.as_ref().ok_or("value holds no tensor")?),
        "value_float" => Constant::Floats(std::slice::from_ref(a.f.as_ref().unwrap_or(&0.0)), true),
        "value_floats" => Constant::Floats(&a.floats, false),
        "value_int" => Constant::Ints(std::slice::from_ref(a.i.as_ref().unwrap_or(&0))),
        "value_ints" => Constant::Ints(&a.ints),
        other => {
            return Err(format!(
                "a constant given as {} is not supported",
                crate::import::shown(other)
            )
            .into());
        }
    };
    let name = output(at)?;
    let taken = imp.value(name).is_ok() || imp.constants.insert(name, value).is_some();
    if taken {
        return Err(format!(
            "writes \"{}\", which is already written",
            crate::import::shown(name)
        )
        .into());
    }
    Ok(())
}

/// The most integers a folded vector holds: shapes, not data.
pub(super) const MOST: usize = 64;

/// Integers of a constant input, and whether it is a scalar.
pub(super) fn integers(imp: &Importer<'_>, c: Constant<'_>) -> Result<(Vec<i64>, bool), Refusal> {
    match c {
        Constant::Tensor(t) => Ok((proto::ints(t, imp.ceiling)?, t.dims.is_empty())),
        Constant::Ints(v) => Ok((v.to_vec(), false)),
        Constant::Folded(i) => Ok(imp.folded[i].clone()),
        Constant::Floats(..) | Constant::FoldedReals(_) => {
            Err("real numbers where integers are needed".into())
        }
    }
}

/// Input `index` of the node as integers, which must be a constant.
fn input_integers<'a>(
    imp: &Importer<'a>,
    at: &At<'a>,
    index: usize,
) -> Result<(Vec<i64>, bool), Refusal> {
    let name = at.node.input.get(index).filter(|n| !n.is_empty());
    let c = name.and_then(|n| imp.constants.get(n.as_str()).copied());
    match c {
        Some(c) => integers(imp, c),
        None => Err(format!(
            "input {index} is computed at run time: only shape subgraphs of constants fold"
        )
        .into()),
    }
}

/// Writes the node's output as the folded `values`.
pub(super) fn fold<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    values: Vec<i64>,
    scalar: bool,
) -> Result<(), Refusal> {
    if values.len() > MOST {
        return Err(format!("folds to {} integers (at most {MOST})", values.len()).into());
    }
    let name = output(at)?;
    imp.folded.push((values, scalar));
    let c = Constant::Folded(imp.folded.len() - 1);
    if imp.value(name).is_ok() || imp.constants.insert(name, c).is_some() {
        return Err(format!(
            "writes \"{}\", which is already written",
            crate::import::shown(name)
        )
        .into());
    }
    Ok(())
}

/// Shape of a computed value: its batch axis (declared, else 1; none where the sample keeps
/// it) and its per-sample axes.
fn shape<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    if a.int("start", 0)? != 0 || a.int("end", i64::MAX)? != i64::MAX {
        return Err("start and end are not supported".into());
    }
    let x = imp.value(at.node.input.first().ok_or("needs an input")?)?;
    let batch = (imp.lead == 1).then(|| imp.batch.unwrap_or(1) as i64);
    let dims = batch
        .into_iter()
        .chain(imp.shapes[x].iter().map(|&d| d as i64));
    fold(imp, at, dims.collect(), false)
}

/// Gather of constant integers along axis 0 by constant indices (negative from the end).
///
/// Of a computed tensor: [`super::select::gather_computed`].
fn gather<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if crate::import::args::constant_input(imp, at, 0).is_none() {
        return super::select::gather_computed(imp, at);
    }
    if crate::import::args::constant_input(imp, at, 1).is_none() {
        return super::embedding::lookup(imp, at);
    }
    if let Some(crate::import::Constant::Tensor(t)) =
        crate::import::args::constant_input(imp, at, 0)
        && crate::import::is_float(t.data_type)
    {
        return super::fold::gather(imp, at);
    }
    if Attributes::of(at.node).int("axis", 0)? != 0 {
        return Err("folds along axis 0 only".into());
    }
    let (data, _) = input_integers(imp, at, 0)?;
    let (indices, scalar) = input_integers(imp, at, 1)?;
    let n = data.len() as i64;
    let picked = indices
        .iter()
        .map(|&i| {
            let i = if i < 0 { i + n } else { i };
            usize::try_from(i).ok().and_then(|i| data.get(i).copied())
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("indices {indices:?} outside {n} elements"))?;
    fold(imp, at, picked, scalar)
}

/// Unsqueeze of a scalar to one element, Squeeze of one element to a scalar (axes 0).
/// Of a computed tensor: a new shape ([`super::movement::squeeze`]).
fn squeeze<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if crate::import::args::constant_input(imp, at, 0).is_none() {
        return super::movement::squeeze(imp, at);
    }
    let unsqueeze = at.node.op_type == "Unsqueeze";
    let axes = squeeze_axes(imp, at)?.unwrap_or_else(|| vec![0]);
    let (values, scalar) = input_integers(imp, at, 0)?;
    if axes != [0] || scalar != unsqueeze || (!unsqueeze && values.len() != 1) {
        return Err(format!(
            "axes {axes:?} on {} integers: only 0 ↔ 1 dimension folds",
            values.len()
        )
        .into());
    }
    fold(imp, at, values, !unsqueeze)
}

/// Squeeze's or Unsqueeze's axes: an attribute (before opset 13) or a constant input.
pub(super) fn squeeze_axes<'a>(
    imp: &Importer<'a>,
    at: &At<'a>,
) -> Result<Option<Vec<i64>>, Refusal> {
    Ok(match Attributes::of(at.node).ints("axes")? {
        Some(a) => Some(a.to_vec()),
        None if at.node.input.get(1).is_some_and(|n| !n.is_empty()) => {
            Some(input_integers(imp, at, 1)?.0)
        }
        None => None,
    })
}

/// Concat of constant integer vectors.
pub(super) fn concat<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let mut all = Vec::new();
    for index in 0..at.node.input.len() {
        let (values, scalar) = input_integers(imp, at, index)?;
        if scalar {
            return Err("joins a scalar".into());
        }
        all.extend(values);
    }
    fold(imp, at, all, false)
}
