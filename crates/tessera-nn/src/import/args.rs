//! What the operators' imports ([`crate::op`]) read of a node: its one computed input, its
//! constants as real numbers (finite), biases, the window of a Conv or pooling node, and
//! constants broadcast to a computed tensor's shape.

use super::proto;
use super::proto::Attributes;
use super::{At, Constant, Importer, Refusal};
use crate::model::{ValueId, Window};

/// The node's one computed input (the others are constants) and its shape.
pub(crate) fn computed<'a>(
    imp: &Importer<'a>,
    at: &At<'a>,
) -> Result<(ValueId, Vec<usize>), Refusal> {
    let mut it = at
        .node
        .input
        .iter()
        .filter(|i| !i.is_empty() && !imp.constants.contains_key(i.as_str()));
    let (Some(a), None) = (it.next(), it.next()) else {
        return Err("needs exactly one computed input (the others constants)".into());
    };
    let v = imp.value(a)?;
    Ok((v, imp.shapes[v].clone()))
}

/// Input `index`, which must be a constant, if the node has it.
pub(crate) fn constant_input<'a>(
    imp: &Importer<'a>,
    at: &At<'a>,
    index: usize,
) -> Option<Constant<'a>> {
    let name = at.node.input.get(index).filter(|n| !n.is_empty())?;
    imp.constants.get(name.as_str()).copied()
}

/// A constant's shape and values as real numbers, which must be finite.
pub(crate) fn real(
    imp: &mut Importer<'_>,
    c: Constant<'_>,
    what: &str,
) -> Result<(Vec<usize>, Vec<f32>), Refusal> {
    let (shape, values) = reals(imp, c, what)?;
    if values.iter().any(|v| !v.is_finite()) {
        return Err(format!("{what} has values that are not finite").into());
    }
    Ok((shape, values))
}

/// A constant's shape and values as real numbers, infinities and NaN included (Where's masks).
pub(crate) fn reals(
    imp: &mut Importer<'_>,
    c: Constant<'_>,
    what: &str,
) -> Result<(Vec<usize>, Vec<f32>), Refusal> {
    let (shape, values) = match c {
        Constant::Tensor(t) => proto::floats(t, imp.ceiling, imp.zeros.as_mut()),
        Constant::Floats(f, scalar) => {
            Ok((if scalar { vec![] } else { vec![f.len()] }, f.to_vec()))
        }
        Constant::FoldedReals(i) => match &imp.folded_reals[i] {
            t if t.integer => Err("integers where real numbers are needed".to_owned()),
            t => Ok((t.shape.clone(), t.values.clone())),
        },
        Constant::Ints(_) | Constant::Folded(_) => {
            Err("integers where real numbers are needed".to_owned())
        }
    }
    .map_err(|e| format!("{what}: {e}"))?;
    Ok((shape, values))
}

/// Input `index` as a real constant.
pub(crate) fn weight<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    index: usize,
    what: &str,
) -> Result<(Vec<usize>, Vec<f32>), Refusal> {
    let c = constant_input(imp, at, index)
        .ok_or_else(|| format!("{what} must be a constant (an initializer)"))?;
    real(imp, c, what)
}

/// A bias of `n` entries from input `index` (given as `[n]`, `[1, n]` or a scalar), or zeros
/// when the node has none.
pub(crate) fn bias<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    index: usize,
    n: usize,
) -> Result<Vec<f32>, Refusal> {
    if at.node.input.get(index).is_none_or(|i| i.is_empty()) {
        return Ok(vec![0.0; n]);
    }
    let (shape, values) = weight(imp, at, index, "the bias")?;
    broadcast(&shape, &values, &[n])
        .ok_or_else(|| format!("bias of shape {shape:?} for {n} outputs").into())
}

/// The window of a Conv or pooling node over an input of `input`: `kernel`, the node's
/// strides and paddings (explicit or `auto_pad`), each in range; dilation must be 1.
pub(crate) fn window(
    a: &Attributes<'_>,
    imp: &Importer<'_>,
    input: [usize; 2],
    kernel: [usize; 2],
) -> Result<(Window, [usize; 2]), Refusal> {
    let range = (1, imp.ceiling.axis);
    if a.sizes("dilations", Some([1, 1]), range)? != [1, 1] {
        return Err("dilation other than 1 is not supported".into());
    }
    let stride = a.sizes("strides", Some([1, 1]), range)?;
    let auto = a.string("auto_pad")?.unwrap_or(b"NOTSET");
    let pads = match auto {
        b"NOTSET" => a.sizes("pads", Some([0; 4]), (0, imp.ceiling.axis))?,
        b"VALID" => [0; 4],
        b"SAME_UPPER" | b"SAME_LOWER" => {
            let total = |i: usize| {
                ((input[i].div_ceil(stride[i]) - 1) * stride[i] + kernel[i])
                    .saturating_sub(input[i])
            };
            let (th, tw) = (total(0), total(1));
            if auto == b"SAME_UPPER" {
                [th / 2, tw / 2, th - th / 2, tw - tw / 2]
            } else {
                [th - th / 2, tw - tw / 2, th / 2, tw / 2]
            }
        }
        other => {
            return Err(format!(
                "auto_pad {} is not an ONNX padding",
                crate::import::shown(&String::from_utf8_lossy(other))
            )
            .into());
        }
    };
    let window = Window {
        kernel,
        stride,
        pads,
    };
    let out = window
        .output(input)
        .ok_or_else(|| format!("a window {window:?} does not fit an input of {input:?}"))?;
    Ok((window, out))
}

/// `values` of `shape` broadcast (NumPy rules) to the per-sample shape `to`, where `shape` may
/// carry a leading batch axis of 1; `None` if it does not broadcast.
pub(crate) fn broadcast(shape: &[usize], values: &[f32], to: &[usize]) -> Option<Vec<f32>> {
    let from = crate::kernels::aligned(shape, to)?;
    let n: usize = from.iter().product();
    (values.len() == n).then(|| {
        let at = crate::kernels::broadcast_indices(&from, to);
        at.into_iter().map(|i| values[i]).collect()
    })
}
