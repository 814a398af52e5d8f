//! Tessera from Python (`import tessera`): the native module `tessera._tessera` behind the
//! package's public names. Models ([`model`]): ONNX import, plaintext references and private
//! inference with both parties in this process; private inference between processes
//! ([`remote`]); circuits ([`circuit`]): the library's and Bristol files, plaintext evaluation
//! and runs in Yao, B, β and authenticated garbling. Every protocol run releases the GIL, stops
//! on Ctrl-C ([`interrupt`]) and reports its progress to a callback or a bar ([`progress`]);
//! every error is an exception of the package's small hierarchy ([`errors`]), chosen by the
//! error's kind (`tessera_core::Fault`), never a panic.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod circuit;
mod errors;
mod interrupt;
mod model;
mod progress;
mod remote;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _tessera(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<model::Model>()?;
    m.add_class::<circuit::Circuit>()?;
    m.add_class::<remote::Tls>()?;
    m.add_class::<remote::Server>()?;
    m.add_function(wrap_pyfunction!(remote::infer, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
