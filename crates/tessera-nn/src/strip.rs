//! The architecture of a model without its weights: what the client of a private inference
//! needs (the layers and shapes) and nothing the server keeps private.
//!
//! [`strip`] empties every floating-point tensor of the file (initializers and the values of
//! Constant nodes; integer tensors such as Reshape's target shapes stay) and marks the model
//! with the metadata entry [`MARK`]. [`fill`] undoes the emptying with zeros when a marked file
//! is loaded, so the parser sees a well-formed model.

use crate::error::Error;
use onnx_ir::{Message, ModelProto, TensorProto};

/// The metadata key of a stripped model.
pub const MARK: &str = "tessera.stripped";

/// The most elements [`fill`] will make up for a stripped file (2^26: 256 MiB of `f32`): a
/// stripped file is small, and the zeros it asks for must stay within reason.
pub const MAX_FILLED: usize = 1 << 26;

/// ONNX's floating-point element types and their sizes in bytes.
fn float_size(data_type: i32) -> Option<usize> {
    match data_type {
        1 => Some(4),       // FLOAT
        11 => Some(8),      // DOUBLE
        10 | 16 => Some(2), // FLOAT16, BFLOAT16
        _ => None,
    }
}

/// The file's protobuf message, with a graph.
pub fn parse(bytes: &[u8], what: &str) -> Result<ModelProto, Error> {
    let model = ModelProto::parse_from_bytes(bytes).map_err(|e| Error::Parse {
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

/// Every tensor of the model's main graph that holds weights: initializers and Constant nodes'
/// `value` attributes.
fn tensors(model: &mut ModelProto) -> impl Iterator<Item = &mut TensorProto> {
    let graph = model.graph.mut_or_insert_default();
    let constants = graph
        .node
        .iter_mut()
        .filter(|n| n.op_type == "Constant")
        .flat_map(|n| n.attribute.iter_mut())
        .filter_map(|a| a.t.as_mut());
    graph.initializer.iter_mut().chain(constants)
}

/// The file `bytes` (named `what` in errors) with its floating-point tensors emptied and the
/// [`MARK`] set.
pub fn strip(bytes: &[u8], what: &str) -> Result<Vec<u8>, Error> {
    let mut model = parse(bytes, what)?;
    for t in tensors(&mut model) {
        if float_size(t.data_type).is_some() {
            t.raw_data = Default::default();
            t.float_data.clear();
            t.double_data.clear();
            t.int32_data.clear();
        }
    }
    if !model.metadata_props.iter().any(|p| p.key == MARK) {
        model.metadata_props.push(Default::default());
        if let Some(p) = model.metadata_props.last_mut() {
            p.key = MARK.to_owned();
            p.value = "weights removed: architecture only".to_owned();
        }
    }
    model.write_to_bytes().map_err(|e| Error::Parse {
        what: what.to_owned(),
        reason: e.to_string(),
    })
}

/// Fills a stripped model's empty floating-point tensors with zeros (at most [`MAX_FILLED`]
/// elements in all) so the parser sees a well-formed model; returns whether it was stripped.
pub fn fill(model: &mut ModelProto, what: &str) -> Result<bool, Error> {
    if !model.metadata_props.iter().any(|p| p.key == MARK) {
        return Ok(false);
    }
    let mut budget = MAX_FILLED;
    for t in tensors(model) {
        let Some(size) = float_size(t.data_type) else {
            continue;
        };
        if !t.raw_data.is_empty() || !t.float_data.is_empty() || !t.double_data.is_empty() {
            continue;
        }
        let n = t
            .dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
            .filter(|&n| n <= budget)
            .ok_or_else(|| Error::Parse {
                what: what.to_owned(),
                reason: format!(
                    "stripped tensor {:?} of shape {:?} is larger than the {MAX_FILLED} elements a stripped model may ask for",
                    t.name, t.dims
                ),
            })?;
        budget -= n;
        t.raw_data = vec![0u8; n * size].into();
    }
    Ok(true)
}
