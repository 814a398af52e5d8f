//! The models in data/tests and data/nn (and, in the tests marked `#[ignore]`, every model in
//! ../shared/models): import, plaintext evaluation in float and fixed point on the first MNIST
//! test digits, BatchNormalization folding, stripping, and the importer's errors
//! on graphs it must refuse.

use std::path::{Path, PathBuf};
use tessera_nn::data::{Idx, Normalise};
use tessera_nn::eval::{Plain, argmax};
use tessera_nn::fixed::{Fixed, Float};
use tessera_nn::model::{Op, Sub};
use tessera_nn::onnx::{Message, ModelProto, NodeProto};
use tessera_nn::{Error, import, strip};

/// The reference data beside the clone: read only by tests marked `#[ignore]`, which `.ci/run`
/// runs with `--ignored`.
fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// The repository's own copies (`data/tests`, `data/nn`) of the models a fresh clone tests.
fn local(name: &str) -> Option<PathBuf> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let file = match name {
        "S.onnx" => "tests/minionn-S.onnx",
        "R_S.onnx" => "tests/minionn-R_S.onnx",
        "R_S_opset13.onnx" => "tests/minionn-R_S_opset13.onnx",
        "crypten_lenet_cifar10.onnx" => "tests/crypten-lenet-cifar10.onnx",
        "crypten_tfe_networkB_minionn_mnist_bnfolded.onnx" => "nn/minionn-mnist-b.onnx",
        _ => return None,
    };
    Some(data.join(file))
}

/// A model by its name in ../shared/models: the repository's copy where there is one.
fn model_path(name: &str) -> PathBuf {
    if let Some(path) = local(name) {
        return path;
    }
    let dir = if name.starts_with("crypten") {
        "crypten-derived"
    } else {
        "minionn-ssgaalto"
    };
    shared().join("models").join(dir).join(name)
}

/// Every MNIST model of ../shared/models.
const MNIST_MODELS: [&str; 12] = [
    "S.onnx",
    "S_opset13.onnx",
    "R_S.onnx",
    "R_S_opset13.onnx",
    "R2_S.onnx",
    "R2_S_opset13.onnx",
    "crypten_tfe_networkA_mnist.onnx",
    "crypten_tfe_networkA_mnist_bnfolded.onnx",
    "crypten_tfe_networkB_minionn_mnist.onnx",
    "crypten_tfe_networkB_minionn_mnist_bnfolded.onnx",
    "crypten_tfe_networkC_lenet_mnist.onnx",
    "crypten_tfe_networkC_lenet_mnist_bnfolded.onnx",
];

/// The first `n` (at most 256) MNIST test digits, normalised, and their labels, from the
/// repository's copy.
fn digits(n: usize) -> (Vec<Vec<f32>>, Vec<usize>) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/tests");
    let images = Idx::load(&data.join("mnist-t10k-256-images.idx3-ubyte")).unwrap();
    let labels = Idx::load(&data.join("mnist-t10k-256-labels.idx1-ubyte")).unwrap();
    assert_eq!(images.dims, [256, 28, 28]);
    let x = (0..n)
        .map(|i| Normalise::MNIST.apply(images.item(i).unwrap()))
        .collect();
    let y = (0..n)
        .map(|i| usize::from(labels.item(i).unwrap()[0]))
        .collect();
    (x, y)
}

#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn every_model_imports_with_its_layers() {
    let kinds = |name: &str| -> Vec<&'static str> {
        let m = import::load(&model_path(name)).unwrap();
        assert_eq!(m.output_len(), 10, "{name}");
        m.nodes
            .iter()
            .map(|n| n.op.kind())
            .filter(|k| *k != "Reshape")
            .collect()
    };
    assert_eq!(kinds("S.onnx"), ["Gemm"]);
    assert_eq!(kinds("R2_S.onnx"), ["Gemm", "Relu", "Gemm", "Relu", "Gemm"]);
    let b = [
        "Conv",
        "Relu",
        "AveragePool",
        "Conv",
        "Relu",
        "AveragePool",
        "Gemm",
        "Relu",
        "Gemm",
    ];
    assert_eq!(kinds("crypten_tfe_networkB_minionn_mnist.onnx"), b);
    let cifar = import::load(&model_path("crypten_lenet_cifar10.onnx")).unwrap();
    assert_eq!(cifar.shapes[cifar.input], [3, 32, 32]);
    let k: Vec<_> = cifar.nodes.iter().map(|n| n.op.kind()).collect();
    assert_eq!(k.iter().filter(|k| **k == "MaxPool").count(), 2);
    // MiniONN's graphs end in Softmax then Log: the client's to apply.
    let s = import::load(&model_path("S.onnx")).unwrap();
    assert_eq!(s.client_side, ["Softmax", "Log"]);
    assert!(s.has_weights);
}

/// Float and fixed point classify the first 100 digits alike with each of `models`.
fn fixed_point_agrees_with_float(models: &[&str]) {
    let (x, labels) = digits(100);
    for &name in models {
        let m = import::load(&model_path(name)).unwrap();
        let float = Plain::new(&m, Float).unwrap();
        let classes: Vec<usize> = x
            .iter()
            .map(|x| argmax(&Float, &float.run(x).unwrap()))
            .collect();
        let correct = classes.iter().zip(&labels).filter(|(a, b)| a == b).count();
        assert!(correct >= 89, "{name}: float accuracy {correct}/100");
        for (bits, frac, need) in [(64, 16, 100), (32, 9, 100)] {
            let fixed = Fixed::new(bits, frac).unwrap();
            let plain = Plain::new(&m, fixed).unwrap();
            let agree = x
                .iter()
                .zip(&classes)
                .filter(|(x, c)| argmax(&fixed, &plain.run(x).unwrap()) == **c)
                .count();
            eprintln!(
                "{name}: float {correct}/100 correct; fixed ℓ={bits} f={frac} agrees on {agree}/100"
            );
            assert!(agree >= need, "{name} ℓ={bits} f={frac}: {agree}/100");
        }
    }
}

#[test]
fn fixed_point_agrees_with_float_on_the_first_100_digits() {
    fixed_point_agrees_with_float(&[
        "S.onnx",
        "R_S.onnx",
        "R_S_opset13.onnx",
        "crypten_tfe_networkB_minionn_mnist_bnfolded.onnx",
    ]);
}

#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn fixed_point_agrees_with_float_for_every_shared_model() {
    fixed_point_agrees_with_float(&MNIST_MODELS);
}

#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn batch_norm_folding_matches_the_files_folded_offline() {
    let (x, _) = digits(10);
    for net in ["A_mnist", "B_minionn_mnist", "C_lenet_mnist"] {
        let bn = import::load(&model_path(&format!("crypten_tfe_network{net}.onnx"))).unwrap();
        let folded = import::load(&model_path(&format!(
            "crypten_tfe_network{net}_bnfolded.onnx"
        )))
        .unwrap();
        assert_eq!(
            bn.nodes.len(),
            folded.nodes.len(),
            "{net}: every BatchNormalization folded"
        );
        let (p, q) = (
            Plain::new(&bn, Float).unwrap(),
            Plain::new(&folded, Float).unwrap(),
        );
        for x in &x {
            let (a, b) = (p.run(x).unwrap(), q.run(x).unwrap());
            let diff = a
                .iter()
                .zip(&b)
                .map(|(u, v)| (u - v).abs())
                .fold(0.0, f32::max);
            assert!(diff < 1e-3, "{net}: logits differ by {diff}");
        }
    }
}

/// The IR 2 / opset 2 files and their opset 13 re-encodings give the same logits.
fn old_and_new_opsets_agree(nets: &[&str]) {
    let (x, _) = digits(5);
    for net in nets {
        let old = import::load(&model_path(&format!("{net}.onnx"))).unwrap();
        let new = import::load(&model_path(&format!("{net}_opset13.onnx"))).unwrap();
        let (p, q) = (
            Plain::new(&old, Float).unwrap(),
            Plain::new(&new, Float).unwrap(),
        );
        for x in &x {
            assert_eq!(p.run(x).unwrap(), q.run(x).unwrap(), "{net}");
        }
    }
}

#[test]
fn old_and_new_opsets_give_the_same_logits() {
    old_and_new_opsets_agree(&["R_S"]);
}

#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn old_and_new_opsets_give_the_same_logits_for_every_shared_model() {
    old_and_new_opsets_agree(&["S", "R_S", "R2_S"]);
}

fn proto(name: &str) -> ModelProto {
    ModelProto::decode(&*std::fs::read(model_path(name)).unwrap()).unwrap()
}

fn bytes(m: &ModelProto) -> Vec<u8> {
    m.encode_to_vec()
}

#[test]
fn stripped_architecture_has_the_shapes_and_no_weights() {
    let path = model_path("crypten_tfe_networkB_minionn_mnist_bnfolded.onnx");
    let full = std::fs::read(&path).unwrap();
    let arch = strip::strip(&full, "B").unwrap();
    assert!(
        arch.len() < full.len() / 10,
        "{} of {} bytes",
        arch.len(),
        full.len()
    );
    let (m, s) = (
        import::from_bytes(&full, "full").unwrap(),
        import::from_bytes(&arch, "arch").unwrap(),
    );
    assert!(!s.has_weights && m.has_weights);
    assert_eq!(m.shapes, s.shapes);
    let kinds =
        |m: &tessera_nn::model::Model| m.nodes.iter().map(|n| n.op.kind()).collect::<Vec<_>>();
    assert_eq!(kinds(&m), kinds(&s));
    for n in &s.nodes {
        if let Op::Dense(d) = &n.op {
            assert!(d.weight.iter().all(|&w| w == 0.0));
        }
    }
    assert!(matches!(Plain::new(&s, Float), Err(Error::Input(_))));
    // The file's weights really are gone: no 4-byte run of the first weight remains.
    let first = match &m.nodes[0].op {
        Op::Conv(c) => c.weight[0].to_le_bytes(),
        _ => unreachable!(),
    };
    assert!(!arch.windows(4).any(|w| w == first));
}

#[test]
fn unsupported_operators_and_shapes_are_named() {
    let mut m = proto("R_S_opset13.onnx");
    let relu = m
        .graph
        .as_ref()
        .unwrap()
        .node
        .iter()
        .position(|n| n.op_type == "Relu")
        .unwrap();
    m.graph.as_mut().unwrap().node[relu].op_type = "STFT".into();
    let err = import::from_bytes(&bytes(&m), "stft").unwrap_err();
    // The file's nodes have no names: the node is named by the tensor it writes.
    let name = format!(
        "#{relu} writing {:?}",
        m.graph.as_ref().unwrap().node[relu].output[0]
    );
    let text = err.to_string();
    assert!(matches!(err, Error::Unsupported { .. }), "{text}");
    eprintln!("{text}");
    assert!(
        text.contains("\"STFT\"") && text.contains("supported: Gemm") && text.contains(&name),
        "{text}"
    );

    let mut m = proto("crypten_tfe_networkB_minionn_mnist_bnfolded.onnx");
    let conv = m
        .graph
        .as_ref()
        .unwrap()
        .node
        .iter()
        .position(|n| n.op_type == "Conv")
        .unwrap();
    let group = tessera_nn::onnx::AttributeProto {
        name: "group".into(),
        i: Some(2),
        type_: tessera_nn::onnx::AttributeType::Int as i32,
        ..Default::default()
    };
    m.graph.as_mut().unwrap().node[conv].attribute.push(group);
    let err = import::from_bytes(&bytes(&m), "groups").unwrap_err();
    eprintln!("{err}");
    assert!(
        err.to_string().contains("into 2 groups") && err.to_string().contains("\"conv1_1\""),
        "{err}"
    );
    // An operator the parser does not know, with a name in the file.
    let mut m = proto("R_S_opset13.onnx");
    let g = m.graph.as_mut().unwrap();
    g.node[relu].op_type = "FancyActivation".into();
    g.node[relu].name = "my_layer".into();
    let err = import::from_bytes(&bytes(&m), "custom").unwrap_err();
    eprintln!("{err}");
    assert!(
        err.to_string().contains("my_layer") && err.to_string().contains("FancyActivation"),
        "{err}"
    );

    for junk in [
        &b"not an onnx file"[..],
        &[0x0a, 0xff, 0xff, 0xff, 0x0f][..],
        &[],
    ] {
        let err = import::from_bytes(junk, "junk").unwrap_err();
        eprintln!("{err}");
        assert!(matches!(err, Error::Parse { .. }));
    }
    let missing = import::load(Path::new("/nonexistent/model.onnx")).unwrap_err();
    assert!(matches!(missing, Error::Io { .. }));
}

#[test]
fn graphs_are_dags_with_identity_and_dropout_as_aliases() {
    let (x, _) = digits(3);
    let base = import::load(&model_path("R_S_opset13.onnx")).unwrap();
    let plain = Plain::new(&base, Float).unwrap();

    // relu → Identity → Dropout → the next Gemm: the same logits.
    let mut m = proto("R_S_opset13.onnx");
    let g = m.graph.as_mut().unwrap();
    let relu = g.node.iter().position(|n| n.op_type == "Relu").unwrap();
    let r = g.node[relu].output[0].clone();
    let node = |op: &str, inputs: &[&str], output: &str| NodeProto {
        op_type: op.into(),
        name: format!("inserted_{op}"),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.to_owned()],
        ..Default::default()
    };
    for n in g.node.iter_mut().skip(relu + 1) {
        n.input
            .iter_mut()
            .filter(|i| **i == r)
            .for_each(|i| *i = "dropped".into());
    }
    g.node.insert(relu + 1, node("Identity", &[&r], "same"));
    g.node
        .insert(relu + 2, node("Dropout", &["same"], "dropped"));
    let aliased = import::from_bytes(&bytes(&m), "aliases").unwrap();
    let p = Plain::new(&aliased, Float).unwrap();
    for x in &x {
        assert_eq!(p.run(x).unwrap(), plain.run(x).unwrap());
    }

    // relu read twice: Sub(r, r) = 0, so the logits are the last Gemm's bias.
    let mut m = proto("R_S_opset13.onnx");
    let g = m.graph.as_mut().unwrap();
    for n in g.node.iter_mut().skip(relu + 1) {
        n.input
            .iter_mut()
            .filter(|i| **i == r)
            .for_each(|i| *i = "zero".into());
    }
    g.node.insert(relu + 1, node("Sub", &[&r, &r], "zero"));
    let dag = import::from_bytes(&bytes(&m), "dag").unwrap();
    assert!(dag.nodes.iter().any(|n| n.op == Op::Sub(Sub)));
    let bias = match &dag
        .nodes
        .iter()
        .rev()
        .find(|n| matches!(n.op, Op::Dense(_)))
        .unwrap()
        .op
    {
        Op::Dense(d) => d.bias.clone(),
        _ => unreachable!(),
    };
    let p = Plain::new(&dag, Float).unwrap();
    assert_eq!(p.run(&x[0]).unwrap(), bias);
}

/// A model names its input normalisation in the `tessera.normalise` metadata entry; the
/// stripped architecture keeps it; a malformed value is named.
#[test]
fn normalisation_comes_from_the_models_metadata() {
    use tessera_nn::data::METADATA_KEY;
    let plain = bytes(&proto("R_S_opset13.onnx"));
    assert_eq!(Normalise::from_model(&plain, "m").unwrap(), None);
    let with = |value: &str| {
        let mut m = proto("R_S_opset13.onnx");
        m.metadata_props.push(Default::default());
        let entry = m.metadata_props.last_mut().unwrap();
        entry.key = METADATA_KEY.into();
        entry.value = value.into();
        bytes(&m)
    };
    let half = with("half");
    assert_eq!(
        Normalise::from_model(&half, "m").unwrap(),
        Some(Normalise::HALF)
    );
    let arch = strip::strip(&half, "m").unwrap();
    assert_eq!(
        Normalise::from_model(&arch, "a").unwrap(),
        Some(Normalise::HALF)
    );
    let custom = Normalise::from_model(&with(" 0.25, 2 "), "m")
        .unwrap()
        .unwrap();
    assert_eq!((custom.mean, custom.std), (0.25, 2.0));
    for bad in ["0.5", "0.5,0", "imagenet", "nan,1"] {
        let e = Normalise::from_model(&with(bad), "m")
            .unwrap_err()
            .to_string();
        assert!(e.contains(METADATA_KEY), "{bad}: {e}");
    }
}
