//! Concat, Pad, Clip and grouped and depthwise Conv (issue 47's operators) in a network with
//! two branches: private inference equals the fixed-point reference in every protocol, one
//! input and a batch, and fixed point agrees with float.

mod common;

use tessera_nn::eval::{Plain, argmax, max_difference};
use tessera_nn::fixed::{Arith, Fixed, Float};
use tessera_nn::infer;
use tessera_nn::model::{
    Clip, Concat, Conv, Dense, Model, Node, Op, Pad, Relu, Reshape, Tensor, Window,
};
use tessera_nn::secure::{self, Protocol};
use tessera_testkit::numbers;

/// A Conv of `ci` to `co` channels in `groups`, a `k × k` kernel padded by `pad`.
fn conv(seed: u64, (ci, co, k, pad): (usize, usize, usize, usize), groups: usize) -> Op {
    Op::Conv(Conv {
        groups,
        in_channels: ci,
        out_channels: co,
        window: Window {
            kernel: [k, k],
            stride: [1, 1],
            pads: [pad; 4],
        },
        weight: numbers(seed, co * ci / groups * k * k),
        bias: numbers(seed + 1, co),
    })
}

fn node(name: &str, op: Op, inputs: Vec<usize>, output: usize) -> Node {
    Node {
        name: name.into(),
        op,
        inputs,
        output,
    }
}

/// x [2,6,6] → a: Conv 3×3 → ReLU [3,6,6]; b: Conv 3×3 in 2 groups → Clip(0, 0.5) [2,6,6];
/// Concat on channels [5,6,6] → Pad [5,7,7] → depthwise 1×1 Conv (a BatchNormalization on its
/// own) → Clip(−0.75, ·) → Dense to 4; `seed` picks the weights.
fn two_branches(seed: u64) -> Model {
    let pad = Op::Pad(Pad(vec![(0, 0), (1, 0), (0, 1)]));
    let dense = Op::Dense(Dense {
        inputs: 5 * 7 * 7,
        outputs: 4,
        weight: numbers(seed + 7, 4 * 5 * 7 * 7)
            .iter()
            .map(|w| w / 4.0)
            .collect(),
        bias: numbers(seed + 8, 4),
    });
    Model {
        input_name: "x".into(),
        input: 0,
        shapes: vec![
            vec![2, 6, 6],
            vec![3, 6, 6],
            vec![3, 6, 6],
            vec![2, 6, 6],
            vec![2, 6, 6],
            vec![5, 6, 6],
            vec![5, 7, 7],
            vec![5, 7, 7],
            vec![5 * 7 * 7],
            vec![4],
            vec![5, 7, 7],
        ],
        nodes: vec![
            node("a", conv(seed, (2, 3, 3, 1), 1), vec![0], 1),
            node("a_relu", Op::Relu(Relu), vec![1], 2),
            node("b", conv(seed + 3, (2, 2, 3, 1), 2), vec![0], 3),
            node(
                "b_clip",
                Op::Clip(Clip {
                    lo: Some(0.0),
                    hi: Some(0.5),
                }),
                vec![3],
                4,
            ),
            node("join", Op::Concat(Concat { axis: 0 }), vec![2, 4], 5),
            node("pad", pad, vec![5], 6),
            node("bn", conv(seed + 5, (5, 5, 1, 0), 5), vec![6], 10),
            node(
                "floor",
                Op::Clip(Clip {
                    lo: Some(-0.75),
                    hi: None,
                }),
                vec![10],
                7,
            ),
            node("flat", Op::Reshape(Reshape), vec![7], 8),
            node("fc", dense, vec![8], 9),
        ],
        output: 9,
        client_side: Vec::new(),
        has_weights: true,
        lookup: None,
    }
}

/// The client's logits of one private inference over memory.
fn private(model: &Model, fixed: Fixed, options: secure::Options, x: &[f32]) -> Vec<u64> {
    common::private(model, fixed, options, x).0
}

/// How far private inference may be from the fixed-point reference: each truncation may be
/// one unit in the last place off (exact ones round up or down), two at the input of the last
/// layer (the depthwise Conv's and its own), which its weights carry into the logits; a wrong
/// truncation would be 2^(ℓ−2f) off.
fn tolerance(model: &Model, fixed: Fixed) -> f32 {
    let Some(Op::Dense(fc)) = model.nodes.last().map(|n| &n.op) else {
        panic!("the two-branch network ends in a Dense layer");
    };
    let widest = fc
        .weight
        .chunks_exact(fc.inputs)
        .map(|row| row.iter().map(|w| w.abs()).sum::<f32>())
        .fold(0.0, f32::max);
    (2.0 * widest + 2.0) / (1u64 << fixed.frac()) as f32
}

#[test]
fn concat_pad_clip_and_grouped_conv_equal_fixed_point_in_every_protocol() {
    for (seed, (bits, frac)) in [(1, (64, 13)), (2, (32, 9))] {
        let model = two_branches(seed);
        let fixed = Fixed::new(bits, frac).unwrap();
        let x = numbers(seed + 20, 72);
        let want = Plain::new(&model, fixed).unwrap().run(&x).unwrap();
        let float = Plain::new(&model, Float).unwrap().run(&x).unwrap();
        let off = want
            .iter()
            .zip(&float)
            .map(|(&w, &f)| (fixed.decode(w) - f).abs())
            .fold(0.0, f32::max);
        assert!(off < 0.02, "ℓ = {bits}: fixed point {off} from float");
        for protocol in Protocol::ALL {
            let got = private(&model, fixed, secure::Options::new(protocol), &x);
            let diff = max_difference(&fixed, &want, &got);
            let name = protocol.name();
            let bound = tolerance(&model, fixed);
            assert!(
                diff < bound,
                "ℓ = {bits}, {name}: {diff} from fixed point (≥ {bound})"
            );
            assert_eq!(argmax(&fixed, &got), argmax(&fixed, &want), "{name}");
        }
    }
}

#[test]
fn a_batch_through_concat_and_pad_equals_each_input_alone() {
    let model = two_branches(3);
    let fixed = Fixed::new(64, 13).unwrap();
    let xs: Vec<Vec<f32>> = (0..3).map(|k| numbers(40 + k, 72)).collect();
    let plain = Plain::new(&model, fixed).unwrap();
    for protocol in [Protocol::AB, Protocol::AlphaBeta] {
        let options = secure::Options {
            batch: 3,
            ..secure::Options::new(protocol)
        };
        let got = private(&model, fixed, options, &xs.concat());
        for (x, got) in xs.iter().zip(got.chunks_exact(4)) {
            let want = plain.run(x).unwrap();
            let diff = max_difference(&fixed, &want, got);
            assert!(
                diff < tolerance(&model, fixed),
                "{}: {diff}",
                protocol.name()
            );
        }
    }
}

/// Written as ONNX and read back, a network computes what it did: the two-branch network and
/// MOTION2NX's built-in ones (the deep ones: `tests/zoo.rs`).
#[test]
fn exported_networks_import_to_the_same_outputs() {
    let mut models = vec![("two branches".to_owned(), two_branches(4))];
    for name in ["cryptonets", "minionn-mnist", "minionn-cifar"] {
        models.push((name.to_string(), tessera_nn::zoo::network(name, 5).unwrap()));
    }
    for (name, model) in models {
        let bytes = tessera_nn::export::to_onnx(&model).unwrap();
        let back = tessera_nn::import::from_bytes(&bytes, &name).unwrap();
        assert_eq!(back.nodes.len(), model.nodes.len(), "{name}");
        let x = numbers(9, model.input_len());
        let want = Plain::new(&model, Float).unwrap().run(&x).unwrap();
        let got = Plain::new(&back, Float).unwrap().run(&x).unwrap();
        assert_eq!(got, want, "{name}");
        let arch = tessera_nn::strip::strip(&bytes, &name).unwrap();
        let arch = tessera_nn::import::from_bytes(&arch, &name).unwrap();
        assert_eq!(
            arch.shapes, back.shapes,
            "{name}: the stripped architecture"
        );
    }
}

/// The report by operator class (VASA Table 7's rows) adds up to the whole: online traffic and
/// rounds exactly, the setup with its shared parts; each class is where its layers are.
#[test]
fn the_operator_classes_add_up_to_the_whole() {
    let model = two_branches(6);
    let fixed = Fixed::new(32, 9).unwrap();
    let x = numbers(60, 72);
    let options = secure::Options::new(Protocol::AB);
    let (_, report) = common::private(&model, fixed, options, &x);
    let classes = &report.classes;
    let names: Vec<&str> = classes.iter().map(|k| k.class).collect();
    assert_eq!(names, infer::CLASSES);
    let online: tessera_net::Stats = classes.iter().map(|k| k.traffic).sum();
    assert_eq!(online.bytes_sent, report.online().bytes_sent);
    let rounds: usize = classes.iter().map(|k| k.rounds).sum();
    assert_eq!(rounds, report.online_rounds());
    let shared: u64 = report.shared_setup.iter().map(|p| p.2.bytes_sent).sum();
    let own: u64 = classes.iter().map(|k| k.setup.bytes_sent).sum();
    assert_eq!(own + shared, report.setup.bytes_sent);
    let class = |name: &str| classes.iter().find(|k| k.class == name).unwrap();
    // Convs, the BatchNormalization (a depthwise 1×1) and the dense layer have setup of their
    // own; ReLU and Clip send online; no max pooling here.
    for linear in ["Conv", "BN", "MatMul"] {
        assert!(class(linear).setup.bytes_sent > 0, "{linear}");
    }
    assert!(class("ReLU").traffic.bytes_sent > 0 && class("ReLU").rounds > 0);
    assert_eq!(class("MaxPool").traffic.bytes_sent, 0);
}

/// A constant joined to computed tokens (ViT's class token): x [3, 4] → Concat with a learned
/// [1, 4] row first → ReLU. Private inference equals fixed point in every protocol, on one
/// input and a batch of two; the export reads back to the same layers and outputs; the
/// stripped architecture holds the row as zeros (it is the server's) and compiles to the same
/// program.
#[test]
fn a_constant_token_joins_computed_ones() {
    let token = numbers(12, 4);
    let net = Model::from_layers(
        vec![3, 4],
        vec![
            (Op::Tensor(Tensor(token.clone())), vec![], vec![1, 4]),
            (Op::Concat(Concat { axis: 0 }), vec![1, 0], vec![4, 4]),
            (Op::Relu(Relu), vec![2], vec![4, 4]),
        ],
    );
    let fixed = Fixed::new(32, 10).unwrap();
    let x = numbers(13, 12);
    let want = Plain::new(&net, fixed).unwrap().run(&x).unwrap();
    let float = Plain::new(&net, Float).unwrap().run(&x).unwrap();
    let expected: Vec<f32> = token.iter().chain(&x).map(|v| v.max(0.0)).collect();
    assert_eq!(float, expected);
    for protocol in Protocol::ALL {
        let got = private(&net, fixed, secure::Options::new(protocol), &x);
        let diff = max_difference(&fixed, &want, &got);
        assert!(diff < 2e-3, "{}: {diff}", protocol.name());
        let batch = secure::Options {
            batch: 2,
            ..secure::Options::new(protocol)
        };
        let two: Vec<f32> = x.iter().chain(&x).copied().collect();
        let got = private(&net, fixed, batch, &two);
        assert!(max_difference(&fixed, &[want.clone(), want.clone()].concat(), &got) < 2e-3);
    }
    let bytes = tessera_nn::export::to_onnx(&net).unwrap();
    let back = tessera_nn::import::from_bytes(&bytes, "token").unwrap();
    let kinds = |m: &Model| m.nodes.iter().map(|n| n.op.kind()).collect::<Vec<_>>();
    assert_eq!(kinds(&back), kinds(&net));
    assert_eq!(Plain::new(&back, Float).unwrap().run(&x).unwrap(), float);
    let arch = tessera_nn::strip::strip(&bytes, "token").unwrap();
    let arch = tessera_nn::import::from_bytes(&arch, "token").unwrap();
    assert_eq!(arch.nodes[0].op, Op::Tensor(Tensor(vec![0.0; 4])));
    let program = |m: &Model| {
        let c = secure::compile(m, fixed, secure::Options::new(Protocol::AB)).unwrap();
        c.program.fingerprint()
    };
    assert_eq!(program(&arch), program(&net));
}
