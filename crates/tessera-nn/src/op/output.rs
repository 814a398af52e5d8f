//! LogSoftmax and Log at the end of a network (ONNX Operators): transforms of the logits that
//! change no argmax, peeled off into [`crate::model::Model::client_side`] for the client to
//! apply in the clear, as a Softmax there is ([`crate::import`]); anywhere else they are
//! refused.

use super::Family;
use crate::import::args::computed;
use crate::import::{At, Importer, Refusal, output};

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "LogSoftmax",
        import,
        supported: "LogSoftmax, Log (at the output, after a Softmax)",
    },
    Family {
        name: "Log",
        import,
        supported: "",
    },
];

/// The client's to apply, if at the output: checked when the graph is finished.
fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let out = imp.new_value(output(at)?, shape)?;
    imp.client.insert(out, (at.node.op_type.clone(), x));
    Ok(())
}
