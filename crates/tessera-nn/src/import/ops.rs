//! One function per ONNX operator (ONNX Operators, `docs/Operators.md`), and [`OPERATORS`], the
//! one registry the importer dispatches on: each reads its node's attributes and constants,
//! checks the shapes, and adds a layer of [`crate::model`].

use super::proto::{self, Attributes};
use super::{At, Constant, Importer, Refusal, output};
use crate::error::Error;
use crate::model::{Conv, Dense, Model, Op, Pool, ValueId, Window};

/// What imports one node.
type Import = for<'a> fn(&mut Importer<'a>, &At<'a>) -> Result<(), Refusal>;

/// The operators the importer reads, by their ONNX names.
const OPERATORS: &[(&str, Import)] = &[
    ("Constant", constant),
    ("Gemm", gemm),
    ("MatMul", matmul),
    ("Conv", conv),
    ("Relu", relu),
    ("MaxPool", max_pool),
    ("AveragePool", average_pool),
    ("GlobalAveragePool", global_average_pool),
    ("BatchNormalization", batch_norm),
    ("Flatten", flatten),
    ("Reshape", reshape),
    ("Identity", alias),
    ("Dropout", alias),
    ("Transpose", transpose),
    ("Concat", concat),
    ("Shape", super::fold::shape),
    ("Gather", super::fold::gather),
    ("Unsqueeze", super::fold::squeeze),
    ("Squeeze", super::fold::squeeze),
    ("Cast", super::fold::cast),
    ("Mul", super::fold::mul),
    ("Pad", pad),
    ("Clip", clip),
    ("Add", add_sub),
    ("Sub", add_sub),
    ("Softmax", client_side),
    ("LogSoftmax", client_side),
    ("Log", client_side),
];

/// Imports one node: an operator of the default domain in [`OPERATORS`], with one output
/// (Dropout's mask aside).
pub(super) fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let node = at.node;
    let default_domain = node.domain.is_empty() || node.domain == "ai.onnx";
    let Some((_, run)) = OPERATORS
        .iter()
        .find(|(op, _)| default_domain && *op == node.op_type)
    else {
        return Err(Refusal::Unsupported);
    };
    if node.op_type != "Dropout" && node.output.iter().skip(1).any(|o| !o.is_empty()) {
        return Err("has more than one output".into());
    }
    run(imp, at)
}

/// The node's one computed input (the others are constants) and its shape.
fn computed<'a>(imp: &Importer<'a>, at: &At<'a>) -> Result<(ValueId, Vec<usize>), Refusal> {
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
fn constant_input<'a>(imp: &Importer<'a>, at: &At<'a>, index: usize) -> Option<Constant<'a>> {
    let name = at.node.input.get(index).filter(|n| !n.is_empty())?;
    imp.constants.get(name.as_str()).copied()
}

/// A constant's shape and values as real numbers, which must be finite.
fn real(
    imp: &mut Importer<'_>,
    c: Constant<'_>,
    what: &str,
) -> Result<(Vec<usize>, Vec<f32>), Refusal> {
    let (shape, values) = match c {
        Constant::Tensor(t) => proto::floats(t, imp.ceiling, imp.zeros.as_mut()),
        Constant::Floats(f, scalar) => {
            Ok((if scalar { vec![] } else { vec![f.len()] }, f.to_vec()))
        }
        Constant::Ints(_) | Constant::Folded(_) => {
            Err("integers where real numbers are needed".to_owned())
        }
    }
    .map_err(|e| format!("{what}: {e}"))?;
    if values.iter().any(|v| !v.is_finite()) {
        return Err(format!("{what} has values that are not finite").into());
    }
    Ok((shape, values))
}

/// Input `index` as a real constant.
fn weight<'a>(
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
fn bias<'a>(
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

fn constant<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let [a] = &at.node.attribute[..] else {
        return Err("needs exactly one attribute, its value".into());
    };
    let value = match a.name.as_str() {
        "value" => Constant::Tensor(a.t.as_ref().ok_or("value holds no tensor")?),
        "value_float" => Constant::Floats(std::slice::from_ref(a.f.as_ref().unwrap_or(&0.0)), true),
        "value_floats" => Constant::Floats(&a.floats, false),
        "value_int" => Constant::Ints(std::slice::from_ref(a.i.as_ref().unwrap_or(&0))),
        "value_ints" => Constant::Ints(&a.ints),
        other => {
            return Err(format!(
                "a constant given as {} is not supported",
                super::shown(other)
            )
            .into());
        }
    };
    let name = output(at)?;
    let taken = imp.value(name).is_ok() || imp.constants.insert(name, value).is_some();
    if taken {
        return Err(format!(
            "writes \"{}\", which is already written",
            super::shown(name)
        )
        .into());
    }
    Ok(())
}

fn gemm<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    if a.int("transA", 0)? != 0 {
        return Err("transA = 1 would mix the batch axis".into());
    }
    let (x, shape) = computed(imp, at)?;
    let w = weight(imp, at, 1, "B")?;
    let (mut weight, outputs, inputs) = matrix(w, a.int("transB", 0)? != 0)?;
    let alpha = a.float("alpha", 1.0)?;
    weight.iter_mut().for_each(|w| *w *= alpha);
    let mut bias = bias(imp, at, 2, outputs)?;
    let beta = a.float("beta", 1.0)?;
    bias.iter_mut().for_each(|b| *b *= beta);
    dense(imp, at, (x, &shape), weight, bias, [inputs, outputs])
}

fn matmul<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if constant_input(imp, at, 0).is_some() {
        return Err("the constant must be the second operand".into());
    }
    let (x, shape) = computed(imp, at)?;
    let w = weight(imp, at, 1, "the second operand")?;
    let (weight, outputs, inputs) = matrix(w, false)?;
    dense(
        imp,
        at,
        (x, &shape),
        weight,
        vec![0.0; outputs],
        [inputs, outputs],
    )
}

/// A 2-D weight as `outputs × inputs`, row-major, from `[outputs, inputs]` (`transposed`) or
/// `[inputs, outputs]`.
fn matrix(
    (shape, values): (Vec<usize>, Vec<f32>),
    transposed: bool,
) -> Result<(Vec<f32>, usize, usize), Refusal> {
    let [r, c] = shape[..] else {
        return Err(format!("weight of shape {shape:?} is not a matrix").into());
    };
    if transposed {
        return Ok((values, r, c));
    }
    let mut t = vec![0.0; values.len()];
    for i in 0..r {
        for j in 0..c {
            t[j * r + i] = values[i * c + j];
        }
    }
    Ok((t, c, r))
}

fn dense<'a>(
    imp: &mut Importer<'a>,
    at: &At<'a>,
    (x, shape): (ValueId, &[usize]),
    weight: Vec<f32>,
    bias: Vec<f32>,
    [inputs, outputs]: [usize; 2],
) -> Result<(), Refusal> {
    if shape != [inputs] {
        return Err(format!(
            "an input of shape {shape:?} for a weight of {inputs} inputs; Flatten or Reshape it first"
        )
        .into());
    }
    let dense = Dense {
        inputs,
        outputs,
        weight,
        bias,
    };
    imp.push(at, Op::Dense(dense), vec![x], vec![outputs])
}

fn spatial(shape: &[usize]) -> Result<[usize; 3], Refusal> {
    match shape {
        &[c, h, w] => Ok([c, h, w]),
        _ => {
            Err(format!("an input of shape {shape:?}; [channels, height, width] is needed").into())
        }
    }
}

/// The window of a Conv or pooling node over an input of `input`: `kernel`, the node's
/// strides and paddings (explicit or `auto_pad`), each in range; dilation must be 1.
fn window(
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

fn conv<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    let (x, shape) = computed(imp, at)?;
    let [ci, h, w] = spatial(&shape)?;
    let (wshape, weight) = weight(imp, at, 1, "weight")?;
    let [co, wci, kh, kw] = wshape[..] else {
        return Err(format!("weight of shape {wshape:?}").into());
    };
    let group = a.int("group", 1)?;
    let groups = usize::try_from(group)
        .ok()
        .filter(|&g| g > 0 && ci % g == 0 && co % g == 0)
        .ok_or_else(|| {
            format!("{ci} input and {co} output channels do not divide into {group} groups")
        })?;
    let declared = a.sizes("kernel_shape", Some([kh, kw]), (1, imp.ceiling.axis))?;
    if wci * groups != ci || declared != [kh, kw] {
        return Err(format!(
            "weight of shape {wshape:?} for an input of {ci} channels in {groups} groups"
        )
        .into());
    }
    let (window, [oh, ow]) = window(&a, imp, [h, w], [kh, kw])?;
    let bias = bias(imp, at, 2, co)?;
    let conv = Conv {
        in_channels: ci,
        out_channels: co,
        groups,
        window,
        weight,
        bias,
    };
    imp.push(at, Op::Conv(conv), vec![x], vec![co, oh, ow])
}

fn relu<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    imp.push(at, Op::Relu, vec![x], shape)
}

fn max_pool<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    pool(imp, at, true)
}

fn average_pool<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    pool(imp, at, false)
}

fn pool<'a>(imp: &mut Importer<'a>, at: &At<'a>, max: bool) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    let ceil = a.int("ceil_mode", 0)? != 0;
    let (x, shape) = computed(imp, at)?;
    let [c, h, w] = spatial(&shape)?;
    let kernel = a.sizes("kernel_shape", None, (1, imp.ceiling.axis))?;
    let (window, _) = window(&a, imp, [h, w], kernel)?;
    if (0..4).any(|i| window.pads[i] >= kernel[i % 2]) {
        return Err(format!("pads {:?} as wide as the kernel {kernel:?}", window.pads).into());
    }
    let count_include_pad = max || a.int("count_include_pad", 0)? != 0;
    let pool = Pool::new(window, count_include_pad, ceil, [h, w]);
    let [oh, ow] = pool
        .window
        .output([h, w])
        .ok_or("the ceiled window does not fit")?;
    let op = if max {
        Op::MaxPool(pool)
    } else {
        Op::AvgPool(pool)
    };
    imp.push(at, op, vec![x], vec![c, oh, ow])
}

fn global_average_pool<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let [c, _, _] = spatial(&shape)?;
    // ONNX keeps the spatial axes as 1 × 1.
    imp.push(at, Op::GlobalAvgPool, vec![x], vec![c, 1, 1])
}

fn batch_norm<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
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

fn flatten<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let axis = Attributes::of(at.node).int("axis", 1)?;
    if axis != 1 {
        return Err(
            format!("axis {axis} would mix the batch axis; only axis 1 is supported").into(),
        );
    }
    let (x, shape) = computed(imp, at)?;
    imp.push(at, Op::Reshape, vec![x], vec![shape.iter().product()])
}

fn reshape<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let target = if imp.opset < 5 {
        let shape = Attributes::of(at.node).ints("shape")?;
        shape
            .ok_or("the target shape attribute is missing")?
            .to_vec()
    } else {
        let c = constant_input(imp, at, 1).ok_or("the target shape is computed at run time")?;
        super::fold::integers(imp, c)
            .map_err(|_| "a target shape of real numbers")?
            .0
    };
    let (x, shape) = computed(imp, at)?;
    let out =
        reshaped(imp.batch, &shape, &target).map_err(|why| format!("target {target:?}: {why}"))?;
    imp.push(at, Op::Reshape, vec![x], out)
}

/// A Reshape's per-sample target: the first entry is the batch axis (−1, 0, 1 or the
/// declared batch size), the rest may hold one −1 and copies (0) of the input's axes.
fn reshaped(batch: Option<usize>, input: &[usize], target: &[i64]) -> Result<Vec<usize>, String> {
    let Some((&first, rest)) = target.split_first() else {
        return Err("empty".to_owned());
    };
    let batch_ok = matches!(first, -1..=1) || batch.is_some_and(|b| i64::try_from(b) == Ok(first));
    if !batch_ok {
        return Err("the first axis must stay the batch axis".to_owned());
    }
    let total: usize = input.iter().product();
    let mut out = Vec::with_capacity(rest.len().min(16));
    let mut infer = None;
    for (i, &d) in rest.iter().enumerate() {
        out.push(match d {
            -1 if infer.is_none() => {
                infer = Some(i);
                1
            }
            // A 0 copies the input's axis at the same position (counting the batch axis).
            0 => *input.get(i).ok_or("0 past the input's axes")?,
            d if d > 0 => usize::try_from(d).map_err(|_| "an axis too large")?,
            _ => return Err("more than one −1 or a negative axis".to_owned()),
        });
    }
    let known = out.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if let Some(i) = infer {
        let known = known.filter(|&k| k != 0 && total.is_multiple_of(k));
        out[i] = total / known.ok_or(format!("cannot infer −1 for {total} elements"))?;
    } else if known != Some(total) {
        return Err(format!("{out:?} does not hold the {total} elements"));
    }
    Ok(out)
}

fn alias<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, _) = computed(imp, at)?;
    // The same value under the output's name.
    imp.alias(output(at)?, x)
}

fn transpose<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let rank = shape.len() + 1;
    let reversed: Vec<i64> = (0..rank as i64).rev().collect();
    let perm = Attributes::of(at.node).ints("perm")?.unwrap_or(&reversed);
    let mut seen = vec![false; rank];
    let ok = perm.len() == rank
        && perm.first() == Some(&0)
        && perm.iter().all(|&p| {
            usize::try_from(p)
                .ok()
                .filter(|&p| p < rank)
                .is_some_and(|p| !std::mem::replace(&mut seen[p], true))
        });
    if !ok {
        return Err(
            format!("perm {perm:?} must permute the axes and keep the batch axis first").into(),
        );
    }
    let perm: Vec<usize> = perm[1..].iter().map(|&p| p as usize - 1).collect();
    let out = perm.iter().map(|&p| shape[p]).collect();
    imp.push(at, Op::Transpose(perm), vec![x], out)
}

/// Concat of computed tensors of one rank, equal but on the axis (not the batch axis).
fn concat<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let args: Vec<&str> = at.node.input.iter().map(String::as_str).collect();
    if args.is_empty() || args.iter().any(|a| a.is_empty()) {
        return Err("needs one or more inputs".into());
    }
    if args.iter().all(|a| imp.constants.contains_key(a)) {
        // A shape subgraph's join of integers.
        return super::fold::concat(imp, at);
    }
    if args.iter().any(|a| imp.constants.contains_key(a)) {
        return Err("joins a constant tensor (only computed tensors are joined)".into());
    }
    let inputs = args
        .iter()
        .map(|a| imp.value(a))
        .collect::<Result<Vec<_>, _>>()?;
    let first = imp.shapes[inputs[0]].clone();
    let rank = first.len() as i64 + 1;
    let axis = Attributes::of(at.node).int("axis", i64::MAX)?;
    let axis = if axis < 0 { axis + rank } else { axis };
    if !(1..rank).contains(&axis) {
        return Err(
            format!("axis {axis} must be an axis of the sample (not the batch axis)").into(),
        );
    }
    let axis = axis as usize - 1;
    let mut out = first.clone();
    out[axis] = 0;
    for &v in &inputs {
        let shape = &imp.shapes[v];
        let fits = shape.len() == first.len()
            && shape
                .iter()
                .zip(&first)
                .enumerate()
                .all(|(i, (a, b))| i == axis || a == b);
        if !fits {
            return Err(format!(
                "shapes {first:?} and {shape:?} do not join on axis {}",
                axis + 1
            )
            .into());
        }
        out[axis] = out[axis]
            .checked_add(shape[axis])
            .ok_or("the joined axis overflows")?;
    }
    imp.push(at, Op::Concat(axis), inputs, out)
}

/// Pad with zeros in constant mode, the batch axis unpadded: pads and the value from inputs
/// (opset 11 on) or attributes.
fn pad<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    let mode = a.string("mode")?.unwrap_or(b"constant");
    if mode != b"constant" {
        return Err(format!("mode {} (only constant)", String::from_utf8_lossy(mode)).into());
    }
    let (pads, value) = if imp.opset < 11 {
        let pads = a
            .ints("pads")?
            .ok_or("the pads attribute is missing")?
            .to_vec();
        (pads, a.float("value", 0.0)?)
    } else {
        let c = constant_input(imp, at, 1).ok_or("the pads are computed at run time")?;
        let pads = super::fold::integers(imp, c)
            .map_err(|_| "pads of real numbers")?
            .0;
        if at.node.input.get(3).is_some_and(|n| !n.is_empty()) {
            return Err("pads only some axes (the axes input)".into());
        }
        let value = match constant_input(imp, at, 2) {
            Some(c) => real(imp, c, "the padding value")?
                .1
                .first()
                .copied()
                .unwrap_or(0.0),
            None => 0.0,
        };
        (pads, value)
    };
    if value != 0.0 {
        return Err(format!("pads with {value} (only zeros)").into());
    }
    let (x, shape) = computed(imp, at)?;
    let rank = shape.len() + 1;
    let pad = |i: usize| {
        usize::try_from(pads[i])
            .ok()
            .filter(|&p| p <= imp.ceiling.axis)
    };
    if pads.len() != 2 * rank || pads[0] != 0 || pads[rank] != 0 {
        return Err(format!("pads {pads:?}: two per axis, none on the batch axis").into());
    }
    let per_axis = (1..rank)
        .map(|i| Some((pad(i)?, pad(i + rank)?)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            format!(
                "pads {pads:?}: each from 0 to {} (no cropping)",
                imp.ceiling.axis
            )
        })?;
    let out = shape
        .iter()
        .zip(&per_axis)
        .map(|(&d, &(b, e))| d + b + e)
        .collect();
    imp.push(at, Op::Pad(per_axis), vec![x], out)
}

/// Clip between constant bounds given as inputs (opset 11 on; an empty name: no bound).
fn clip<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    if imp.opset < 11 {
        return Err("bounds as attributes (before opset 11); export at opset 11 or later".into());
    }
    let (x, shape) = computed(imp, at)?;
    let mut bound = |index: usize, what: &str| -> Result<Option<f32>, Refusal> {
        if at.node.input.get(index).is_none_or(|n| n.is_empty()) {
            return Ok(None);
        }
        let (_, v) = weight(imp, at, index, what)?;
        match v[..] {
            [v] => Ok(Some(v)),
            _ => Err(format!("{what} must be one number").into()),
        }
    };
    let (lo, hi) = (bound(1, "the lower bound")?, bound(2, "the upper bound")?);
    if let (Some(lo), Some(hi)) = (lo, hi)
        && lo > hi
    {
        return Err(format!("bounds {lo} > {hi}").into());
    }
    imp.push(at, Op::Clip(lo, hi), vec![x], shape)
}

fn add_sub<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let sub = at.node.op_type == "Sub";
    let args = &at.node.input;
    if args.len() != 2 {
        return Err("needs two inputs".into());
    }
    match (constant_input(imp, at, 0), constant_input(imp, at, 1)) {
        (None, None) => {
            let (a, b) = (imp.value(&args[0])?, imp.value(&args[1])?);
            if imp.shapes[a] != imp.shapes[b] {
                return Err(format!(
                    "shapes {:?} and {:?} differ; broadcasting between computed tensors is not supported",
                    imp.shapes[a], imp.shapes[b]
                )
                .into());
            }
            let shape = imp.shapes[a].clone();
            imp.push(at, if sub { Op::Sub } else { Op::Add }, vec![a, b], shape)
        }
        (Some(_), Some(_)) => Err("both inputs are constants".into()),
        (Some(_), None) if sub => Err("a constant minus a computed tensor is not supported".into()),
        (first, _) => {
            let (x, shape) = computed(imp, at)?;
            let k = usize::from(first.is_none());
            let (cshape, mut c) = weight(imp, at, k, "the constant")?;
            if sub {
                c.iter_mut().for_each(|v| *v = -*v);
            }
            let c = broadcast(&cshape, &c, &shape).ok_or_else(|| {
                format!("a constant of shape {cshape:?} does not broadcast to {shape:?}")
            })?;
            imp.push(at, Op::AddConst(c), vec![x], shape)
        }
    }
}

/// Softmax, LogSoftmax or Log: the client's to apply, if at the output.
fn client_side<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let out = imp.new_value(output(at)?, shape)?;
    imp.client.insert(out, (at.node.op_type.clone(), x));
    Ok(())
}

/// `values` of `shape` broadcast (NumPy rules) to the per-sample shape `to`, where `shape` may
/// carry a leading batch axis of 1; `None` if it does not broadcast.
fn broadcast(shape: &[usize], values: &[f32], to: &[usize]) -> Option<Vec<f32>> {
    let mut full = vec![1usize];
    full.extend_from_slice(to);
    if shape.len() > full.len() {
        return None;
    }
    let lead = full.len() - shape.len();
    let src: Vec<usize> = (0..full.len())
        .map(|i| if i < lead { 1 } else { shape[i - lead] })
        .collect();
    if src.iter().zip(&full).any(|(&s, &f)| s != 1 && s != f) {
        return None;
    }
    let n: usize = to.iter().product();
    let mut out = Vec::with_capacity(n);
    for flat in 0..n {
        let (mut rem, mut idx, mut stride) = (flat, 0, 1);
        for axis in (1..full.len()).rev() {
            let i = rem % full[axis];
            rem /= full[axis];
            if src[axis] != 1 {
                idx += i * stride;
            }
            stride *= src[axis];
        }
        out.push(values[idx]);
    }
    Some(out)
}

/// Folds each BatchNormalization (imported as a per-channel [`Dense`] whose second input is
/// `usize::MAX`) into the Conv or Gemm before it, where it is that layer's only reader;
/// elsewhere (after a Concat, an Add, a ReLU: DenseNet's pre-activations) it becomes a
/// depthwise 1×1 Conv, its per-channel scale and shift the server's weights.
pub(super) fn fold_batch_norms(model: &mut Model) -> Result<(), Error> {
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
        let Op::Dense(affine) = std::mem::replace(&mut model.nodes[i].op, Op::Relu) else {
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
