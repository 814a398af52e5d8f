//! Neural networks for private inference (MOTION2NX, Braun et al., §3 and
//! App. A.3): ONNX files exported by PyTorch or TensorFlow, unmodified, imported into a checked
//! graph of layers ([`import`], [`model`]); plaintext evaluation in `f32` and in fixed point over
//! Z_2^ℓ ([`eval`], [`fixed`]), the latter the exact reference of the secure layers; the
//! architecture without weights for the client ([`strip`]); MNIST's IDX files ([`data`]) and
//! inputs from IDX, PNG and `.npy` files ([`input`]); private inference: a model compiled to a
//! hybrid two-party program ([`secure`]) and the server's and client's sides of one inference
//! ([`infer`]) with its progress on a terminal ([`progress`]); the benchmark networks of MOTION2NX's tables with seeded weights ([`zoo`]).
//!
//! ```no_run
//! use tessera_nn::{data::Normalise, eval::{argmax, Plain}, fixed::Fixed};
//! let model = tessera_nn::import::load("model.onnx".as_ref())?;
//! let digit = vec![0u8; 784];
//! let fixed = Plain::new(&model, Fixed::new(64, 16).unwrap())?;
//! let logits = fixed.run(&Normalise::MNIST.apply(&digit))?;
//! println!("class {}", argmax(fixed.arith(), &logits));
//! # Ok::<(), tessera_nn::Error>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
pub mod data;
mod error;
pub mod eval;
pub mod export;
pub mod fixed;
pub mod import;
pub mod infer;
pub mod input;
pub mod kernels;
pub mod model;
pub mod onnx;
mod op;
pub mod progress;
pub mod secure;
pub mod strip;
pub mod zoo;

pub use error::Error;
