//! The ONNX IR's protobuf messages (ONNX's `onnx/onnx.proto`, IR version 11, as ONNX 1.23
//! declares them), decoded and encoded by [`prost`]: every message and field a file of any
//! opset may hold, so that [`crate::strip`] re-encodes a model without losing its structure and
//! [`crate::export`] writes one that onnxruntime reads. Field numbers and types are the
//! schema's; names follow it (`type_` for `type`). Fields that proto2 declares `optional` are
//! read as their default when absent, except an attribute's `f` and `i`, which keep whether
//! they were written.
//!
//! Decoding is prost's: bounded by the bytes given (every length is checked against what is
//! left) and by its recursion limit of 100 nested messages, so a hostile file costs at most
//! its own size.

pub use prost::Message;

/// An attribute's type ([`AttributeProto::type_`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum AttributeType {
    /// Not declared (IR 1 files): the value field in use tells.
    Undefined = 0,
    /// `f`.
    Float = 1,
    /// `i`.
    Int = 2,
    /// `s`.
    String = 3,
    /// `t`.
    Tensor = 4,
    /// `g`.
    Graph = 5,
    /// `sparse_tensor`.
    SparseTensor = 11,
    /// `tp`.
    TypeProto = 13,
    /// `floats`.
    Floats = 6,
    /// `ints`.
    Ints = 7,
    /// `strings`.
    Strings = 8,
    /// `tensors`.
    Tensors = 9,
    /// `graphs`.
    Graphs = 10,
    /// `sparse_tensors`.
    SparseTensors = 12,
    /// `type_protos`.
    TypeProtos = 14,
}

/// A named attribute of a node: one value of the kind [`AttributeProto::type_`] names.
#[derive(Clone, PartialEq, Message)]
pub struct AttributeProto {
    /// Its name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// In a function: the caller's attribute it refers to.
    #[prost(string, tag = "21")]
    pub ref_attr_name: String,
    /// Documentation.
    #[prost(string, tag = "13")]
    pub doc_string: String,
    /// Which value field is in use ([`AttributeType`]).
    #[prost(enumeration = "AttributeType", tag = "20")]
    pub type_: i32,
    /// A real.
    #[prost(float, optional, tag = "2")]
    pub f: Option<f32>,
    /// An integer.
    #[prost(int64, optional, tag = "3")]
    pub i: Option<i64>,
    /// A string (UTF-8 bytes).
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    /// A tensor.
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    /// A graph.
    #[prost(message, optional, tag = "6")]
    pub g: Option<GraphProto>,
    /// A sparse tensor.
    #[prost(message, optional, tag = "22")]
    pub sparse_tensor: Option<SparseTensorProto>,
    /// A type.
    #[prost(message, optional, tag = "14")]
    pub tp: Option<TypeProto>,
    /// Reals.
    #[prost(float, repeated, packed = "false", tag = "7")]
    pub floats: Vec<f32>,
    /// Integers.
    #[prost(int64, repeated, packed = "false", tag = "8")]
    pub ints: Vec<i64>,
    /// Strings.
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    /// Tensors.
    #[prost(message, repeated, tag = "10")]
    pub tensors: Vec<TensorProto>,
    /// Graphs.
    #[prost(message, repeated, tag = "11")]
    pub graphs: Vec<GraphProto>,
    /// Sparse tensors.
    #[prost(message, repeated, tag = "23")]
    pub sparse_tensors: Vec<SparseTensorProto>,
    /// Types.
    #[prost(message, repeated, tag = "15")]
    pub type_protos: Vec<TypeProto>,
}

/// A value's name and type.
#[derive(Clone, PartialEq, Message)]
pub struct ValueInfoProto {
    /// Its name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its type (a tensor's element type and shape).
    #[prost(message, optional, tag = "2")]
    pub type_: Option<TypeProto>,
    /// Documentation.
    #[prost(string, tag = "3")]
    pub doc_string: String,
    /// Metadata.
    #[prost(message, repeated, tag = "4")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// One operator applied to named values.
#[derive(Clone, PartialEq, Message)]
pub struct NodeProto {
    /// The values it reads (an empty name: an optional input left out).
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// The values it writes.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// Its name.
    #[prost(string, tag = "3")]
    pub name: String,
    /// The operator.
    #[prost(string, tag = "4")]
    pub op_type: String,
    /// The operator set's domain (empty: ONNX's own).
    #[prost(string, tag = "7")]
    pub domain: String,
    /// A function overload.
    #[prost(string, tag = "8")]
    pub overload: String,
    /// Its attributes.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    /// Documentation.
    #[prost(string, tag = "6")]
    pub doc_string: String,
    /// Metadata.
    #[prost(message, repeated, tag = "9")]
    pub metadata_props: Vec<StringStringEntryProto>,
    /// Where it runs when sharded.
    #[prost(message, repeated, tag = "10")]
    pub device_configurations: Vec<NodeDeviceConfigurationProto>,
}

/// How a node's tensors are sharded over devices.
#[derive(Clone, PartialEq, Message)]
pub struct NodeDeviceConfigurationProto {
    /// The configuration's name.
    #[prost(string, tag = "1")]
    pub configuration_id: String,
    /// Per tensor.
    #[prost(message, repeated, tag = "2")]
    pub sharding_spec: Vec<ShardingSpecProto>,
    /// The pipeline stage.
    #[prost(int32, tag = "3")]
    pub pipeline_stage: i32,
}

/// One tensor's sharding.
#[derive(Clone, PartialEq, Message)]
pub struct ShardingSpecProto {
    /// The tensor.
    #[prost(string, tag = "1")]
    pub tensor_name: String,
    /// Devices.
    #[prost(int64, repeated, tag = "2")]
    pub device: Vec<i64>,
    /// Device groups.
    #[prost(message, repeated, tag = "3")]
    pub index_to_device_group_map: Vec<IntIntListEntryProto>,
    /// Sharded axes.
    #[prost(message, repeated, tag = "4")]
    pub sharded_dim: Vec<ShardedDimProto>,
}

/// An integer and a list of integers.
#[derive(Clone, PartialEq, Message)]
pub struct IntIntListEntryProto {
    /// The key.
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// The values.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
}

/// One sharded axis.
#[derive(Clone, PartialEq, Message)]
pub struct ShardedDimProto {
    /// The axis.
    #[prost(int64, tag = "1")]
    pub axis: i64,
    /// Its shards.
    #[prost(message, repeated, tag = "2")]
    pub simple_sharding: Vec<SimpleShardedDimProto>,
}

/// An axis cut into shards.
#[derive(Clone, PartialEq, Message)]
pub struct SimpleShardedDimProto {
    /// The axis's size.
    #[prost(oneof = "Dim", tags = "1, 2")]
    pub dim: Option<Dim>,
    /// Shards.
    #[prost(int64, tag = "3")]
    pub num_shards: i64,
}

/// A dimension: a size, or a symbol standing for one.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Dim {
    /// A size.
    #[prost(int64, tag = "1")]
    DimValue(i64),
    /// A symbol.
    #[prost(string, tag = "2")]
    DimParam(String),
}

/// Devices a model may run on.
#[derive(Clone, PartialEq, Message)]
pub struct DeviceConfigurationProto {
    /// The configuration's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// How many devices.
    #[prost(int32, tag = "2")]
    pub num_devices: i32,
    /// Their names.
    #[prost(string, repeated, tag = "3")]
    pub device: Vec<String>,
}

/// How to train a model: graphs and bindings.
#[derive(Clone, PartialEq, Message)]
pub struct TrainingInfoProto {
    /// Initialisation.
    #[prost(message, optional, tag = "1")]
    pub initialization: Option<GraphProto>,
    /// One step of training.
    #[prost(message, optional, tag = "2")]
    pub algorithm: Option<GraphProto>,
    /// Initialisation's bindings.
    #[prost(message, repeated, tag = "3")]
    pub initialization_binding: Vec<StringStringEntryProto>,
    /// Updates' bindings.
    #[prost(message, repeated, tag = "4")]
    pub update_binding: Vec<StringStringEntryProto>,
}

/// An ONNX file: a graph, the operator sets it uses, metadata.
#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    /// The IR version.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// The operator sets.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// The tool that wrote it.
    #[prost(string, tag = "2")]
    pub producer_name: String,
    /// Its version.
    #[prost(string, tag = "3")]
    pub producer_version: String,
    /// The model's domain.
    #[prost(string, tag = "4")]
    pub domain: String,
    /// The model's version.
    #[prost(int64, tag = "5")]
    pub model_version: i64,
    /// Documentation.
    #[prost(string, tag = "6")]
    pub doc_string: String,
    /// The graph.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// Metadata.
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
    /// Training information.
    #[prost(message, repeated, tag = "20")]
    pub training_info: Vec<TrainingInfoProto>,
    /// Functions the graph may call.
    #[prost(message, repeated, tag = "25")]
    pub functions: Vec<FunctionProto>,
    /// Device configurations.
    #[prost(message, repeated, tag = "26")]
    pub configuration: Vec<DeviceConfigurationProto>,
}

/// A key and a value.
#[derive(Clone, PartialEq, Message)]
pub struct StringStringEntryProto {
    /// The key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// The value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// A tensor's quantisation parameters.
#[derive(Clone, PartialEq, Message)]
pub struct TensorAnnotation {
    /// The tensor.
    #[prost(string, tag = "1")]
    pub tensor_name: String,
    /// Its parameters' tensors.
    #[prost(message, repeated, tag = "2")]
    pub quant_parameter_tensor_names: Vec<StringStringEntryProto>,
}

/// A graph: nodes in topological order, its inputs, outputs and constants.
#[derive(Clone, PartialEq, Message)]
pub struct GraphProto {
    /// The nodes.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// Its name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constants (weights).
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// Sparse constants.
    #[prost(message, repeated, tag = "15")]
    pub sparse_initializer: Vec<SparseTensorProto>,
    /// Documentation.
    #[prost(string, tag = "10")]
    pub doc_string: String,
    /// Inputs.
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// Outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
    /// Types of other values.
    #[prost(message, repeated, tag = "13")]
    pub value_info: Vec<ValueInfoProto>,
    /// Quantisation parameters.
    #[prost(message, repeated, tag = "14")]
    pub quantization_annotation: Vec<TensorAnnotation>,
    /// Metadata.
    #[prost(message, repeated, tag = "16")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// A segment of a tensor stored in chunks.
#[derive(Clone, PartialEq, Message)]
pub struct Segment {
    /// First element.
    #[prost(int64, tag = "1")]
    pub begin: i64,
    /// Past the last.
    #[prost(int64, tag = "2")]
    pub end: i64,
}

/// A tensor: shape, element type, and its elements in one of the data fields (or `raw_data`,
/// little-endian).
#[derive(Clone, PartialEq, Message)]
pub struct TensorProto {
    /// Its shape.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// `TensorProto.DataType`.
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// The part stored here, if chunked.
    #[prost(message, optional, tag = "3")]
    pub segment: Option<Segment>,
    /// FLOAT, COMPLEX64.
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    /// INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16.
    #[prost(int32, repeated, tag = "5")]
    pub int32_data: Vec<i32>,
    /// STRING.
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub string_data: Vec<Vec<u8>>,
    /// INT64.
    #[prost(int64, repeated, tag = "7")]
    pub int64_data: Vec<i64>,
    /// Its name.
    #[prost(string, tag = "8")]
    pub name: String,
    /// Documentation.
    #[prost(string, tag = "12")]
    pub doc_string: String,
    /// The elements as fixed-width little-endian bytes.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
    /// Where the data is when external.
    #[prost(message, repeated, tag = "13")]
    pub external_data: Vec<StringStringEntryProto>,
    /// 0: in this message; 1: external.
    #[prost(int32, tag = "14")]
    pub data_location: i32,
    /// DOUBLE, COMPLEX128.
    #[prost(double, repeated, tag = "10")]
    pub double_data: Vec<f64>,
    /// UINT32, UINT64.
    #[prost(uint64, repeated, tag = "11")]
    pub uint64_data: Vec<u64>,
    /// Metadata.
    #[prost(message, repeated, tag = "16")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// A sparse tensor: its non-zero values and their indices.
#[derive(Clone, PartialEq, Message)]
pub struct SparseTensorProto {
    /// The values.
    #[prost(message, optional, tag = "1")]
    pub values: Option<TensorProto>,
    /// Their indices.
    #[prost(message, optional, tag = "2")]
    pub indices: Option<TensorProto>,
    /// The dense shape.
    #[prost(int64, repeated, tag = "3")]
    pub dims: Vec<i64>,
}

/// A shape: one [`Dimension`] per axis.
#[derive(Clone, PartialEq, Message)]
pub struct TensorShapeProto {
    /// The axes.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// One axis of a shape: a size, a symbol, or neither (unknown).
#[derive(Clone, PartialEq, Message)]
pub struct Dimension {
    /// The size or symbol.
    #[prost(oneof = "Dim", tags = "1, 2")]
    pub value: Option<Dim>,
    /// A standard denotation.
    #[prost(string, tag = "3")]
    pub denotation: String,
}

impl Dimension {
    /// The size, where the axis has one.
    pub fn size(&self) -> Option<i64> {
        match self.value {
            Some(Dim::DimValue(d)) => Some(d),
            _ => None,
        }
    }
}

/// A value's type.
#[derive(Clone, PartialEq, Message)]
pub struct TypeProto {
    /// Which kind of value, with its details.
    #[prost(oneof = "Type", tags = "1, 4, 5, 9, 8, 7")]
    pub value: Option<Type>,
    /// A standard denotation.
    #[prost(string, tag = "6")]
    pub denotation: String,
}

impl TypeProto {
    /// The tensor type, where it is one.
    pub fn tensor(&self) -> Option<&TensorType> {
        match &self.value {
            Some(Type::TensorType(t)) => Some(t),
            _ => None,
        }
    }
}

/// The kinds of [`TypeProto`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Type {
    /// A tensor.
    #[prost(message, tag = "1")]
    TensorType(TensorType),
    /// A sequence.
    #[prost(message, tag = "4")]
    SequenceType(SequenceType),
    /// A map.
    #[prost(message, tag = "5")]
    MapType(MapType),
    /// An optional value.
    #[prost(message, tag = "9")]
    OptionalType(SequenceType),
    /// A sparse tensor.
    #[prost(message, tag = "8")]
    SparseTensorType(TensorType),
    /// An opaque value.
    #[prost(message, tag = "7")]
    OpaqueType(OpaqueType),
}

/// A tensor's element type and shape (also a sparse tensor's).
#[derive(Clone, PartialEq, Message)]
pub struct TensorType {
    /// `TensorProto.DataType`.
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    /// Its shape, if known.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// A sequence's (or an optional's) element type.
#[derive(Clone, PartialEq, Message)]
pub struct SequenceType {
    /// The element's type.
    #[prost(message, optional, boxed, tag = "1")]
    pub elem_type: Option<Box<TypeProto>>,
}

/// A map's key and value types.
#[derive(Clone, PartialEq, Message)]
pub struct MapType {
    /// `TensorProto.DataType` of the keys.
    #[prost(int32, tag = "1")]
    pub key_type: i32,
    /// The values' type.
    #[prost(message, optional, boxed, tag = "2")]
    pub value_type: Option<Box<TypeProto>>,
}

/// An opaque type's domain and name.
#[derive(Clone, PartialEq, Message)]
pub struct OpaqueType {
    /// Its domain.
    #[prost(string, tag = "1")]
    pub domain: String,
    /// Its name.
    #[prost(string, tag = "2")]
    pub name: String,
}

/// An operator set: domain and version.
#[derive(Clone, PartialEq, Message)]
pub struct OperatorSetIdProto {
    /// Empty for ONNX's own.
    #[prost(string, tag = "1")]
    pub domain: String,
    /// The opset version.
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// A function a graph may call as an operator.
#[derive(Clone, PartialEq, Message)]
pub struct FunctionProto {
    /// Its name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Inputs.
    #[prost(string, repeated, tag = "4")]
    pub input: Vec<String>,
    /// Outputs.
    #[prost(string, repeated, tag = "5")]
    pub output: Vec<String>,
    /// Attribute names.
    #[prost(string, repeated, tag = "6")]
    pub attribute: Vec<String>,
    /// Attributes with defaults.
    #[prost(message, repeated, tag = "11")]
    pub attribute_proto: Vec<AttributeProto>,
    /// Its body.
    #[prost(message, repeated, tag = "7")]
    pub node: Vec<NodeProto>,
    /// Documentation.
    #[prost(string, tag = "8")]
    pub doc_string: String,
    /// Operator sets.
    #[prost(message, repeated, tag = "9")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// Its domain.
    #[prost(string, tag = "10")]
    pub domain: String,
    /// An overload.
    #[prost(string, tag = "13")]
    pub overload: String,
    /// Types of its values.
    #[prost(message, repeated, tag = "12")]
    pub value_info: Vec<ValueInfoProto>,
    /// Metadata.
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes written by the `onnx` Python package (1.23): one Gemm on an input of shape
    /// `["N", 3]` with a symbolic batch and `transB = 0` written out, read field by field.
    #[test]
    fn reads_a_model_the_onnx_package_wrote() {
        let bytes = include_bytes!("../../../data/tests/gemm-transb0.onnx");
        let m = ModelProto::decode(&bytes[..]).unwrap();
        assert_eq!(m.ir_version, 10);
        assert_eq!(m.opset_import[0].version, 17);
        let g = m.graph.as_ref().unwrap();
        assert_eq!(
            (g.node[0].op_type.as_str(), g.node[0].name.as_str()),
            ("Gemm", "gemm")
        );
        let t = g.input[0].type_.as_ref().unwrap().tensor().unwrap();
        assert_eq!(t.elem_type, 1);
        let dims = &t.shape.as_ref().unwrap().dim;
        assert_eq!(dims[0].value, Some(Dim::DimParam("N".into())));
        assert_eq!(dims[1].size(), Some(3));
        let a = &g.node[0].attribute[0];
        assert_eq!(
            (a.name.as_str(), a.type_(), a.i),
            ("transB", AttributeType::Int, Some(0))
        );
        let b = &g.initializer[0];
        assert_eq!((b.dims.as_slice(), b.float_data.len()), (&[3i64, 2][..], 6));
        // Written back, it decodes to the same message.
        assert_eq!(ModelProto::decode(&m.encode_to_vec()[..]).unwrap(), m);
    }
}
