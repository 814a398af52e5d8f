//! BatchNormalization (ONNX Operators) at inference, a per-channel `a·x + b` with `a = scale /
//! √(var + ε)` and `b = bias − a·mean`: folded into the Conv or Gemm before it, where it is
//! that layer's only reader; elsewhere (after a Concat, an Add, a ReLU: DenseNet's
//! pre-activations) a depthwise 1×1 Conv, its per-channel scale and shift the server's
//! weights.

use super::{Conv, Dense, Family, Op};
use crate::error::Error;
use crate::import::args::{computed, weight};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::model::{Model, Window};

pub(super) const FAMILY: &[Family] = &[Family {
    name: "BatchNormalization",
    import,
    supported: "BatchNormalization (folded into a Conv or Gemm before it; elsewhere a depthwise 1×1 Conv)",
}];

/// Kept as a node until the fold ([`fold_batch_norms`]): a per-channel [`Dense`] whose second
/// input is `usize::MAX`.
fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    if a.int("training_mode", 0)? != 0 {
        return Err("training_mode is not supported".into());
    }
    let eps = a.float("epsilon", 1e-5)?;
    let (x, shape) = computed(imp, at)?;
    let channels = *shape.first().unwrap_or(&0);
    let mut params = [(); 4].map(|_| Vec::new());
    for (i, p) in params.iter_mut().enumerate() {
        let (s, v) = weight(imp, at, i + 1, "scale, bias, mean and variance")?;
        if v.len() != channels {
            return Err(format!("parameter of shape {s:?} for {channels} channels").into());
        }
        *p = v;
    }
    let [scale, bias, mean, var] = params;
    // A stripped architecture has no numbers to fold, only the shape.
    let (a, b) = if imp.zeros.is_some() {
        (vec![0.0; channels], vec![0.0; channels])
    } else {
        affine(&scale, &bias, &mean, &var, eps)?
    };
    // Kept as a node until the fold: per-channel a (weights) and b (bias).
    let fold = Dense {
        inputs: channels,
        outputs: channels,
        weight: a,
        bias: b,
    };
    imp.push(at, Op::Dense(fold), vec![x, usize::MAX], shape)
}

/// BatchNormalization as a per-channel `a·x + b`: `a = scale / √(var + ε)`, `b = bias − a·mean`.
fn affine(
    scale: &[f32],
    bias: &[f32],
    mean: &[f32],
    var: &[f32],
    eps: f32,
) -> Result<(Vec<f32>, Vec<f32>), Refusal> {
    if let Some(v) = var.iter().find(|&&v| f64::from(v) + f64::from(eps) <= 0.0) {
        return Err(format!(
            "a variance of {v} with epsilon {eps}: variance + epsilon must be positive"
        )
        .into());
    }
    let a: Vec<f32> = (scale.iter().zip(var))
        .map(|(&s, &v)| (f64::from(s) / (f64::from(v) + f64::from(eps)).sqrt()) as f32)
        .collect();
    let b = (0..a.len()).map(|c| bias[c] - a[c] * mean[c]).collect();
    Ok((a, b))
}

/// Folds each BatchNormalization (imported as a per-channel [`Dense`] whose second input is
/// `usize::MAX`) into the Conv or Gemm before it, where it is that layer's only reader;
/// elsewhere (after a Concat, an Add, a ReLU: DenseNet's pre-activations) it becomes a
/// depthwise 1×1 Conv, its per-channel scale and shift the server's weights.
pub(crate) fn fold_batch_norms(model: &mut Model) -> Result<(), Error> {
    let mut writer: Vec<Option<usize>> = vec![None; model.shapes.len()];
    let mut readers = vec![0usize; model.shapes.len()];
    for (i, n) in model.nodes.iter().enumerate() {
        writer[n.output] = Some(i);
        for &v in &n.inputs {
            if let Some(r) = readers.get_mut(v) {
                *r += 1;
            }
        }
    }
    for i in 0..model.nodes.len() {
        if model.nodes[i].inputs.get(1) != Some(&usize::MAX) {
            continue;
        }
        let (x, out) = (model.nodes[i].inputs[0], model.nodes[i].output);
        let Op::Dense(affine) = std::mem::replace(&mut model.nodes[i].op, Op::Relu(super::Relu))
        else {
            let name = &model.nodes[i].name;
            return Err(Error::node(
                name,
                "BatchNormalization",
                "not a per-channel map",
            ));
        };
        let producer = writer[x]
            .filter(|_| readers[x] == 1 && x != model.output)
            .filter(|&p| match &model.nodes[p].op {
                Op::Conv(c) => c.out_channels == affine.outputs,
                Op::Dense(d) => {
                    model.nodes[p].inputs.get(1) != Some(&usize::MAX) && d.outputs == affine.outputs
                }
                _ => false,
            });
        match producer {
            Some(p) => {
                fold_into(&mut model.nodes[p].op, &affine);
                // The BatchNormalization's output is now the producer's.
                model.nodes[p].output = out;
                writer[out] = Some(p);
            }
            None => {
                let node = &mut model.nodes[i];
                node.op = depthwise(&model.shapes[x], affine)
                    .map_err(|why| Error::node(&node.name, "BatchNormalization", why))?;
                node.inputs.truncate(1);
            }
        }
    }
    // Every BatchNormalization is folded or a Conv now.
    model.nodes.retain(|n| n.inputs.get(1) != Some(&usize::MAX));
    Ok(())
}

/// `affine` (per output channel `a·y + b`) folded into the Conv or Gemm `op`.
fn fold_into(op: &mut Op, affine: &Dense) {
    let (weight, bias, per_channel) = match op {
        Op::Conv(c) => {
            let k = c.in_channels / c.groups * c.window.kernel[0] * c.window.kernel[1];
            (&mut c.weight, &mut c.bias, k)
        }
        Op::Dense(d) => (&mut d.weight, &mut d.bias, d.inputs),
        _ => return,
    };
    for (c, (a, b)) in affine.weight.iter().zip(&affine.bias).enumerate() {
        weight[c * per_channel..(c + 1) * per_channel]
            .iter_mut()
            .for_each(|w| *w *= a);
        bias[c] = bias[c] * a + b;
    }
}

/// A per-channel `a·x + b` on a `[C, H, W]` value as a depthwise 1×1 Conv.
fn depthwise(shape: &[usize], affine: Dense) -> Result<Op, String> {
    let &[channels, _, _] = shape else {
        return Err(format!(
            "cannot be folded into a Conv or Gemm before it, and its input of shape {shape:?} is not [C, H, W]"
        ));
    };
    Ok(Op::Conv(Conv {
        in_channels: channels,
        out_channels: channels,
        groups: channels,
        window: Window {
            kernel: [1, 1],
            stride: [1, 1],
            pads: [0; 4],
        },
        weight: affine.weight,
        bias: affine.bias,
    }))
}
