//! The architecture of a model without its weights: what the client of a private inference
//! needs (the layers and shapes) and nothing the server keeps private.
//!
//! [`strip`] removes every number of the file that is not structure: the data of every
//! real-valued tensor (initializers, Constant nodes' tensors, tensors in any attribute), every
//! real-valued attribute (Gemm's alpha and beta, BatchNormalization's epsilon, Constant's
//! `value_float(s)`, which become empty tensors of the same shape), sparse tensors, subgraphs,
//! functions, training information and documentation strings. Integer tensors stay: the
//! importer reads them only as shapes (Reshape's target), never as weights; so do the real
//! constants that are the architecture's (`crate::op::ARCHITECTURE_INPUTS`: a Pow's
//! exponent). The model is marked
//! with the metadata entry [`MARK`]; the importer reads a marked file's empty tensors as zeros
//! and refuses a marked file that still carries any number ([`leftover`]).

use crate::error::Error;
use crate::import::{has_data, is_float, shown};
use crate::onnx::TensorProto;
use crate::onnx::{AttributeProto, AttributeType, GraphProto, Message, ModelProto, NodeProto};
use std::collections::HashSet;

/// The metadata key of a stripped model.
pub const MARK: &str = "tessera.stripped";

/// The most elements the empty tensors of a stripped file may stand for together (2^26:
/// 256 MiB of `f32`, the largest allocation a stripped file can cause): a stripped file is
/// small, and the zeros it asks for must stay within reason.
pub const MAX_FILLED: usize = 1 << 26;

/// The file's protobuf message, with a graph.
pub fn parse(bytes: &[u8], what: &str) -> Result<ModelProto, Error> {
    let model = ModelProto::decode(bytes).map_err(|e| Error::Parse {
        what: what.to_owned(),
        reason: e.to_string(),
    })?;
    if model.graph.is_none() {
        return Err(Error::Parse {
            what: what.to_owned(),
            reason: "the file holds no graph".to_owned(),
        });
    }
    Ok(model)
}

/// Whether the model carries the [`MARK`].
pub fn is_stripped(model: &ModelProto) -> bool {
    model.metadata_props.iter().any(|p| p.key == MARK)
}

/// The file `bytes` (named `what` in errors) without its numbers, marked with [`MARK`].
pub fn strip(bytes: &[u8], what: &str) -> Result<Vec<u8>, Error> {
    let mut model = parse(bytes, what)?;
    model.doc_string.clear();
    model.functions.clear();
    model.training_info.clear();
    let graph = model.graph.get_or_insert_default();
    graph.doc_string.clear();
    graph.sparse_initializer.clear();
    let kept = architecture(graph);
    for t in &mut graph.initializer {
        if !kept.contains(&t.name) {
            empty(t);
        }
    }
    for node in &mut graph.node {
        if node.op_type != "Constant" || !node.output.iter().any(|o| kept.contains(o)) {
            strip_node(node);
        }
    }
    if !is_stripped(&model) {
        model.metadata_props.push(Default::default());
        if let Some(p) = model.metadata_props.last_mut() {
            p.key = MARK.to_owned();
            p.value = "weights removed: architecture only".to_owned();
        }
    }
    Ok(model.encode_to_vec())
}

/// The names of the constants that are the architecture's ([`crate::op::ARCHITECTURE_INPUTS`]:
/// a Pow's exponent), which stay.
fn architecture(graph: &GraphProto) -> HashSet<String> {
    let mut kept = HashSet::new();
    for node in &graph.node {
        for &(op, index) in crate::op::ARCHITECTURE_INPUTS {
            if node.op_type == op
                && let Some(name) = node.input.get(index)
            {
                kept.insert(name.clone());
            }
        }
    }
    kept
}

/// Empties a real-valued tensor (its shape and type stay) and its documentation.
fn empty(t: &mut TensorProto) {
    if is_float(t.data_type) {
        // Every data field, those a float tensor does not use too: a file may fill them.
        t.raw_data = Default::default();
        t.float_data.clear();
        t.double_data.clear();
        t.int32_data.clear();
        t.int64_data.clear();
        t.uint64_data.clear();
        t.string_data.clear();
        t.external_data.clear();
    }
    t.doc_string.clear();
}

fn strip_node(node: &mut NodeProto) {
    node.doc_string.clear();
    for a in &mut node.attribute {
        a.doc_string.clear();
        // Constant's value_float(s) become an empty tensor of the same shape.
        if node.op_type == "Constant" && (a.name == "value_float" || a.name == "value_floats") {
            let t = TensorProto {
                data_type: crate::import::data_type::FLOAT,
                dims: if a.name == "value_floats" {
                    vec![a.floats.len() as i64]
                } else {
                    Vec::new()
                },
                ..Default::default()
            };
            *a = AttributeProto {
                name: "value".to_owned(),
                type_: AttributeType::Tensor as i32,
                t: Some(t),
                ..Default::default()
            };
        }
        if let Some(t) = a.t.as_mut() {
            empty(t);
        }
        a.tensors.iter_mut().for_each(empty);
        a.f = None;
        a.floats.clear();
    }
    node.attribute.retain(|a| {
        use AttributeType::*;
        !matches!(
            a.type_(),
            Float | Floats | Graph | Graphs | SparseTensor | SparseTensors
        ) && a.g.is_none()
            && a.graphs.is_empty()
            && a.sparse_tensor.is_none()
            && a.sparse_tensors.is_empty()
    });
}

/// The first number a stripped file must not carry, described, or `None`: data in a
/// real-valued tensor, a real-valued attribute, a sparse tensor, a subgraph, a function or
/// training information.
pub fn leftover(model: &ModelProto) -> Option<String> {
    if !model.functions.is_empty() || !model.training_info.is_empty() {
        return Some("functions or training information".to_owned());
    }
    let graph = model.graph.as_ref()?;
    let kept = architecture(graph);
    let full = |t: &TensorProto| is_float(t.data_type) && has_data(t) && !kept.contains(&t.name);
    if let Some(t) = graph.initializer.iter().find(|t| full(t)) {
        return Some(format!("initializer \"{}\"", shown(&t.name)));
    }
    if !graph.sparse_initializer.is_empty() {
        return Some("a sparse initializer".to_owned());
    }
    let architectural =
        |n: &NodeProto| n.op_type == "Constant" && n.output.iter().any(|o| kept.contains(o));
    for n in graph.node.iter().filter(|n| !architectural(n)) {
        for a in &n.attribute {
            let numbers = a.f.is_some_and(|f| f != 0.0)
                || !a.floats.is_empty()
                || a.t.as_ref().is_some_and(full)
                || a.tensors.iter().any(full)
                || a.g.is_some()
                || !a.graphs.is_empty()
                || a.sparse_tensor.is_some()
                || !a.sparse_tensors.is_empty()
                || matches!(a.type_(), AttributeType::Float | AttributeType::Floats);
            if numbers {
                return Some(format!(
                    "attribute \"{}\" of node \"{}\" ({})",
                    shown(&a.name),
                    shown(&n.name),
                    shown(&n.op_type)
                ));
            }
        }
    }
    None
}
