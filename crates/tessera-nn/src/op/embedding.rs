//! The embedding lookup at a graph's start (ONNX Operators: Gather of a constant table by the
//! graph input's token ids): the client's ([`crate::model::Lookup`]). The lookup's output
//! becomes the model's input, so the protocols see embeddings; the ids are read by nothing
//! else.

use crate::import::args::{constant_input, real};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal, output};
use crate::model::Lookup;

/// Gather along axis 0 of a constant `[vocabulary, width]` table by the graph input's
/// integer ids, before any node reads them: the client's lookup.
pub(super) fn lookup<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let ids = imp.value(at.node.input.get(1).map_or("", String::as_str))?;
    if ids != 0 || !imp.input_integer {
        return Err("gathers a constant by computed indices: only the graph input's token ids (integers) index a table".into());
    }
    if imp.nodes.iter().any(|n| n.inputs.contains(&0)) {
        return Err("looks up token ids that another node has read".into());
    }
    if Attributes::of(at.node).int("axis", 0)? != 0 {
        return Err("an embedding table is read along axis 0".into());
    }
    let c = constant_input(imp, at, 0).ok_or("the table must be a constant")?;
    let (shape, table) = real(imp, c, "the embedding table")?;
    let [vocabulary, width] = shape[..] else {
        return Err(
            format!("an embedding table of shape {shape:?}, not [vocabulary, width]").into(),
        );
    };
    let ids_shape = imp.shapes[0].clone();
    let mut embedded = ids_shape.clone();
    embedded.push(width);
    if imp.ceiling.tensor(&embedded).is_none() || vocabulary == 0 {
        return Err(format!("embeddings of shape {embedded:?} from {vocabulary} rows").into());
    }
    imp.shapes[0] = embedded;
    imp.alias(output(at)?, 0)?;
    imp.lookup = Some(Lookup {
        ids: ids_shape,
        vocabulary,
        table,
    });
    Ok(())
}
