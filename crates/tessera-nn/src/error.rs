//! The crate's one error type: what went wrong and where (the file, the node and its operator,
//! the tensor), in words a user can act on.

/// An error from loading a model, reading data or evaluating a network.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The ONNX parser rejected the file.
    #[error("{what}: not a model the ONNX importer can read: {reason}")]
    Parse {
        /// The file or buffer.
        what: String,
        /// The parser's reason.
        reason: String,
    },
    /// A node's operator is not one this crate evaluates.
    #[error(
        "node {node}: operator {op:?} is not supported; supported: {}",
        crate::op::supported().collect::<Vec<_>>().join(", ")
    )]
    Unsupported {
        /// The node: its name in the file (quoted and escaped) or the tensor it writes.
        node: String,
        /// Its ONNX operator.
        op: String,
    },
    /// A node is supported but not with these attributes, inputs or shapes.
    #[error("node {node} ({op:?}): {reason}")]
    Node {
        /// The node: its name in the file (quoted and escaped) or the tensor it writes.
        node: String,
        /// Its ONNX operator.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// The graph as a whole: its inputs, outputs or the way nodes connect.
    #[error("graph: {0}")]
    Graph(String),
    /// A data file (MNIST IDX, an input tensor) is malformed.
    #[error("{what}: {reason}")]
    Data {
        /// The file and, where it helps, the position in it.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// An input tensor does not fit the model.
    #[error("input: {0}")]
    Input(String),
    /// The model could not be compiled to a hybrid program: the protocols' error, kept whole.
    #[error("compiling the network: {0}")]
    Compile(#[source] tessera_protocols::Error),
}

impl tessera_core::Failure for Error {
    fn fault(&self) -> tessera_core::Fault {
        match self {
            Error::Io { .. } => tessera_core::Fault::LocalIo,
            Error::Compile(e) => e.fault(),
            Error::Parse { .. }
            | Error::Unsupported { .. }
            | Error::Node { .. }
            | Error::Graph(_)
            | Error::Data { .. }
            | Error::Input(_) => tessera_core::Fault::Misuse,
        }
    }
}

impl Error {
    /// An error of `node` with operator `op`.
    pub(crate) fn node(node: &str, op: &str, reason: impl Into<String>) -> Self {
        Error::Node {
            node: node.to_owned(),
            op: op.to_owned(),
            reason: reason.into(),
        }
    }
}
