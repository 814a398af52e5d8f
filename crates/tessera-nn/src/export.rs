//! A [`Model`] written as an ONNX file (opset 14, weights inside the file): what `nn zoo
//! write` gives for the built-in networks, so that other tools (onnxruntime, the other
//! frameworks of a side-by-side run) read the same network. Each layer becomes the ONNX node
//! the importer reads back into it ([`crate::import`]), the batch axis (of 1) restored; the
//! output transforms left to the client are not written.

use crate::error::Error;
use crate::import::data_type;
use crate::model::{Lookup, Model, Node, Window};
use crate::onnx::{AttributeProto, AttributeType, Dim, Dimension, Message, ModelProto, NodeProto};
use crate::onnx::{OperatorSetIdProto, TensorProto, TensorShapeProto, TensorType, Type};
use crate::onnx::{TypeProto, ValueInfoProto};

/// The opset written.
pub const OPSET: i64 = 14;

/// `model` as the bytes of an ONNX file.
pub fn to_onnx(model: &Model) -> Result<Vec<u8>, Error> {
    model.check(&crate::model::CEILING)?;
    let mut m = ModelProto {
        ir_version: 8,
        producer_name: "tessera".to_owned(),
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: OPSET,
        }],
        ..Default::default()
    };
    let graph = m.graph.get_or_insert_default();
    graph.name = "tessera".to_owned();
    let name = |v: usize| {
        if v == model.input && model.lookup.is_none() {
            model.input_name.clone()
        } else {
            format!("v{v}")
        }
    };
    match &model.lookup {
        None => graph
            .input
            .push(value_info(&name(model.input), &model.shapes[model.input])),
        Some(l) => {
            let (node, table) = lookup(l, &model.input_name, name(model.input));
            let mut ids = value_info(&model.input_name, &l.ids);
            if let Some(Type::TensorType(t)) = ids.type_.as_mut().and_then(|t| t.value.as_mut()) {
                t.elem_type = data_type::INT64;
            }
            graph.input.push(ids);
            graph.node.push(node);
            graph.initializer.push(table);
        }
    }
    graph
        .output
        .push(value_info(&name(model.output), &model.shapes[model.output]));
    for node in &model.nodes {
        let inputs: Vec<String> = node.inputs.iter().map(|&v| name(v)).collect();
        let (n, tensors) = write_node(node, inputs, name(node.output), &model.shapes[node.output]);
        graph.node.extend(n);
        graph.initializer.extend(tensors);
    }
    Ok(m.encode_to_vec())
}

/// The client's lookup as ONNX has it: a Gather of the table by the ids `ids`, writing `out`.
fn lookup(l: &Lookup, ids: &str, out: String) -> (NodeProto, TensorProto) {
    let table = TensorProto {
        name: format!("{ids}.table"),
        data_type: data_type::FLOAT,
        dims: vec![
            l.vocabulary as i64,
            (l.table.len() / l.vocabulary.max(1)) as i64,
        ],
        raw_data: l.table.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ..Default::default()
    };
    let node = NodeProto {
        name: format!("{ids}.lookup"),
        op_type: "Gather".to_owned(),
        input: vec![table.name.clone(), ids.to_owned()],
        output: vec![out],
        ..Default::default()
    };
    (node, table)
}

/// A graph input or output of per-sample `shape` with its batch axis of 1.
fn value_info(name: &str, shape: &[usize]) -> ValueInfoProto {
    let dim = std::iter::once(1).chain(shape.iter().copied());
    let dim = dim.map(|d| Dimension {
        value: Some(Dim::DimValue(d as i64)),
        denotation: String::new(),
    });
    let tensor = TensorType {
        elem_type: data_type::FLOAT,
        shape: Some(TensorShapeProto { dim: dim.collect() }),
    };
    ValueInfoProto {
        name: name.to_owned(),
        type_: Some(TypeProto {
            value: Some(Type::TensorType(tensor)),
            denotation: String::new(),
        }),
        ..Default::default()
    }
}

/// One layer's node (and the Add of a constant after it, if its export asks for one) and the
/// constants they read (named after the value it writes, which is unique where node names
/// need not be).
fn write_node(
    node: &Node,
    mut inputs: Vec<String>,
    output: String,
    out_shape: &[usize],
) -> (Vec<NodeProto>, Vec<TensorProto>) {
    let mut w = NodeWriter {
        name: &output,
        out_shape,
        consts: Vec::new(),
        leading: Vec::new(),
        attrs: Vec::new(),
        added: None,
    };
    let op_type = node.op.operator().export(&mut w);
    let NodeWriter {
        mut consts,
        leading,
        attrs,
        added,
        ..
    } = w;
    // The constants are the node's inputs after the computed ones, in order (an unnamed one
    // stands for an absent optional input, and is not written), but for the leading ones.
    inputs.extend(consts.iter().map(|t| t.name.clone()));
    inputs.splice(0..0, leading.iter().map(|t| t.name.clone()));
    consts.extend(leading);
    consts.retain(|t| !t.name.is_empty());
    let own_output = match added {
        Some(_) => format!("{output}.unbiased"),
        None => output.clone(),
    };
    let mut nodes = vec![NodeProto {
        name: node.name.clone(),
        op_type: op_type.to_owned(),
        input: inputs,
        output: vec![own_output.clone()],
        attribute: attrs,
        ..Default::default()
    }];
    if let Some(constant) = added {
        nodes.push(NodeProto {
            name: format!("{}.add", node.name),
            op_type: "Add".to_owned(),
            input: vec![own_output, constant.name.clone()],
            output: vec![output],
            ..Default::default()
        });
        consts.push(constant);
    }
    (nodes, consts)
}

/// What an operator's export ([`crate::op::Operator::export`]) writes of its node: its
/// attributes, and its constants, each an input after the computed ones, named after its output.
pub(crate) struct NodeWriter<'a> {
    name: &'a str,
    /// The node's output shape, per sample.
    pub(crate) out_shape: &'a [usize],
    consts: Vec<TensorProto>,
    /// Constants that are the node's first inputs, before the computed ones (Where's condition).
    leading: Vec<TensorProto>,
    attrs: Vec<AttributeProto>,
    /// A constant added to the node's output by an Add node after it.
    added: Option<TensorProto>,
}

impl NodeWriter<'_> {
    /// The output's ONNX dimensions: its per-sample shape after a batch axis of 1 (a constant
    /// of the output's shape, as it is written).
    pub(crate) fn sample_dims(&self) -> Vec<usize> {
        std::iter::once(1)
            .chain(self.out_shape.iter().copied())
            .collect()
    }

    /// A real constant `suffix` of `dims`, the node's next input.
    pub(crate) fn floats(&mut self, suffix: &str, dims: &[usize], values: &[f32]) {
        self.consts.push(TensorProto {
            name: format!("{}.{suffix}", self.name),
            data_type: data_type::FLOAT,
            dims: dims.iter().map(|&d| d as i64).collect(),
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ..Default::default()
        });
    }

    /// A real constant `suffix` of `dims` added to the node's output by an Add node after it
    /// (a bias that the node's ONNX operator has no input for).
    pub(crate) fn floats_added(&mut self, suffix: &str, dims: &[usize], values: &[f32]) {
        self.floats(suffix, dims, values);
        self.added = self.consts.pop();
    }

    /// An integer vector `suffix`, the node's next input.
    pub(crate) fn int64s(&mut self, suffix: &str, values: &[i64]) {
        self.consts.push(TensorProto {
            name: format!("{}.{suffix}", self.name),
            data_type: data_type::INT64,
            dims: vec![values.len() as i64],
            int64_data: values.to_vec(),
            ..Default::default()
        });
    }

    /// An integer tensor `suffix` of `dims`, the node's next input.
    pub(crate) fn int64s_shaped(&mut self, suffix: &str, dims: &[usize], values: &[i64]) {
        self.int64s(suffix, values);
        if let Some(t) = self.consts.last_mut() {
            t.dims = dims.iter().map(|&d| d as i64).collect();
        }
    }

    /// A Boolean tensor `suffix` of `dims`, an input before the computed ones.
    pub(crate) fn leading_bools(&mut self, suffix: &str, dims: &[usize], values: &[bool]) {
        self.leading.push(TensorProto {
            name: format!("{}.{suffix}", self.name),
            data_type: data_type::BOOL,
            dims: dims.iter().map(|&d| d as i64).collect(),
            raw_data: values.iter().map(|&b| u8::from(b)).collect(),
            ..Default::default()
        });
    }

    /// An optional input left out (an empty name), so that the next one keeps its place.
    pub(crate) fn absent(&mut self) {
        self.consts.push(TensorProto::default());
    }

    /// An integer attribute.
    pub(crate) fn int(&mut self, name: &str, v: i64) {
        self.attrs.push(AttributeProto {
            name: name.to_owned(),
            type_: AttributeType::Int as i32,
            i: Some(v),
            ..Default::default()
        });
    }

    /// A real attribute.
    pub(crate) fn float(&mut self, name: &str, v: f32) {
        self.attrs.push(AttributeProto {
            name: name.to_owned(),
            type_: AttributeType::Float as i32,
            f: Some(v),
            ..Default::default()
        });
    }

    /// A string attribute.
    pub(crate) fn string(&mut self, name: &str, v: &str) {
        self.attrs.push(AttributeProto {
            name: name.to_owned(),
            type_: AttributeType::String as i32,
            s: v.as_bytes().to_vec(),
            ..Default::default()
        });
    }

    /// An integer list attribute.
    pub(crate) fn ints(&mut self, name: &str, v: &[i64]) {
        self.attrs.push(AttributeProto {
            name: name.to_owned(),
            type_: AttributeType::Ints as i32,
            ints: v.to_vec(),
            ..Default::default()
        });
    }

    /// A kernel's attributes: shape, strides and pads.
    pub(crate) fn window(&mut self, w: &Window) {
        let to = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
        self.ints("kernel_shape", &to(&w.kernel));
        self.ints("strides", &to(&w.stride));
        self.ints("pads", &to(&w.pads));
    }
}
