//! ONNX files to [`Model`]s, by `onnx-ir` (the parser of the Burn project: every opset from 1,
//! typed attributes, constants lifted, weights from initializers or from graph inputs that have
//! initializers) followed by this crate's own checks: an operator outside [`SUPPORTED`] or a
//! shape it cannot handle stops the import with the node's name and operator.
//!
//! The batch axis is dropped: every tensor's first ONNX axis is the batch, and a node may not
//! mix it with the others (Flatten from axis 1, Reshape keeping the first axis, Transpose
//! fixing axis 0). BatchNormalization is folded into the Conv or Gemm before it; Softmax,
//! LogSoftmax and Log at the end of the graph are peeled off into [`Model::client_side`].
//!
//! [`SUPPORTED`]: crate::model::SUPPORTED

use crate::error::Error;
use crate::model::{Conv, Dense, Model, Node, Op, Pool, ValueId, Window};
use crate::strip;
use onnx_ir::node::padding::{AutoPad, PaddingConfig2d};
use onnx_ir::{
    ArgType, Argument, Message, ModelProto, Node as OnnxNode, OnnxGraph, OnnxGraphBuilder,
};
use std::collections::HashMap;
use std::path::Path;

/// Reads and imports the model at `path`.
pub fn load(path: &Path) -> Result<Model, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    from_bytes(&bytes, &path.display().to_string())
}

/// Imports a model from the bytes of an ONNX file; `what` names it in errors.
pub fn from_bytes(bytes: &[u8], what: &str) -> Result<Model, Error> {
    let mut proto = strip::parse(bytes, what)?;
    let stripped = strip::fill(&mut proto, what)?;
    let filled;
    let bytes = if stripped {
        filled = proto.write_to_bytes().map_err(|e| Error::Parse {
            what: what.to_owned(),
            reason: e.to_string(),
        })?;
        &filled[..]
    } else {
        bytes
    };
    // The parser may panic on a malformed file; a file is untrusted input, so that becomes an
    // error naming it.
    let parsed = std::panic::catch_unwind(|| OnnxGraphBuilder::new().parse_bytes(bytes));
    let graph = match parsed {
        Ok(Ok(graph)) => graph,
        Ok(Err(e)) => {
            return Err(Error::Parse {
                what: what.to_owned(),
                reason: e.to_string(),
            });
        }
        Err(_) => {
            return Err(Error::Parse {
                what: what.to_owned(),
                reason: "the parser failed on it".to_owned(),
            });
        }
    };
    let names = file_names(&proto, &graph);
    let rename = |node: String| names.get(&node).cloned();
    let mut model = Importer::new(&graph)
        .and_then(|i| i.run(&graph))
        .map_err(|e| match e {
            Error::Node { node, op, reason } => match rename(node.clone()) {
                Some((label, file_op)) => Error::Node {
                    node: label,
                    op: file_op,
                    reason,
                },
                None => Error::Node { node, op, reason },
            },
            Error::Unsupported { node, op } => match rename(node.clone()) {
                Some((label, file_op)) => Error::Unsupported {
                    node: label,
                    op: file_op,
                },
                None => Error::Unsupported { node, op },
            },
            other => other,
        })?;
    model.has_weights = !stripped;
    Ok(model)
}

/// The file's own names for the parser's nodes, which the parser renames (`conv2d1`): a node's
/// name where the file gives one, else the tensor it writes, and its ONNX operator. The parser
/// keeps the file's order and drops or retypes nodes only in known ways (Gemm and MatMul to
/// Linear, Conv to Conv2d), so a forward scan pairs them.
fn file_names(proto: &ModelProto, graph: &OnnxGraph) -> HashMap<String, (String, String)> {
    let fold = |s: &str| {
        let s = s.to_ascii_lowercase();
        s.strip_suffix("1d")
            .or(s.strip_suffix("2d"))
            .or(s.strip_suffix("3d"))
            .map_or(s.clone(), str::to_owned)
    };
    let mut file = proto.graph.node.iter().enumerate();
    let mut names = HashMap::new();
    for node in &graph.nodes {
        let ty = match node {
            OnnxNode::Constant(_) => continue,
            OnnxNode::Custom(c) => c.op_type.clone(),
            n => n.node_type().to_string(),
        };
        let ty = fold(&ty);
        let found = file.by_ref().find(|(_, n)| {
            let op = fold(&n.op_type);
            op == ty || (ty == "linear" && (op == "gemm" || op == "matmul"))
        });
        let Some((i, n)) = found else { break };
        let label = if !n.name.is_empty() {
            format!("{:?}", n.name)
        } else {
            format!(
                "#{i} writing {:?}",
                n.output.first().map_or("", String::as_str)
            )
        };
        names.insert(node.name().to_owned(), (label, n.op_type.clone()));
    }
    names
}

/// The state of one import: ONNX value names to values, their shapes, the nodes so far.
struct Importer {
    values: HashMap<String, ValueId>,
    shapes: Vec<Vec<usize>>,
    nodes: Vec<Node>,
    /// Nodes that only the client may apply, by the value they write: (op, its input).
    client: HashMap<ValueId, (String, ValueId)>,
    /// The declared batch size, where the input fixes one.
    batch: Option<usize>,
    input_name: String,
}

/// The first argument of a node that is not a constant: the tensor it computes on.
fn dynamic(args: &[Argument]) -> impl Iterator<Item = &Argument> {
    args.iter()
        .filter(|a| a.value().is_none() && !a.name.is_empty())
}

impl Importer {
    fn new(graph: &OnnxGraph) -> Result<Self, Error> {
        let inputs: Vec<&Argument> = dynamic(&graph.inputs).collect();
        let [input] = inputs[..] else {
            return Err(Error::Graph(format!(
                "{} inputs that are not weights; one is supported",
                inputs.len()
            )));
        };
        let ArgType::Tensor(t) = &input.ty else {
            return Err(Error::Graph(format!(
                "input {:?} is not a tensor",
                input.name
            )));
        };
        let dims = t.static_shape.clone().unwrap_or_default();
        if dims.len() < 2 || dims.len() != t.rank {
            return Err(Error::Graph(format!(
                "input {:?} has rank {} with shape {:?}; a batch axis and known per-sample axes are needed",
                input.name, t.rank, dims
            )));
        }
        let sample: Option<Vec<usize>> = dims[1..].iter().copied().collect();
        let Some(sample) = sample.filter(|s| s.iter().all(|&d| d > 0)) else {
            return Err(Error::Graph(format!(
                "input {:?} has shape {:?}; every axis but the batch must be known",
                input.name, dims
            )));
        };
        Ok(Importer {
            values: HashMap::from([(input.name.clone(), 0)]),
            shapes: vec![sample],
            nodes: Vec::new(),
            client: HashMap::new(),
            batch: dims[0],
            input_name: input.name.clone(),
        })
    }

    fn run(mut self, graph: &OnnxGraph) -> Result<Model, Error> {
        for node in &graph.nodes {
            self.node(node)?;
        }
        let [output] = &graph.outputs[..] else {
            return Err(Error::Graph(format!(
                "{} outputs; one is supported",
                graph.outputs.len()
            )));
        };
        let mut output = self.value(&output.name, "the graph output")?;
        let mut client_side = Vec::new();
        while let Some((op, input)) = self.client.remove(&output) {
            client_side.push(op);
            output = input;
        }
        client_side.reverse();
        let mut model = Model {
            input_name: self.input_name,
            input: 0,
            shapes: self.shapes,
            nodes: self.nodes,
            output,
            client_side,
            has_weights: true,
        };
        check_client_side(&model, &self.client)?;
        fold_batch_norms(&mut model)?;
        Ok(model)
    }

    fn value(&self, name: &str, reader: &str) -> Result<ValueId, Error> {
        self.values
            .get(name)
            .copied()
            .ok_or_else(|| Error::Graph(format!("{reader} reads {name:?}, which nothing computes")))
    }

    fn new_value(&mut self, name: &str, shape: Vec<usize>) -> ValueId {
        self.shapes.push(shape);
        let id = self.shapes.len() - 1;
        self.values.insert(name.to_owned(), id);
        id
    }

    fn push(&mut self, node: &OnnxNode, op: Op, inputs: Vec<ValueId>, shape: Vec<usize>) {
        let output = self.new_value(&node.outputs()[0].name, shape);
        self.nodes.push(Node {
            name: node.name().to_owned(),
            op,
            inputs,
            output,
        });
    }

    /// The node's one computed input and its shape.
    fn input(&self, node: &OnnxNode, op: &str) -> Result<(ValueId, Vec<usize>), Error> {
        let mut it = dynamic(node.inputs());
        let (Some(a), None) = (it.next(), it.next()) else {
            return Err(Error::node(
                node.name(),
                op,
                "needs exactly one computed input (the others constants)",
            ));
        };
        let v = self.value(&a.name, node.name())?;
        Ok((v, self.shapes[v].clone()))
    }

    fn node(&mut self, node: &OnnxNode) -> Result<(), Error> {
        let name = node.name();
        if node.outputs().len() != 1 && !matches!(node, OnnxNode::Dropout(_)) {
            return Err(Error::node(
                name,
                &node.node_type().to_string(),
                "has more than one output",
            ));
        }
        match node {
            OnnxNode::Constant(_) => {}
            OnnxNode::Linear(n) => {
                let (x, shape) = self.input(node, "Gemm")?;
                let w = constant(node, "Gemm", n.inputs.get(1), "weight")?;
                let (weight, outputs, inputs) = matrix(node, "Gemm", w, n.config.transpose_weight)?;
                let bias = bias(node, "Gemm", n.inputs.get(2), outputs)?;
                let dense = dense(node, "Gemm", &shape, weight, bias, inputs, outputs)?;
                self.push(node, Op::Dense(dense), vec![x], vec![outputs]);
            }
            OnnxNode::Gemm(n) => {
                let op = "Gemm";
                if n.config.trans_a != 0 {
                    return Err(Error::node(name, op, "transA = 1 would mix the batch axis"));
                }
                let (x, shape) = self.input(node, op)?;
                let w = constant(node, op, n.inputs.get(1), "B")?;
                let (mut weight, outputs, inputs) = matrix(node, op, w, n.config.trans_b != 0)?;
                weight.iter_mut().for_each(|w| *w *= n.config.alpha);
                let mut bias = bias(node, op, n.inputs.get(2), outputs)?;
                bias.iter_mut().for_each(|b| *b *= n.config.beta);
                let dense = dense(node, op, &shape, weight, bias, inputs, outputs)?;
                self.push(node, Op::Dense(dense), vec![x], vec![outputs]);
            }
            OnnxNode::MatMul(n) => {
                let op = "MatMul";
                let (x, shape) = self.input(node, op)?;
                if n.inputs.first().and_then(Argument::value).is_some() {
                    return Err(Error::node(
                        name,
                        op,
                        "the constant must be the second operand",
                    ));
                }
                let w = constant(node, op, n.inputs.get(1), "the second operand")?;
                let (weight, outputs, inputs) = matrix(node, op, w, false)?;
                let dense = dense(
                    node,
                    op,
                    &shape,
                    weight,
                    vec![0.0; outputs],
                    inputs,
                    outputs,
                )?;
                self.push(node, Op::Dense(dense), vec![x], vec![outputs]);
            }
            OnnxNode::Conv2d(n) => {
                let op = "Conv";
                let (x, shape) = self.input(node, op)?;
                let c = &n.config;
                if c.groups != 1 || c.dilation != [1, 1] {
                    return Err(Error::node(
                        name,
                        op,
                        format!(
                            "groups {} and dilation {:?}: only groups 1 and dilation 1 are supported",
                            c.groups, c.dilation
                        ),
                    ));
                }
                let [ci, h, w] = spatial(node, op, &shape)?;
                let weight = constant(node, op, n.inputs.get(1), "weight")?;
                let (wshape, weight) = weight;
                let [co, wci, kh, kw] = wshape[..] else {
                    return Err(Error::node(name, op, format!("weight of shape {wshape:?}")));
                };
                if wci != ci || [kh, kw] != c.kernel_size {
                    return Err(Error::node(
                        name,
                        op,
                        format!("weight of shape {wshape:?} for an input of {ci} channels"),
                    ));
                }
                let pads = pads(
                    node,
                    op,
                    c.padding.clone(),
                    c.auto_pad.clone(),
                    [h, w],
                    c.kernel_size,
                    c.stride,
                )?;
                let window = Window {
                    kernel: c.kernel_size,
                    stride: c.stride,
                    pads,
                };
                let [oh, ow] = fits(node, op, &window, [h, w])?;
                let bias = bias(node, op, n.inputs.get(2), co)?;
                let conv = Conv {
                    in_channels: ci,
                    out_channels: co,
                    window,
                    weight,
                    bias,
                };
                self.push(node, Op::Conv(conv), vec![x], vec![co, oh, ow]);
            }
            OnnxNode::Relu(_) => {
                let (x, shape) = self.input(node, "Relu")?;
                self.push(node, Op::Relu, vec![x], shape);
            }
            OnnxNode::MaxPool2d(n) => {
                let op = "MaxPool";
                let c = &n.config;
                self.pool(
                    node,
                    op,
                    c.kernel_size,
                    c.strides,
                    c.padding.clone(),
                    c.auto_pad.clone(),
                    c.dilation,
                    c.ceil_mode,
                    true,
                )?;
            }
            OnnxNode::AveragePool2d(n) => {
                let op = "AveragePool";
                let c = &n.config;
                self.pool(
                    node,
                    op,
                    c.kernel_size,
                    c.strides,
                    c.padding.clone(),
                    c.auto_pad.clone(),
                    c.dilation,
                    c.ceil_mode,
                    c.count_include_pad,
                )?;
            }
            OnnxNode::GlobalAveragePool(_) => {
                let op = "GlobalAveragePool";
                let (x, shape) = self.input(node, op)?;
                let [c, _, _] = spatial(node, op, &shape)?;
                // ONNX keeps the spatial axes as 1 × 1.
                self.push(node, Op::GlobalAvgPool, vec![x], vec![c, 1, 1]);
            }
            OnnxNode::BatchNormalization(n) => {
                let op = "BatchNormalization";
                let (x, shape) = self.input(node, op)?;
                let channels = *shape.first().unwrap_or(&0);
                let eps = match &n.config {
                    onnx_ir::node::batch_norm::BatchNormConfig::Static(s) => s.epsilon,
                    onnx_ir::node::batch_norm::BatchNormConfig::Runtime(s) => s.epsilon,
                };
                let mut params = [(); 4].map(|_| Vec::new());
                for (i, p) in params.iter_mut().enumerate() {
                    let (s, v) = constant(
                        node,
                        op,
                        n.inputs.get(i + 1),
                        "scale, bias, mean and variance",
                    )?;
                    if v.len() != channels {
                        return Err(Error::node(
                            name,
                            op,
                            format!("parameter of shape {s:?} for {channels} channels"),
                        ));
                    }
                    *p = v;
                }
                let [scale, bias, mean, var] = params;
                let a: Vec<f32> = (0..channels)
                    .map(|c| (f64::from(scale[c]) / (f64::from(var[c]) + eps).sqrt()) as f32)
                    .collect();
                let b: Vec<f32> = (0..channels).map(|c| bias[c] - a[c] * mean[c]).collect();
                // Kept as a node until the fold: per-channel a (weights) and b (bias).
                let fold = Dense {
                    inputs: channels,
                    outputs: channels,
                    weight: a,
                    bias: b,
                };
                self.push(node, Op::Dense(fold), vec![x, usize::MAX], shape);
            }
            OnnxNode::Flatten(n) => {
                let op = "Flatten";
                if n.config.axis != 1 {
                    return Err(Error::node(
                        name,
                        op,
                        format!(
                            "axis {} would mix the batch axis; only axis 1 is supported",
                            n.config.axis
                        ),
                    ));
                }
                let (x, shape) = self.input(node, op)?;
                self.push(node, Op::Reshape, vec![x], vec![shape.iter().product()]);
            }
            OnnxNode::Reshape(n) => {
                let op = "Reshape";
                let (x, shape) = self.input(node, op)?;
                let onnx_ir::node::reshape::ReshapeInput::Static(target) = &n.config.shape else {
                    return Err(Error::node(
                        name,
                        op,
                        "the target shape is computed at run time",
                    ));
                };
                let out = self.reshape(node, &shape, target)?;
                self.push(node, Op::Reshape, vec![x], out);
            }
            OnnxNode::Identity(_) | OnnxNode::Dropout(_) => {
                let op = node.node_type().to_string();
                let (x, _) = self.input(node, &op)?;
                // An alias: the same value under the output's name.
                self.values.insert(node.outputs()[0].name.clone(), x);
            }
            OnnxNode::Transpose(n) => {
                let op = "Transpose";
                let (x, shape) = self.input(node, op)?;
                let perm = &n.config.perm;
                let ok = perm.len() == shape.len() + 1 && perm.first() == Some(&0) && {
                    let mut seen = vec![false; perm.len()];
                    perm.iter().all(|&p| {
                        usize::try_from(p)
                            .ok()
                            .filter(|&p| p < seen.len())
                            .is_some_and(|p| !std::mem::replace(&mut seen[p], true))
                    })
                };
                if !ok {
                    return Err(Error::node(
                        name,
                        op,
                        format!(
                            "perm {perm:?} must permute the axes and keep the batch axis first"
                        ),
                    ));
                }
                let perm: Vec<usize> = perm[1..].iter().map(|&p| p as usize - 1).collect();
                let out = perm.iter().map(|&p| shape[p]).collect();
                self.push(node, Op::Transpose(perm), vec![x], out);
            }
            OnnxNode::Add(_) | OnnxNode::Sub(_) => self.add_sub(node)?,
            OnnxNode::Softmax(_) | OnnxNode::LogSoftmax(_) | OnnxNode::Log(_) => {
                let op = node.node_type().to_string();
                let (x, shape) = self.input(node, &op)?;
                let out = self.new_value(&node.outputs()[0].name, shape);
                self.client.insert(out, (op, x));
            }
            OnnxNode::Custom(c) => {
                return Err(Error::Unsupported {
                    node: name.to_owned(),
                    op: c.op_type.clone(),
                });
            }
            other => {
                return Err(Error::Unsupported {
                    node: name.to_owned(),
                    op: other.node_type().to_string(),
                });
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn pool(
        &mut self,
        node: &OnnxNode,
        op: &str,
        kernel: [usize; 2],
        stride: [usize; 2],
        padding: PaddingConfig2d,
        auto_pad: AutoPad,
        dilation: [usize; 2],
        ceil_mode: bool,
        count_include_pad: bool,
    ) -> Result<(), Error> {
        let (x, shape) = self.input(node, op)?;
        if dilation != [1, 1] || ceil_mode {
            return Err(Error::node(
                node.name(),
                op,
                "dilation other than 1 and ceil_mode are not supported",
            ));
        }
        let [c, h, w] = spatial(node, op, &shape)?;
        let pads = pads(node, op, padding, auto_pad, [h, w], kernel, stride)?;
        let window = Window {
            kernel,
            stride,
            pads,
        };
        let [oh, ow] = fits(node, op, &window, [h, w])?;
        let pool = Pool {
            window,
            count_include_pad,
        };
        let op = if op == "MaxPool" {
            Op::MaxPool(pool)
        } else {
            Op::AvgPool(pool)
        };
        self.push(node, op, vec![x], vec![c, oh, ow]);
        Ok(())
    }

    /// A Reshape's per-sample target: the first entry is the batch axis (−1, 0, 1 or the
    /// declared batch size), the rest may hold one −1 and copies (0) of the input's axes.
    fn reshape(
        &self,
        node: &OnnxNode,
        input: &[usize],
        target: &[i64],
    ) -> Result<Vec<usize>, Error> {
        let op = "Reshape";
        let bad = |why: &str| Error::node(node.name(), op, format!("target {target:?}: {why}"));
        let Some((&first, rest)) = target.split_first() else {
            return Err(bad("empty"));
        };
        let batch_ok = first == -1
            || first == 0
            || first == 1
            || self.batch.is_some_and(|b| first == b as i64);
        if !batch_ok {
            return Err(bad("the first axis must stay the batch axis"));
        }
        let total: usize = input.iter().product();
        let mut out = Vec::with_capacity(rest.len());
        let mut infer = None;
        for (i, &d) in rest.iter().enumerate() {
            match d {
                -1 if infer.is_none() => {
                    infer = Some(i);
                    out.push(1);
                }
                0 => out.push(1),
                d if d > 0 => out.push(d as usize),
                _ => return Err(bad("more than one −1 or a negative axis")),
            }
        }
        // A 0 copies the input's axis at the same position (counting the batch axis).
        for (i, &d) in rest.iter().enumerate() {
            if d == 0 {
                out[i] = *input.get(i).ok_or_else(|| bad("0 past the input's axes"))?;
            }
        }
        let known: usize = out.iter().product();
        if let Some(i) = infer {
            if known == 0 || !total.is_multiple_of(known) {
                return Err(bad(&format!("cannot infer −1 for {total} elements")));
            }
            out[i] = total / known;
        }
        if out.iter().product::<usize>() != total {
            return Err(bad(&format!(
                "{} elements into {total}",
                out.iter().product::<usize>()
            )));
        }
        Ok(out)
    }

    fn add_sub(&mut self, node: &OnnxNode) -> Result<(), Error> {
        let name = node.name();
        let sub = matches!(node, OnnxNode::Sub(_));
        let op = if sub { "Sub" } else { "Add" };
        let args = node.inputs();
        if args.len() != 2 {
            return Err(Error::node(name, op, "needs two inputs"));
        }
        match (args[0].value(), args[1].value()) {
            (None, None) => {
                let a = self.value(&args[0].name, name)?;
                let b = self.value(&args[1].name, name)?;
                if self.shapes[a] != self.shapes[b] {
                    return Err(Error::node(
                        name,
                        op,
                        format!(
                            "shapes {:?} and {:?} differ; broadcasting between computed tensors is not supported",
                            self.shapes[a], self.shapes[b]
                        ),
                    ));
                }
                let shape = self.shapes[a].clone();
                self.push(node, if sub { Op::Sub } else { Op::Add }, vec![a, b], shape);
            }
            (None, Some(_)) | (Some(_), None) => {
                let k = usize::from(args[0].value().is_none());
                if sub && k == 0 {
                    return Err(Error::node(
                        name,
                        op,
                        "a constant minus a computed tensor is not supported",
                    ));
                }
                let (x, shape) = self.input(node, op)?;
                let (cshape, mut c) = constant(node, op, args.get(k), "the constant")?;
                if sub {
                    c.iter_mut().for_each(|v| *v = -*v);
                }
                let c = broadcast(&cshape, &c, &shape).ok_or_else(|| {
                    Error::node(
                        name,
                        op,
                        format!("a constant of shape {cshape:?} does not broadcast to {shape:?}"),
                    )
                })?;
                self.push(node, Op::AddConst(c), vec![x], shape);
            }
            (Some(_), Some(_)) => return Err(Error::node(name, op, "both inputs are constants")),
        }
        Ok(())
    }
}

/// A constant input's shape and values as `f32`.
fn constant(
    node: &OnnxNode,
    op: &str,
    arg: Option<&Argument>,
    what: &str,
) -> Result<(Vec<usize>, Vec<f32>), Error> {
    let data = arg.and_then(Argument::value).ok_or_else(|| {
        Error::node(
            node.name(),
            op,
            format!("{what} must be a constant (an initializer)"),
        )
    })?;
    let shape = data.shape().to_vec();
    let values = data
        .convert::<f32>()
        .try_to_vec::<f32>()
        .map_err(|e| Error::node(node.name(), op, format!("{what}: {e:?}")))?;
    if values.len() != shape.iter().product::<usize>() || values.iter().any(|v| !v.is_finite()) {
        return Err(Error::node(
            node.name(),
            op,
            format!("{what} has values that do not fit its shape {shape:?} or are not finite"),
        ));
    }
    Ok((shape, values))
}

/// A 2-D weight as `outputs × inputs`, row-major, from `[outputs, inputs]` (`transposed`) or
/// `[inputs, outputs]`.
fn matrix(
    node: &OnnxNode,
    op: &str,
    (shape, values): (Vec<usize>, Vec<f32>),
    transposed: bool,
) -> Result<(Vec<f32>, usize, usize), Error> {
    let [r, c] = shape[..] else {
        return Err(Error::node(
            node.name(),
            op,
            format!("weight of shape {shape:?} is not a matrix"),
        ));
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

/// A bias of `n` entries (given as `[n]`, `[1, n]` or a scalar), or zeros when absent.
fn bias(node: &OnnxNode, op: &str, arg: Option<&Argument>, n: usize) -> Result<Vec<f32>, Error> {
    let Some(arg) = arg.filter(|a| !a.name.is_empty() || a.value().is_some()) else {
        return Ok(vec![0.0; n]);
    };
    let (shape, values) = constant(node, op, Some(arg), "the bias")?;
    broadcast(&shape, &values, &[n]).ok_or_else(|| {
        Error::node(
            node.name(),
            op,
            format!("bias of shape {shape:?} for {n} outputs"),
        )
    })
}

fn dense(
    node: &OnnxNode,
    op: &str,
    shape: &[usize],
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
) -> Result<Dense, Error> {
    if shape != [inputs] {
        return Err(Error::node(
            node.name(),
            op,
            format!(
                "an input of shape {shape:?} for a weight of {inputs} inputs; Flatten or Reshape it first"
            ),
        ));
    }
    Ok(Dense {
        inputs,
        outputs,
        weight,
        bias,
    })
}

fn spatial(node: &OnnxNode, op: &str, shape: &[usize]) -> Result<[usize; 3], Error> {
    match shape {
        &[c, h, w] => Ok([c, h, w]),
        _ => Err(Error::node(
            node.name(),
            op,
            format!("an input of shape {shape:?}; [channels, height, width] is needed"),
        )),
    }
}

fn pads(
    node: &OnnxNode,
    op: &str,
    padding: PaddingConfig2d,
    auto: AutoPad,
    input: [usize; 2],
    kernel: [usize; 2],
    stride: [usize; 2],
) -> Result<[usize; 4], Error> {
    match auto {
        AutoPad::NotSet | AutoPad::Valid => Ok(match padding {
            PaddingConfig2d::Valid => [0; 4],
            PaddingConfig2d::Explicit(t, l, b, r) => [t, l, b, r],
        }),
        AutoPad::SameUpper | AutoPad::SameLower => {
            if stride.contains(&0) {
                return Err(Error::node(node.name(), op, "stride 0"));
            }
            let total = |i: usize| {
                ((input[i].div_ceil(stride[i]) - 1) * stride[i] + kernel[i])
                    .saturating_sub(input[i])
            };
            let (th, tw) = (total(0), total(1));
            Ok(if matches!(auto, AutoPad::SameUpper) {
                [th / 2, tw / 2, th - th / 2, tw - tw / 2]
            } else {
                [th - th / 2, tw - tw / 2, th / 2, tw / 2]
            })
        }
    }
}

fn fits(
    node: &OnnxNode,
    op: &str,
    window: &Window,
    input: [usize; 2],
) -> Result<[usize; 2], Error> {
    window.output(input).ok_or_else(|| {
        Error::node(
            node.name(),
            op,
            format!("a window {window:?} does not fit an input of {input:?}"),
        )
    })
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

/// Every Softmax, LogSoftmax and Log left after peeling the output's tail is inside the graph,
/// where the secure protocols cannot compute it.
fn check_client_side(
    model: &Model,
    rest: &HashMap<ValueId, (String, ValueId)>,
) -> Result<(), Error> {
    for (v, (op, _)) in rest {
        if model.nodes.iter().any(|n| n.inputs.contains(v)) {
            return Err(Error::Graph(format!(
                "{op} inside the network (its result is read by another node); it is supported only at the output, where the client applies it"
            )));
        }
    }
    if model
        .client_side
        .iter()
        .enumerate()
        .any(|(i, op)| op == "Log" && (i == 0 || model.client_side[i - 1] != "Softmax"))
    {
        return Err(Error::Graph(
            "Log at the output is supported only after Softmax".to_owned(),
        ));
    }
    Ok(())
}

/// Folds each BatchNormalization (imported as a per-channel Dense with a second input of
/// `usize::MAX`) into the Conv or Dense that writes its input, which must have no other reader.
fn fold_batch_norms(model: &mut Model) -> Result<(), Error> {
    while let Some(i) = model
        .nodes
        .iter()
        .position(|n| n.inputs.get(1) == Some(&usize::MAX))
    {
        let bn = model.nodes.remove(i);
        let Op::Dense(affine) = bn.op else {
            unreachable!("imported as Dense")
        };
        let x = bn.inputs[0];
        let readers = model.nodes.iter().filter(|n| n.inputs.contains(&x)).count();
        let producer = model.nodes.iter_mut().find(|n| n.output == x);
        let refuse = |why: &str| {
            Error::node(
                &bn.name,
                "BatchNormalization",
                format!("cannot be folded: {why}"),
            )
        };
        let Some(producer) = producer else {
            return Err(refuse("it does not follow a Conv or Gemm"));
        };
        if readers != 0 || x == model.output {
            return Err(refuse("the Conv or Gemm before it has other readers"));
        }
        let (weight, bias, per_channel) = match &mut producer.op {
            Op::Conv(c) => (
                &mut c.weight,
                &mut c.bias,
                c.in_channels * c.window.kernel[0] * c.window.kernel[1],
            ),
            Op::Dense(d) => (&mut d.weight, &mut d.bias, d.inputs),
            _ => return Err(refuse("it does not follow a Conv or Gemm")),
        };
        if bias.len() != affine.outputs {
            return Err(refuse("its channels differ from the layer's outputs"));
        }
        for (c, (a, b)) in affine.weight.iter().zip(&affine.bias).enumerate() {
            weight[c * per_channel..(c + 1) * per_channel]
                .iter_mut()
                .for_each(|w| *w *= a);
            bias[c] = bias[c] * a + b;
        }
        // The BatchNormalization's output is now the producer's.
        let out = bn.output;
        producer.output = out;
    }
    Ok(())
}
