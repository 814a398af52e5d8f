//! ONNX files to [`Model`]s, read straight from the protobuf messages of the ONNX IR (every
//! opset from the IR 2 / opset 2 MiniONN files on; weights as initializers, as graph inputs
//! that have initializers, or as Constant nodes), one node at a time in one pass: the cost is
//! linear in the file. A file is hostile input: every size it states is checked in checked
//! arithmetic against what it holds and against [`CEILING`] before anything is allocated, every
//! attribute is range-checked (a negative stride is refused, never wrapped), weights must be
//! finite, and an operator outside [`SUPPORTED`] or a shape this crate cannot handle stops the
//! import with the node's name (escaped) and operator.
//!
//! The batch axis is dropped: every tensor's first ONNX axis is the batch, and a node may not
//! mix it with the others (Flatten from axis 1, Reshape keeping the first axis, Transpose
//! fixing axis 0). A graph whose input has a batch of 1 and that mixes it anyway (PyTorch's
//! multi-head attention turns to sequence-first and merges the batch with the heads) is read
//! again with that axis kept as the sample's first (`Importer::lead`; Conv and the pools then
//! read their image with that axis reshaped away: `Importer::image`). BatchNormalization is
//! folded into the Conv or Gemm before it; Softmax, LogSoftmax and Log at the end of the graph
//! are peeled off into [`Model::client_side`]; a Gather of a constant table by the input's token
//! ids at its start is the client's lookup ([`Model::lookup`]).
//!
//! [`SUPPORTED`]: crate::op::supported

pub(crate) mod args;
pub(crate) mod proto;

pub(crate) use proto::{data_type, has_data, is_float};

use crate::error::Error;
use crate::model::{CEILING, Ceiling, Model, Node, Op, ValueId};
use crate::onnx::{GraphProto, ModelProto, NodeProto, TensorProto};
use crate::strip;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The largest ONNX file read, in bytes: 2 GiB, protobuf's own limit on a message.
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// Reads and imports the model at `path` (a regular file of at most [`MAX_FILE_BYTES`]).
pub fn load(path: &Path) -> Result<Model, Error> {
    let bytes = tessera_core::files::read(path, MAX_FILE_BYTES).map_err(|e| Error::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    from_bytes(&bytes, &path.display().to_string())
}

/// Imports a model from the bytes of an ONNX file; `what` names it in errors.
pub fn from_bytes(bytes: &[u8], what: &str) -> Result<Model, Error> {
    let proto = strip::parse(bytes, what)?;
    from_proto(&proto, &CEILING)
}

/// Imports a parsed model, held to `ceiling`.
pub fn from_proto(proto: &ModelProto, ceiling: &Ceiling) -> Result<Model, Error> {
    let stripped = strip::is_stripped(proto);
    if stripped && let Some(left) = strip::leftover(proto) {
        return Err(Error::Graph(format!(
            "an architecture marked as stripped still carries numbers ({left}); strip it again with `tessera nn strip`"
        )));
    }
    let graph = proto
        .graph
        .as_ref()
        .ok_or_else(|| Error::Graph("the file holds no graph".to_owned()))?;
    if graph.node.len() > ceiling.nodes {
        return Err(Error::Graph(format!(
            "{} nodes, more than the {} a model may have",
            graph.node.len(),
            ceiling.nodes
        )));
    }
    let model = match import_graph(proto, graph, ceiling, stripped, 1) {
        Ok(model) => model,
        // A graph that moves its batch axis of 1 among the others: that axis kept, as the
        // sample's first; the error of the import that got further.
        Err((at, e)) => match import_graph(proto, graph, ceiling, stripped, 0) {
            Ok(model) => model,
            Err((kept_at, kept)) => return Err(if kept_at > at { kept } else { e }),
        },
    };
    model.check(ceiling)?;
    Ok(model)
}

/// The model of `graph` with `lead` batch axes dropped ([`Importer::lead`]), or how many
/// nodes were read and the error (`usize::MAX` nodes for an error past them).
fn import_graph(
    proto: &ModelProto,
    graph: &GraphProto,
    ceiling: &Ceiling,
    stripped: bool,
    lead: usize,
) -> Result<Model, (usize, Error)> {
    let mut importer = Importer::new(proto, graph, ceiling, stripped, lead).map_err(|e| (0, e))?;
    if lead == 0 && importer.batch != Some(1) {
        return Err((0, Error::Graph("the batch axis is not 1".to_owned())));
    }
    for (index, node) in graph.node.iter().enumerate() {
        let at = At::new(index, node);
        import_node(&mut importer, &at).map_err(|reason| {
            let e = match reason {
                Refusal::Unsupported => Error::Unsupported {
                    node: at.label.clone(),
                    op: shown(&node.op_type),
                },
                Refusal::Node(reason) => Error::Node {
                    node: at.label.clone(),
                    op: shown(&node.op_type),
                    reason,
                },
            };
            (index, e)
        })?;
    }
    let mut model = importer.finish(graph).map_err(|e| (usize::MAX, e))?;
    model.has_weights = !stripped;
    Ok(model)
}

/// Imports one node: an operator of the default domain that [`crate::op::family`] knows, with
/// one output (Dropout's mask and Split's parts aside).
fn import_node<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let node = at.node;
    let default_domain = node.domain.is_empty() || node.domain == "ai.onnx";
    let family = crate::op::family(&node.op_type).filter(|_| default_domain);
    let Some(family) = family else {
        return Err(Refusal::Unsupported);
    };
    let many = ["Dropout", "Split"].contains(&node.op_type.as_str());
    if !many && node.output.iter().skip(1).any(|o| !o.is_empty()) {
        return Err("has more than one output".into());
    }
    (family.import)(imp, at)
}

/// Text from a file as printed: escaped, at most 60 characters.
pub fn shown(text: &str) -> String {
    tessera_net::escape(text.as_bytes(), 60)
}

/// Why one node was refused; [`from_proto`] names the node.
pub(crate) enum Refusal {
    /// Its operator is not supported.
    Unsupported,
    /// Its attributes, inputs or shapes are not.
    Node(String),
}

impl From<String> for Refusal {
    fn from(reason: String) -> Self {
        Refusal::Node(reason)
    }
}

impl From<&str> for Refusal {
    fn from(reason: &str) -> Self {
        Refusal::Node(reason.to_owned())
    }
}

/// One node of the file, with the label errors give it: its name where the file has one, else
/// its position and the tensor it writes.
pub(crate) struct At<'a> {
    pub(crate) node: &'a NodeProto,
    pub(crate) label: String,
}

impl<'a> At<'a> {
    fn new(index: usize, node: &'a NodeProto) -> Self {
        let label = if !node.name.is_empty() {
            format!("\"{}\"", shown(&node.name))
        } else {
            let out = node.output.first().map_or("", String::as_str);
            format!("#{index} writing \"{}\"", shown(out))
        };
        At { node, label }
    }
}

/// A constant of the graph: an initializer or a Constant node's value.
#[derive(Clone, Copy)]
pub(crate) enum Constant<'a> {
    /// A tensor.
    Tensor(&'a TensorProto),
    /// `value_float` (a scalar) or `value_floats` (a vector).
    Floats(&'a [f32], bool),
    /// `value_int` (a scalar) or `value_ints` (a vector).
    Ints(&'a [i64]),
    /// Integers folded at import from a shape subgraph ([`Importer::folded`]).
    Folded(usize),
    /// A tensor folded at import ([`Importer::folded_reals`]).
    FoldedReals(usize),
}

/// A tensor folded at import from arithmetic on constants ([`crate::op`]'s `fold`).
#[derive(Clone)]
pub(crate) struct FoldedTensor {
    /// Its shape (empty for a scalar).
    pub(crate) shape: Vec<usize>,
    /// Its elements (integers exactly: they are below 2^24).
    pub(crate) values: Vec<f32>,
    /// Whether they are integers (token types, shapes of more than one axis).
    pub(crate) integer: bool,
}

/// The state of one import: value names to values, their shapes, the nodes so far.
pub(crate) struct Importer<'a> {
    pub(crate) opset: i64,
    pub(crate) ceiling: &'a Ceiling,
    /// The zeros a stripped architecture may still stand for; `None` for a model.
    pub(crate) zeros: Option<usize>,
    pub(crate) constants: HashMap<&'a str, Constant<'a>>,
    values: HashMap<&'a str, ValueId>,
    pub(crate) shapes: Vec<Vec<usize>>,
    pub(crate) nodes: Vec<Node>,
    /// Nodes that only the client may apply, by the value they write: (op, its input).
    pub(crate) client: HashMap<ValueId, (String, ValueId)>,
    /// The declared batch size, where the input fixes one.
    pub(crate) batch: Option<usize>,
    /// The integer vectors folded from shape subgraphs (Shape, Gather, Unsqueeze, Concat, ...),
    /// and whether each is a scalar.
    pub(crate) folded: Vec<(Vec<i64>, bool)>,
    /// The real tensors folded from arithmetic on constants (the scale 1/√d and the causal
    /// mask that PyTorch's attention computes from Shapes): each one's shape and elements.
    pub(crate) folded_reals: Vec<FoldedTensor>,
    /// How many of ONNX's leading axes are the batch, dropped from per-sample shapes: 1, or 0
    /// for a graph that moves its batch axis of 1 among the others (PyTorch's
    /// MultiheadAttention: [`from_proto`] then keeps that axis as the sample's first).
    pub(crate) lead: usize,
    /// The client's embedding lookup, once a Gather has read the input's token ids.
    pub(crate) lookup: Option<crate::model::Lookup>,
    /// Whether the graph input holds integers (token ids).
    pub(crate) input_integer: bool,
    input_name: String,
}

impl<'a> Importer<'a> {
    fn new(
        proto: &'a ModelProto,
        graph: &'a GraphProto,
        ceiling: &'a Ceiling,
        stripped: bool,
        lead: usize,
    ) -> Result<Self, Error> {
        let opset = proto
            .opset_import
            .iter()
            .filter(|o| o.domain.is_empty() || o.domain == "ai.onnx")
            .map(|o| o.version)
            .max()
            .unwrap_or(1);
        let constants: HashMap<&str, Constant<'_>> = graph
            .initializer
            .iter()
            .map(|t| (t.name.as_str(), Constant::Tensor(t)))
            .collect();
        let inputs: Vec<_> = graph
            .input
            .iter()
            .filter(|i| !constants.contains_key(i.name.as_str()))
            .collect();
        let [input] = inputs[..] else {
            return Err(Error::Graph(format!(
                "{} inputs that are not weights; one is supported",
                inputs.len()
            )));
        };
        let (batch, mut sample) = input_shape(input, ceiling)?;
        if lead == 0 {
            sample.insert(0, 1);
        }
        Ok(Importer {
            opset,
            ceiling,
            zeros: stripped.then_some(strip::MAX_FILLED),
            constants,
            values: HashMap::from([(input.name.as_str(), 0)]),
            shapes: vec![sample],
            nodes: Vec::new(),
            client: HashMap::new(),
            batch,
            folded: Vec::new(),
            folded_reals: Vec::new(),
            lead,
            lookup: None,
            input_integer: input_integer(input),
            input_name: input.name.clone(),
        })
    }

    /// The per-sample axis that ONNX's `axis` (negative from the end) names in a tensor of
    /// per-sample rank `rank`; `None` for the batch axis, or past the last.
    pub(crate) fn sample_axis(&self, axis: i64, rank: usize) -> Option<usize> {
        let onnx_rank = (rank + self.lead) as i64;
        let axis = if axis < 0 { axis + onnx_rank } else { axis };
        let axis = usize::try_from(axis).ok()?.checked_sub(self.lead)?;
        (axis < rank).then_some(axis)
    }

    /// ONNX's rank of a tensor of per-sample rank `rank`.
    pub(crate) fn onnx_rank(&self, rank: usize) -> usize {
        rank + self.lead
    }

    /// The value `name` names, or an error: nothing computes it, or it is the token ids,
    /// which only the client's lookup reads.
    pub(crate) fn value(&self, name: &str) -> Result<ValueId, Refusal> {
        if self.lookup.is_some() && name == self.input_name {
            return Err(Refusal::Node(format!(
                "reads the token ids \"{}\", which only the embedding lookup reads",
                shown(name)
            )));
        }
        self.values.get(name).copied().ok_or_else(|| {
            Refusal::Node(format!(
                "reads \"{}\", which no node before it computes",
                shown(name)
            ))
        })
    }

    /// A new value `name` of `shape`; each name is written once.
    pub(crate) fn new_value(
        &mut self,
        name: &'a str,
        shape: Vec<usize>,
    ) -> Result<ValueId, Refusal> {
        if self.values.contains_key(name) || self.constants.contains_key(name) {
            return Err(Refusal::Node(format!(
                "writes \"{}\", which is already written",
                shown(name)
            )));
        }
        let id = self.new_shape(shape)?;
        self.values.insert(name, id);
        Ok(id)
    }

    /// A value of `shape` no name refers to (yet), held to the ceiling.
    fn new_shape(&mut self, shape: Vec<usize>) -> Result<ValueId, Refusal> {
        if self.ceiling.tensor(&shape).is_none() {
            return Err(Refusal::Node(format!(
                "an output of shape {shape:?} is larger than a tensor may be"
            )));
        }
        self.shapes.push(shape);
        Ok(self.shapes.len() - 1)
    }

    /// Another name for a constant (Identity of a weight).
    pub(crate) fn alias_constant(&mut self, name: &'a str, c: Constant<'a>) -> Result<(), Refusal> {
        if self.values.contains_key(name) || self.constants.insert(name, c).is_some() {
            return Err(Refusal::Node(format!(
                "writes \"{}\", which is already written",
                shown(name)
            )));
        }
        Ok(())
    }

    /// Another name for an existing value (Identity, Dropout).
    pub(crate) fn alias(&mut self, name: &'a str, value: ValueId) -> Result<(), Refusal> {
        if self.values.insert(name, value).is_some() || self.constants.contains_key(name) {
            return Err(Refusal::Node(format!(
                "writes \"{}\", which is already written",
                shown(name)
            )));
        }
        Ok(())
    }

    /// Adds a layer writing the node's first output.
    pub(crate) fn push(
        &mut self,
        at: &At<'a>,
        op: Op,
        inputs: Vec<ValueId>,
        shape: Vec<usize>,
    ) -> Result<(), Refusal> {
        self.push_to(at, output(at)?, op, inputs, shape)
    }

    /// An image operator's input `x` of per-sample shape `shape` as `[channels, height,
    /// width]`: as it is, or in a graph read with its batch axis kept ([`Importer::lead`] 0)
    /// the kept axis of 1 reshaped away first (a layer of its own; [`Importer::push_image`]
    /// puts it back), so that Conv and the pools see one image either way.
    pub(crate) fn image(
        &mut self,
        at: &At<'a>,
        x: ValueId,
        shape: Vec<usize>,
    ) -> Result<(ValueId, Vec<usize>), Refusal> {
        match (self.lead, &shape[..]) {
            (0, [1, image @ ..]) if image.len() == 3 => {
                let image = image.to_vec();
                let inner = self.unnamed(
                    at,
                    Op::Reshape(crate::model::Reshape),
                    vec![x],
                    image.clone(),
                )?;
                Ok((inner, image))
            }
            _ => Ok((x, shape)),
        }
    }

    /// An image operator's layer (as [`Importer::push`]) on an input [`Importer::image`]
    /// read: with the batch axis kept, its output reshaped to carry that axis again.
    pub(crate) fn push_image(
        &mut self,
        at: &At<'a>,
        op: Op,
        inputs: Vec<ValueId>,
        shape: Vec<usize>,
    ) -> Result<(), Refusal> {
        if self.lead != 0 {
            return self.push(at, op, inputs, shape);
        }
        let inner = self.unnamed(at, op, inputs, shape.clone())?;
        let kept = [&[1][..], &shape[..]].concat();
        self.push(at, Op::Reshape(crate::model::Reshape), vec![inner], kept)
    }

    /// A layer of the node `at` writing a value no other node names.
    pub(crate) fn unnamed(
        &mut self,
        at: &At<'a>,
        op: Op,
        inputs: Vec<ValueId>,
        shape: Vec<usize>,
    ) -> Result<ValueId, Refusal> {
        let output = self.new_shape(shape)?;
        self.add_node(at, op, inputs, output);
        Ok(output)
    }

    /// Adds a layer writing `output`, one of the node's (Split's parts).
    pub(crate) fn push_to(
        &mut self,
        at: &At<'a>,
        output: &'a str,
        op: Op,
        inputs: Vec<ValueId>,
        shape: Vec<usize>,
    ) -> Result<(), Refusal> {
        let output = self.new_value(output, shape)?;
        self.add_node(at, op, inputs, output);
        Ok(())
    }

    /// A layer of the node `at`.
    fn add_node(&mut self, at: &At<'a>, op: Op, inputs: Vec<ValueId>, output: ValueId) {
        self.nodes.push(Node {
            name: at.node.name.clone(),
            op,
            inputs,
            output,
        });
    }

    fn finish(self, graph: &GraphProto) -> Result<Model, Error> {
        let [output] = &graph.output[..] else {
            return Err(Error::Graph(format!(
                "{} outputs; one is supported",
                graph.output.len()
            )));
        };
        let mut output = self
            .values
            .get(output.name.as_str())
            .copied()
            .ok_or_else(|| {
                Error::Graph(format!(
                    "the output \"{}\" is computed by no node",
                    shown(&output.name)
                ))
            })?;
        let mut client = self.client;
        let mut nodes = self.nodes;
        let mut client_side = Vec::new();
        loop {
            if let Some((op, input)) = client.remove(&output) {
                client_side.push(op);
                output = input;
            } else if let Some(input) = peel_softmax(&mut nodes, &self.shapes, output) {
                client_side.push("Softmax".to_owned());
                output = input;
            } else {
                break;
            }
        }
        client_side.reverse();
        let mut model = Model {
            input_name: self.input_name,
            input: 0,
            shapes: self.shapes,
            nodes,
            output,
            client_side,
            has_weights: true,
            lookup: self.lookup,
        };
        check_client_side(&model, &client)?;
        crate::op::fold_batch_norms(&mut model)?;
        Ok(model)
    }
}

/// A Softmax writing `output`, a vector no other node reads, taken out of `nodes` for the
/// client to apply in the clear (it changes no argmax): its input.
fn peel_softmax(nodes: &mut Vec<Node>, shapes: &[Vec<usize>], output: ValueId) -> Option<ValueId> {
    let at = nodes.iter().rposition(|n| n.output == output)?;
    let read = nodes.iter().any(|n| n.inputs.contains(&output));
    let vector = shapes.get(output).is_some_and(|s| s.len() == 1);
    if !matches!(nodes[at].op, Op::Softmax(_)) || read || !vector {
        return None;
    }
    Some(nodes.remove(at).inputs[0])
}

/// The node's first output's name.
pub(crate) fn output<'a>(at: &At<'a>) -> Result<&'a str, Refusal> {
    at.node
        .output
        .first()
        .map(String::as_str)
        .filter(|o| !o.is_empty())
        .ok_or_else(|| Refusal::Node("writes no output".to_owned()))
}

/// Whether a graph input holds integers (the token ids of an embedding lookup).
fn input_integer(input: &crate::onnx::ValueInfoProto) -> bool {
    let t = input.type_.as_ref().and_then(|t| t.tensor());
    t.is_some_and(|t| [data_type::INT64, data_type::INT32].contains(&t.elem_type))
}

/// The graph input's batch size (if fixed) and per-sample shape.
fn input_shape(
    input: &crate::onnx::ValueInfoProto,
    ceiling: &Ceiling,
) -> Result<(Option<usize>, Vec<usize>), Error> {
    let name = shown(&input.name);
    let t = input.type_.as_ref().and_then(|t| t.tensor());
    let Some(t) = t else {
        return Err(Error::Graph(format!("input \"{name}\" is not a tensor")));
    };
    let dims: Vec<Option<usize>> = t
        .shape
        .as_ref()
        .map_or(&[][..], |s| &s.dim)
        .iter()
        .map(|d| d.size().and_then(|v| usize::try_from(v).ok()))
        .collect();
    if dims.len() < 2 {
        return Err(Error::Graph(format!(
            "input \"{name}\" has rank {}; a batch axis and known per-sample axes are needed",
            dims.len()
        )));
    }
    let sample: Option<Vec<usize>> = dims[1..].iter().copied().collect();
    let fits = |s: &Vec<usize>| s.iter().all(|&d| d > 0) && ceiling.tensor(s).is_some();
    let Some(sample) = sample.filter(fits) else {
        return Err(Error::Graph(format!(
            "input \"{name}\" has shape {dims:?}; every axis but the batch must be known, and the sample at most {} elements with axes of at most {}",
            ceiling.tensor_elements, ceiling.axis
        )));
    };
    Ok((dims[0], sample))
}

/// Every Softmax, LogSoftmax and Log left after peeling the output's tail is inside the graph,
/// where the secure protocols cannot compute it.
fn check_client_side(
    model: &Model,
    rest: &HashMap<ValueId, (String, ValueId)>,
) -> Result<(), Error> {
    let read: HashSet<ValueId> = model
        .nodes
        .iter()
        .flat_map(|n| n.inputs.iter().copied())
        .collect();
    if let Some((op, _)) = rest.iter().find(|(v, _)| read.contains(v)).map(|(_, r)| r) {
        return Err(Error::Graph(format!(
            "{op} inside the network (its result is read by another node); it is supported only at the output, where the client applies it"
        )));
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
