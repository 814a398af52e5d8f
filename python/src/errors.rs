//! The exceptions a Python user sees: `tessera.Error` and its subclasses, chosen from an
//! error's kind ([`Fault`]) in this one place. Text from a peer never reaches them (a peer's
//! abort is its code's fixed description).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tessera_core::{Failure, Fault};

create_exception!(_tessera, Error, PyException, "Every error Tessera raises.");
create_exception!(
    _tessera,
    InvalidInput,
    Error,
    "This side's input, options, model or file cannot be used: what and where are named."
);
create_exception!(
    _tessera,
    UnsupportedOperator,
    InvalidInput,
    "The model has an operator Tessera does not evaluate: the node and operator are named."
);
create_exception!(
    _tessera,
    PeerAborted,
    Error,
    "The peer stopped and said why (its reason's fixed description)."
);
create_exception!(
    _tessera,
    ProtocolError,
    Error,
    "The protocol failed: the peer misbehaved, the parties are not set up alike, or the connection failed."
);
create_exception!(
    _tessera,
    Timeout,
    Error,
    "A wait for the peer ran out, or the run's deadline passed."
);

/// Adds the exceptions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("InvalidInput", py.get_type::<InvalidInput>())?;
    m.add("UnsupportedOperator", py.get_type::<UnsupportedOperator>())?;
    m.add("PeerAborted", py.get_type::<PeerAborted>())?;
    m.add("ProtocolError", py.get_type::<ProtocolError>())?;
    m.add("Timeout", py.get_type::<Timeout>())?;
    Ok(())
}

/// The exception for `e`, by its kind.
pub fn raise(e: &(impl Failure + std::fmt::Display)) -> PyErr {
    let text = e.to_string();
    match e.fault() {
        Fault::Misuse | Fault::LocalIo | Fault::Preprocessing => InvalidInput::new_err(text),
        Fault::PeerAborted => PeerAborted::new_err(text),
        Fault::Timeout => Timeout::new_err(text),
        _ => ProtocolError::new_err(text),
    }
}

/// The exception for an error of the nn crate: an unsupported operator is its own.
pub fn raise_nn(e: &tessera_nn::Error) -> PyErr {
    match e {
        tessera_nn::Error::Unsupported { .. } => UnsupportedOperator::new_err(e.to_string()),
        _ => raise(e),
    }
}

/// The caller's mistake, in words.
pub fn invalid(text: impl Into<String>) -> PyErr {
    InvalidInput::new_err(text.into())
}
