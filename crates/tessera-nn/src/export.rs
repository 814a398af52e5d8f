//! A [`Model`] written as an ONNX file (opset 13, weights inside the file): what `nn zoo
//! write` gives for the built-in networks, so that other tools (onnxruntime, the other
//! frameworks of a side-by-side run) read the same network. Each layer becomes the ONNX node
//! the importer reads back into it ([`crate::import`]), the batch axis (of 1) restored; the
//! output transforms left to the client are not written.

use crate::error::Error;
use crate::import::data_type;
use crate::model::{Model, Node, Op, Pool, Window};
use crate::onnx::{AttributeProto, AttributeType, Dim, Dimension, Message, ModelProto, NodeProto};
use crate::onnx::{OperatorSetIdProto, TensorProto, TensorShapeProto, TensorType, Type};
use crate::onnx::{TypeProto, ValueInfoProto};

/// The opset written.
pub const OPSET: i64 = 13;

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
        if v == model.input {
            model.input_name.clone()
        } else {
            format!("v{v}")
        }
    };
    graph
        .input
        .push(value_info(&name(model.input), &model.shapes[model.input]));
    graph
        .output
        .push(value_info(&name(model.output), &model.shapes[model.output]));
    for node in &model.nodes {
        let inputs: Vec<String> = node.inputs.iter().map(|&v| name(v)).collect();
        let (n, tensors) = write_node(node, inputs, name(node.output), &model.shapes[node.output]);
        graph.node.push(n);
        graph.initializer.extend(tensors);
    }
    Ok(m.encode_to_vec())
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

/// One layer's node and the constants it reads (named after the node).
fn write_node(
    node: &Node,
    mut inputs: Vec<String>,
    output: String,
    out_shape: &[usize],
) -> (NodeProto, Vec<TensorProto>) {
    let tensor = |suffix: &str| format!("{}.{suffix}", node.name);
    let mut consts = Vec::new();
    let mut attrs = Vec::new();
    let op_type = match &node.op {
        Op::Dense(d) => {
            consts.push(floats(&tensor("weight"), &[d.outputs, d.inputs], &d.weight));
            consts.push(floats(&tensor("bias"), &[d.outputs], &d.bias));
            attrs.push(int("transB", 1));
            "Gemm"
        }
        Op::Conv(c) => {
            let [kh, kw] = c.window.kernel;
            let shape = [c.out_channels, c.in_channels / c.groups, kh, kw];
            consts.push(floats(&tensor("weight"), &shape, &c.weight));
            consts.push(floats(&tensor("bias"), &[c.out_channels], &c.bias));
            attrs.extend(window(&c.window));
            attrs.push(int("group", c.groups as i64));
            "Conv"
        }
        Op::Relu => "Relu",
        Op::MaxPool(p) => {
            attrs.extend(pool(p));
            "MaxPool"
        }
        Op::AvgPool(p) => {
            attrs.extend(pool(p));
            attrs.push(int("count_include_pad", i64::from(p.count_include_pad)));
            "AveragePool"
        }
        Op::GlobalAvgPool => "GlobalAveragePool",
        Op::Reshape => {
            let target: Vec<i64> = std::iter::once(1)
                .chain(out_shape.iter().map(|&d| d as i64))
                .collect();
            consts.push(int64s(&tensor("shape"), &target));
            "Reshape"
        }
        Op::Transpose(perm) => {
            let perm: Vec<i64> = std::iter::once(0)
                .chain(perm.iter().map(|&p| p as i64 + 1))
                .collect();
            attrs.push(ints("perm", &perm));
            "Transpose"
        }
        Op::Add => "Add",
        Op::Sub => "Sub",
        Op::AddConst(k) => {
            let shape: Vec<usize> = std::iter::once(1)
                .chain(out_shape.iter().copied())
                .collect();
            consts.push(floats(&tensor("constant"), &shape, k));
            "Add"
        }
        Op::Concat(axis) => {
            attrs.push(int("axis", *axis as i64 + 1));
            "Concat"
        }
        Op::Pad(pads) => {
            let begin = pads.iter().map(|&(b, _)| b as i64);
            let end = pads.iter().map(|&(_, e)| e as i64);
            let all: Vec<i64> = std::iter::once(0)
                .chain(begin)
                .chain(std::iter::once(0))
                .chain(end)
                .collect();
            consts.push(int64s(&tensor("pads"), &all));
            "Pad"
        }
        Op::Clip(lo, hi) => {
            // An absent bound is an empty input name, so the upper one keeps its place.
            for (bound, suffix) in [(lo, "min"), (hi, "max")] {
                match bound {
                    Some(v) => consts.push(floats(&tensor(suffix), &[], &[*v])),
                    None => consts.push(TensorProto::default()),
                }
            }
            if hi.is_none() {
                consts.pop();
            }
            "Clip"
        }
    };
    // The constants are the node's inputs after the computed ones, in order (an unnamed one
    // stands for an absent optional input, and is not written).
    inputs.extend(consts.iter().map(|t| t.name.clone()));
    consts.retain(|t| !t.name.is_empty());
    let n = NodeProto {
        name: node.name.clone(),
        op_type: op_type.to_owned(),
        input: inputs,
        output: vec![output],
        attribute: attrs,
        ..Default::default()
    };
    (n, consts)
}

/// A kernel's attributes: shape, strides and pads.
fn window(w: &Window) -> [AttributeProto; 3] {
    let to = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
    [
        ints("kernel_shape", &to(&w.kernel)),
        ints("strides", &to(&w.stride)),
        ints("pads", &to(&w.pads)),
    ]
}

/// A pooling's window with its declared padding, and ceil mode where it grew the padding.
fn pool(p: &Pool) -> [AttributeProto; 4] {
    let mut declared = p.window;
    for i in 0..2 {
        declared.pads[i + 2] = declared.pads[i + 2].saturating_sub(p.overhang[i]);
    }
    let [kernel, strides, pads] = window(&declared);
    let ceil = p.overhang != [0, 0];
    [kernel, strides, pads, int("ceil_mode", i64::from(ceil))]
}

fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: name.to_owned(),
        type_: AttributeType::Int as i32,
        i: Some(v),
        ..Default::default()
    }
}

fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.to_owned(),
        type_: AttributeType::Ints as i32,
        ints: v.to_vec(),
        ..Default::default()
    }
}

fn floats(name: &str, dims: &[usize], values: &[f32]) -> TensorProto {
    TensorProto {
        name: name.to_owned(),
        data_type: data_type::FLOAT,
        dims: dims.iter().map(|&d| d as i64).collect(),
        raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ..Default::default()
    }
}

fn int64s(name: &str, values: &[i64]) -> TensorProto {
    TensorProto {
        name: name.to_owned(),
        data_type: data_type::INT64,
        dims: vec![values.len() as i64],
        int64_data: values.to_vec(),
        ..Default::default()
    }
}
