//! Models as a hostile server or file would write them (issue 42's second hostile round):
//! weights hidden where `strip` did not look, paddings and strides that wrap or ask for
//! terabytes, graphs of a hundred thousand nodes, stripped files that ask for gigabytes of
//! zeros, and numbers that are not finite or do not fit the fixed-point ring. Each must end in
//! an error that names what is wrong, never in an abort or a wrong answer.

use std::path::{Path, PathBuf};
use tessera_nn::data::{Idx, Normalise};
use tessera_nn::eval::Plain;
use tessera_nn::fixed::{Fixed, Float};
use tessera_nn::model::{CEILING, Op};
use tessera_nn::onnx::{AttributeProto, AttributeType, Dim, Message, ModelProto, NodeProto};
use tessera_nn::onnx::{TensorProto, Type};
use tessera_nn::secure::{self, Protocol};
use tessera_nn::{Error, import, strip};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(name)
}

fn proto(name: &str) -> ModelProto {
    ModelProto::decode(&*std::fs::read(data(name)).unwrap()).unwrap()
}

fn bytes(m: &ModelProto) -> Vec<u8> {
    m.encode_to_vec()
}

fn digit() -> Vec<f32> {
    let images = Idx::load(&data("tests/mnist-t10k-256-images.idx3-ubyte")).unwrap();
    Normalise::MNIST.apply(images.item(0).unwrap())
}

fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        type_: AttributeType::Ints as i32,
        ints: v.to_vec(),
        ..Default::default()
    }
}

/// An integer list under a declared type of FLOAT.
fn mistyped(name: &str, v: &[i64]) -> AttributeProto {
    let mut a = ints(name, v);
    a.type_ = AttributeType::Float as i32;
    a
}

fn float(name: &str, f: f32) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        type_: AttributeType::Float as i32,
        f: Some(f),
        ..Default::default()
    }
}

/// Sets (replacing) attribute `a` of `node`.
fn set(node: &mut NodeProto, a: AttributeProto) {
    node.attribute.retain(|b| b.name != a.name);
    node.attribute.push(a);
}

fn tensor(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        name: name.into(),
        data_type: 1,
        dims: dims.to_vec(),
        float_data: values.to_vec(),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], output: &str) -> NodeProto {
    NodeProto {
        op_type: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.to_owned()],
        ..Default::default()
    }
}

fn position(m: &ModelProto, op: &str) -> usize {
    m.graph
        .as_ref()
        .unwrap()
        .node
        .iter()
        .position(|n| n.op_type == op)
        .unwrap()
}

/// A Constant whose value is declared of another type than it holds (a tensor under GRAPH:
/// what the onnx fuzz target found) is refused at import, as `nn strip` would remove it and the
/// architecture would not import; declared TENSOR, it imports, and so does its architecture.
#[test]
fn a_constant_is_read_as_its_declared_type() {
    let mut m = proto("tests/minionn-R_S_opset13.onnx");
    let mut constant = node("Constant", &[], "unused");
    constant.name = "c".into();
    constant.attribute.push(AttributeProto {
        name: "value".into(),
        type_: AttributeType::Graph as i32,
        t: Some(TensorProto {
            data_type: 7,
            dims: vec![1],
            int64_data: vec![3],
            ..Default::default()
        }),
        ..Default::default()
    });
    m.graph.as_mut().unwrap().node.insert(0, constant);
    let err = import::from_bytes(&bytes(&m), "m").unwrap_err().to_string();
    assert!(
        err.contains("attribute value is of type GRAPH; TENSOR is needed"),
        "{err}"
    );
    m.graph.as_mut().unwrap().node[0].attribute[0].type_ = AttributeType::Tensor as i32;
    assert!(import::from_bytes(&bytes(&m), "m").is_ok());
    let arch = strip::strip(&bytes(&m), "m").unwrap();
    assert!(import::from_bytes(&arch, "arch").is_ok());
}

/// A float tensor whose numbers sit in fields float tensors do not use (int64, uint64 and
/// string data: what the onnx fuzz target found): strip empties them too, so the architecture
/// carries no numbers and imports.
#[test]
fn strip_empties_every_data_field_of_a_float_tensor() {
    let mut m = proto("tests/minionn-R_S_opset13.onnx");
    let mut odd = tensor("odd", &[1], &[]);
    odd.int64_data = vec![7];
    odd.uint64_data = vec![8];
    odd.string_data = vec![b"9".to_vec()];
    m.graph.as_mut().unwrap().initializer.push(odd);
    let arch = strip::strip(&bytes(&m), "odd").unwrap();
    let parsed = ModelProto::decode(&*arch).unwrap();
    assert_eq!(strip::leftover(&parsed), None);
    import::from_bytes(&arch, "odd").unwrap();
}

/// Defect 1: a bias moved into a Constant node's `value_floats`, and Gemm's alpha and beta,
/// are gone from the architecture; a file marked as stripped that still carries numbers is
/// refused.
#[test]
fn strip_removes_every_number_and_a_weighted_architecture_is_refused() {
    let mut m = proto("tests/minionn-R_S_opset13.onnx");
    let gemm = position(&m, "Gemm");
    let g = m.graph.as_mut().unwrap();
    let b = g.node[gemm].input[2].clone();
    let at = g.initializer.iter().position(|t| t.name == b).unwrap();
    let bias = g.initializer.remove(at);
    let values: Vec<f32> = bias
        .raw_data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .chain(bias.float_data.iter().copied())
        .collect();
    assert_eq!(values.len(), 100);
    let mut constant = node("Constant", &[], &b);
    constant.attribute.push(AttributeProto {
        name: "value_floats".into(),
        type_: AttributeType::Floats as i32,
        floats: values.clone(),
        ..Default::default()
    });
    g.node.insert(0, constant);
    set(&mut g.node[gemm + 1], float("alpha", 0.75));
    set(&mut g.node[gemm + 1], float("beta", 1.25));
    let full = bytes(&m);
    let model = import::from_bytes(&full, "full").unwrap();
    let Op::Dense(d) = &model
        .nodes
        .iter()
        .find(|n| n.op.kind() == "Gemm")
        .unwrap()
        .op
    else {
        unreachable!()
    };
    assert_eq!(
        d.bias[0],
        values[0] * 1.25,
        "the constant is read as the bias"
    );
    Plain::new(&model, Float).unwrap().run(&digit()).unwrap();

    let arch = strip::strip(&full, "full").unwrap();
    let parsed = ModelProto::decode(&*arch).unwrap();
    assert_eq!(strip::leftover(&parsed), None);
    for v in values.iter().filter(|v| **v != 0.0).take(20) {
        let b = v.to_le_bytes();
        assert!(!arch.windows(4).any(|w| w == b), "bias value {v} left");
    }
    for scale in [0.75f32, 1.25] {
        let b = scale.to_le_bytes();
        assert!(!arch.windows(4).any(|w| w == b), "alpha or beta left");
    }
    let stripped = import::from_bytes(&arch, "arch").unwrap();
    assert!(!stripped.has_weights);
    assert_eq!(stripped.shapes, model.shapes);

    // The full model with the mark but its numbers: refused, the leftover named.
    let mut forged = m.clone();
    forged.metadata_props.push(Default::default());
    forged.metadata_props.last_mut().unwrap().key = strip::MARK.into();
    let err = import::from_bytes(&bytes(&forged), "forged").unwrap_err();
    assert!(err.to_string().contains("still carries numbers"), "{err}");
}

/// Defects 3 and 10: paddings of 2^20 and i64::MAX, negative strides and a zero kernel are
/// refused by name before anything is allocated; a padding within range whose output would
/// be terabytes is refused by the ceiling.
#[test]
fn window_attributes_are_range_checked_and_sizes_held_to_the_ceiling() {
    let base = proto("nn/minionn-mnist-b.onnx");
    let conv = position(&base, "Conv");
    let pool = position(&base, "AveragePool");
    let cases: [(usize, AttributeProto, &str); 8] = [
        (conv, ints("pads", &[1 << 20; 4]), "pads"),
        (conv, ints("pads", &[i64::MAX; 4]), "pads"),
        (conv, ints("pads", &[-1, 0, 0, 0]), "pads"),
        (conv, ints("strides", &[-1, -1]), "strides"),
        (conv, ints("strides", &[0, 1]), "strides"),
        (pool, ints("kernel_shape", &[0, 2]), "kernel_shape"),
        (
            conv,
            ints("pads", &[60_000; 4]),
            "larger than a tensor may be",
        ),
        // Declared real, holding integers: read as declared (strip removes it as a number).
        (conv, mistyped("strides", &[2, 2]), "of type FLOAT"),
    ];
    for (at, attribute, named) in cases {
        let mut m = base.clone();
        set(&mut m.graph.as_mut().unwrap().node[at], attribute.clone());
        let err = import::from_bytes(&bytes(&m), "hostile").unwrap_err();
        eprintln!("{err}");
        assert!(
            matches!(err, Error::Node { .. }) && err.to_string().contains(named),
            "{:?}: {err}",
            attribute.ints
        );
    }

    // An input of 2^48 elements (each axis within range) is refused before any node uses it.
    let mut m = base.clone();
    let input = &mut m.graph.as_mut().unwrap().input[0];
    let Some(Type::TensorType(tensor)) = input.type_.as_mut().and_then(|t| t.value.as_mut()) else {
        unreachable!("the model's input is a tensor")
    };
    for d in tensor.shape.as_mut().unwrap().dim.iter_mut().skip(1) {
        d.value = Some(Dim::DimValue(1 << 16));
    }
    let err = import::from_bytes(&bytes(&m), "huge input").unwrap_err();
    assert!(err.to_string().contains("the sample at most"), "{err}");

    // A model built in code is held to the same ceiling by the compiler and the evaluator.
    let mut model = import::from_bytes(&bytes(&base), "b").unwrap();
    let out = model.nodes[0].output;
    if let Op::Conv(c) = &mut model.nodes[0].op {
        c.window.pads = [1 << 19; 4];
    }
    model.shapes[out] = vec![16, 1 << 20, 1 << 20];
    let fixed = Fixed::new(32, 10).unwrap();
    let err = secure::compile(&model, fixed, secure::Options::new(Protocol::ALL[0])).unwrap_err();
    assert!(err.to_string().contains("ceiling"), "{err}");
    assert!(Plain::new(&model, fixed).is_err());
}

/// A chain of `n` Relu nodes after R_S's first Relu.
fn relu_chain(n: usize) -> Vec<u8> {
    let mut m = proto("tests/minionn-R_S_opset13.onnx");
    let relu = position(&m, "Relu");
    let g = m.graph.as_mut().unwrap();
    let first = g.node[relu].output[0].clone();
    let mut chain = Vec::with_capacity(n);
    let mut last = first.clone();
    for i in 0..n {
        let out = format!("chain{i}");
        chain.push(node("Relu", &[&last], &out));
        last = out;
    }
    for later in &mut g.node[relu + 1..] {
        for input in later.input.iter_mut().filter(|i| **i == first) {
            *input = last.clone();
        }
    }
    let tail = g.node.split_off(relu + 1);
    g.node.extend(chain);
    g.node.extend(tail);
    bytes(&m)
}

/// Defect 7: import is one pass over the nodes (a graph at the node limit imports; the
/// importer this replaced took 10 s for 32 000 nodes and grew with their square), and 100 000
/// nodes are refused by the limit.
#[test]
fn import_is_linear_and_the_node_count_is_limited() {
    let at_limit = CEILING.nodes - 10;
    let model = import::from_bytes(&relu_chain(at_limit), "long").unwrap();
    assert_eq!(model.nodes.len(), at_limit + 4);
    let err = import::from_bytes(&relu_chain(100_000), "longer").unwrap_err();
    assert!(err.to_string().contains("100006 nodes"), "{err}");
}

/// Defect 14: the zeros a stripped file stands for are bounded in all.
#[test]
fn a_stripped_file_cannot_ask_for_more_zeros_than_the_bound() {
    let arch = strip::strip(&bytes(&proto("tests/minionn-R_S_opset13.onnx")), "m").unwrap();
    let mut m = ModelProto::decode(&*arch).unwrap();
    let gemm = position(&m, "Gemm");
    let g = m.graph.as_mut().unwrap();
    let w = g.node[gemm].input[1].clone();
    let t = g.initializer.iter_mut().find(|t| t.name == w).unwrap();
    t.dims = vec![1 << 14, 1 << 13];
    let small = bytes(&m);
    assert!(small.len() < 2000, "{} bytes", small.len());
    let err = import::from_bytes(&small, "zeros").unwrap_err();
    assert!(err.to_string().contains("zeros"), "{err}");
}

/// Defect 9: Gemm's alpha and beta must be finite, a variance plus epsilon positive, the
/// folded weights finite; weights and inputs beyond the fixed-point range are refused with
/// the largest value named, and inputs can be clipped instead.
#[test]
fn numbers_must_be_finite_and_fit_the_ring() {
    let base = proto("tests/minionn-R_S_opset13.onnx");
    let gemm = position(&base, "Gemm");
    for (attribute, named) in [
        (float("alpha", f32::NAN), "alpha"),
        (float("beta", f32::INFINITY), "beta"),
    ] {
        let mut m = base.clone();
        set(&mut m.graph.as_mut().unwrap().node[gemm], attribute);
        let err = import::from_bytes(&bytes(&m), "m").unwrap_err();
        assert!(err.to_string().contains(named), "{err}");
    }
    // A BatchNormalization after the first Gemm: a negative variance is refused, and so is a
    // scale that folds into infinite weights.
    for (scale, variance, named) in [(1.0, -1.0, "variance"), (3e38, 0.0, "finite")] {
        let mut m = base.clone();
        let g = m.graph.as_mut().unwrap();
        let y = g.node[gemm].output[0].clone();
        for later in &mut g.node[gemm + 1..] {
            for input in later.input.iter_mut().filter(|i| **i == y) {
                *input = "bn".into();
            }
        }
        for (name, v) in [("s", scale), ("b", 0.0), ("mu", 0.0), ("var", variance)] {
            g.initializer.push(tensor(name, &[100], &[v; 100]));
        }
        let bn = node("BatchNormalization", &[&y, "s", "b", "mu", "var"], "bn");
        g.node.insert(gemm + 1, bn);
        let err = import::from_bytes(&bytes(&m), "bn").unwrap_err();
        assert!(err.to_string().contains(named), "{err}");
    }

    // Weights of 1e30 import (they are finite) but do not fit fixed point.
    let mut m = base.clone();
    set(
        &mut m.graph.as_mut().unwrap().node[gemm],
        float("alpha", 1e30),
    );
    let big = import::from_bytes(&bytes(&m), "big").unwrap();
    let fixed = Fixed::new(32, 10).unwrap();
    let err = Plain::new(&big, fixed).err().unwrap();
    assert!(err.to_string().contains("largest magnitude"), "{err}");
    let err = secure::compile(&big, fixed, secure::Options::new(Protocol::ALL[0])).unwrap_err();
    assert!(err.to_string().contains("largest magnitude"), "{err}");

    // Inputs: NaN refused; 1e6 beyond ℓ = 32, f = 10 (2^11) refused, or clipped.
    let model = import::from_bytes(&bytes(&base), "m").unwrap();
    let plain = Plain::new(&model, fixed).unwrap();
    let mut x = digit();
    x[3] = f32::NAN;
    assert!(plain.run(&x).unwrap_err().to_string().contains("finite"));
    x[3] = 1e6;
    let err = plain.run(&x).unwrap_err();
    assert!(err.to_string().contains("2048"), "{err}");
    assert_eq!(fixed.clip(&mut x).unwrap(), 1);
    assert!(x[3] < 2048.0);
    plain.run(&x).unwrap();
    x[3] = f32::NAN;
    assert!(fixed.clip(&mut x).is_err());
}
