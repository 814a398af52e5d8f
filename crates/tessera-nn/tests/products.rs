//! Products of computed tensors and the operators around them (issue 60, item 1): Mul of two
//! computed tensors with broadcasting (a squeeze-excite block gated by a HardSigmoid made of
//! Mul by a constant, Add and Clip), Div and Mul by constants, Neg, ReduceMean, ReduceMax and
//! ReduceSum, Slice, Gather by constant indices, Expand, Unsqueeze, Where with constant
//! conditions. Private inference equals
//! the fixed-point reference in every protocol at ℓ = 32 and 64, fixed point agrees with
//! float, and the network written as ONNX reads back to the same outputs.

mod common;

use tessera_nn::eval::{Plain, argmax, max_difference};
use tessera_nn::fixed::{Arith, Fixed, Float};
use tessera_nn::model::{
    AddConst, Clip, Conv, Dense, Expand, Fill, Gather, GlobalAvgPool, Lookup, Model, Mul, Neg,
    Node, Op, Reduce, Reduction, Relu, Reshape, Scale, Slice, Where, Window,
};
use tessera_nn::secure::{self, Protocol, Truncation};
use tessera_testkit::numbers;

fn conv(seed: u64, (ci, co, k, pad): (usize, usize, usize, usize)) -> Op {
    Op::Conv(Conv {
        groups: 1,
        in_channels: ci,
        out_channels: co,
        window: Window {
            kernel: [k, k],
            stride: [1, 1],
            pads: [pad; 4],
        },
        weight: numbers(seed, co * ci * k * k)
            .iter()
            .map(|w| w / 2.0)
            .collect(),
        bias: numbers(seed + 1, co),
    })
}

fn reduce(reduction: Reduction, axes: Vec<usize>, keepdims: bool) -> Op {
    Op::Reduce(Reduce {
        reduction,
        axes,
        keepdims,
    })
}

/// The network, value by value: (operator, inputs, output shape); value 0 is the input
/// `[4, 5, 5]`.
fn layers(seed: u64) -> Vec<(Op, Vec<usize>, Vec<usize>)> {
    let hard_sigmoid_scale = Op::Scale(Scale {
        shape: vec![1, 1, 1],
        factors: vec![1.0 / 6.0],
    });
    vec![
        (conv(seed, (4, 4, 3, 1)), vec![0], vec![4, 5, 5]), // 1
        (Op::Relu(Relu), vec![1], vec![4, 5, 5]),           // 2
        (Op::GlobalAvgPool(GlobalAvgPool), vec![2], vec![4, 1, 1]),
        (conv(seed + 2, (4, 2, 1, 0)), vec![3], vec![2, 1, 1]), // 4
        (Op::Relu(Relu), vec![4], vec![2, 1, 1]),
        (conv(seed + 4, (2, 4, 1, 0)), vec![5], vec![4, 1, 1]), // 6
        (hard_sigmoid_scale, vec![6], vec![4, 1, 1]),
        (Op::AddConst(AddConst(vec![0.5; 4])), vec![7], vec![4, 1, 1]), // 8
        (
            Op::Clip(Clip {
                lo: Some(0.0),
                hi: Some(1.0),
            }),
            vec![8],
            vec![4, 1, 1],
        ),
        (Op::Mul(Mul), vec![2, 9], vec![4, 5, 5]), // 10: the excited channels
        (Op::Mul(Mul), vec![10, 1], vec![4, 5, 5]), // 11: times the pre-activation
        (Op::Neg(Neg), vec![11], vec![4, 5, 5]),
        (
            reduce(Reduction::Mean, vec![2], false),
            vec![12],
            vec![4, 5],
        ), // 13
        (
            Op::Scale(Scale {
                shape: vec![4, 1],
                factors: vec![0.5, -1.25, 2.0, 1.0 / 3.0],
            }),
            vec![13],
            vec![4, 5],
        ),
        (
            Op::Slice(Slice {
                ranges: vec![(0, 4, 1), (4, 3, -2)],
            }),
            vec![14],
            vec![4, 3],
        ), // 15
        (
            Op::Gather(Gather {
                axis: 0,
                indices: vec![3, 0, 2],
                indices_shape: vec![3],
            }),
            vec![15],
            vec![3, 3],
        ), // 16
        (Op::Expand(Expand), vec![16], vec![2, 3, 3]),
        (
            reduce(Reduction::Max, vec![2], true),
            vec![17],
            vec![2, 3, 1],
        ), // 18
        (reduce(Reduction::Sum, vec![0], false), vec![18], vec![3, 1]),
        (Op::Reshape(Reshape), vec![19], vec![3]), // 20
        (
            Op::Dense(Dense {
                inputs: 3,
                outputs: 2,
                weight: numbers(seed + 9, 6),
                bias: numbers(seed + 10, 2),
            }),
            vec![20],
            vec![2],
        ), // 21
        (
            Op::Where(Where {
                mask: vec![true, false],
                constant: Some(Fill {
                    first: false,
                    values: vec![0.0, -0.75],
                }),
            }),
            vec![21],
            vec![2],
        ),
        (Op::Neg(Neg), vec![21], vec![2]), // 23
        (
            Op::Where(Where {
                mask: vec![true, false],
                constant: None,
            }),
            vec![22, 23],
            vec![2],
        ), // 24: [21[0], −21[1]]
    ]
}

fn network(seed: u64) -> Model {
    Model::from_layers(vec![4, 5, 5], layers(seed))
}

#[test]
fn products_reductions_and_selections_equal_fixed_point_in_every_protocol() {
    for (seed, (bits, frac)) in [(1, (64, 14)), (2, (32, 9))] {
        let model = network(seed);
        let fixed = Fixed::new(bits, frac).unwrap();
        let x = numbers(seed + 20, 100);
        let want = Plain::new(&model, fixed).unwrap().run(&x).unwrap();
        let float = Plain::new(&model, Float).unwrap().run(&x).unwrap();
        let off = max_difference(
            &Float,
            &float,
            &want.iter().map(|&w| fixed.decode(w)).collect::<Vec<_>>(),
        );
        assert!(off < 0.05, "ℓ = {bits}: fixed point {off} from float");
        // Each truncation may be a unit off, carried through products and sums; a wrong one
        // would be 2^(ℓ − 2f) off.
        let bound = 64.0 / (1u64 << frac) as f32;
        for protocol in Protocol::ALL {
            let (got, _) = common::private(&model, fixed, secure::Options::new(protocol), &x);
            let diff = max_difference(&fixed, &want, &got);
            let name = protocol.name();
            assert!(diff < bound, "ℓ = {bits}, {name}: {diff} from fixed point");
            assert_eq!(argmax(&fixed, &got), argmax(&fixed, &want), "{name}");
        }
    }
}

/// Written as ONNX and read back (and stripped), the network computes what it did and keeps
/// its shapes; its costs count the products.
#[test]
fn the_network_round_trips_through_onnx() {
    let model = network(3);
    let bytes = tessera_nn::export::to_onnx(&model).unwrap();
    let back = tessera_nn::import::from_bytes(&bytes, "products").unwrap();
    assert_eq!(back.shapes, model.shapes);
    let x = numbers(9, model.input_len());
    let want = Plain::new(&model, Float).unwrap().run(&x).unwrap();
    let got = Plain::new(&back, Float).unwrap().run(&x).unwrap();
    assert_eq!(got, want);
    let arch = tessera_nn::strip::strip(&bytes, "products").unwrap();
    let arch = tessera_nn::import::from_bytes(&arch, "products").unwrap();
    assert_eq!(arch.shapes, back.shapes);
    let products: usize = model.nodes.iter().map(|n| model.cost(n).products).sum();
    assert_eq!(products, 2 * 100);
}

/// A model that starts with the client's embedding lookup: written as ONNX (int64 ids, a
/// Gather of the table) it reads back to the same lookup and outputs; stripped, it keeps the
/// table (the client's) and loses the weights (the server's); ids outside the vocabulary are
/// refused by position.
#[test]
fn the_embedding_lookup_round_trips_and_survives_stripping() {
    let (vocabulary, tokens, width) = (5, 3, 4);
    let mut model = Model {
        input_name: "ids".into(),
        input: 0,
        output: 1,
        shapes: vec![vec![tokens, width], vec![tokens, 2]],
        nodes: vec![Node {
            name: "dense".into(),
            op: Op::Dense(Dense {
                inputs: width,
                outputs: 2,
                weight: numbers(41, 2 * width),
                bias: numbers(42, 2),
            }),
            inputs: vec![0],
            output: 1,
        }],
        client_side: Vec::new(),
        has_weights: true,
        lookup: Some(Lookup {
            ids: vec![tokens],
            vocabulary,
            table: numbers(43, vocabulary * width),
        }),
    };
    let ids = [4.0, 0.0, -1.0];
    let x = model.embed(&ids).unwrap();
    assert_eq!(x[..width], x[2 * width..], "−1 is the last row");
    let bytes = tessera_nn::export::to_onnx(&model).unwrap();
    let back = tessera_nn::import::from_bytes(&bytes, "lookup").unwrap();
    assert_eq!(back.lookup, model.lookup);
    let want = Plain::new(&model, Float).unwrap().run(&x).unwrap();
    let got = Plain::new(&back, Float).unwrap().run(&x).unwrap();
    assert!(max_difference(&Float, &want, &got) < 1e-5);
    let arch = tessera_nn::strip::strip(&bytes, "lookup").unwrap();
    let arch = tessera_nn::import::from_bytes(&arch, "lookup").unwrap();
    assert_eq!(arch.lookup, model.lookup);
    assert!(
        arch.nodes[0]
            .op
            .weights()
            .iter()
            .all(|w| w.iter().all(|&v| v == 0.0))
    );
    let err = model.embed(&[0.0, 5.0, 1.0]).unwrap_err().to_string();
    assert!(err.contains("token id 5 at 1"), "{err}");
    assert!(model.embed(&[0.5, 0.0, 0.0]).is_err());
    model.lookup.as_mut().unwrap().vocabulary = 4;
    assert!(model.check(&tessera_nn::model::CEILING).is_err());
}

/// Where values are large, SecureML's local truncation goes wrong and exact truncation does
/// not: x·x of 16 384 values in [−256, 256] at ℓ = 64, f = 20, then ReLU. A product's
/// truncation wraps with probability x²·2^40/2^63 (2^−8.6 on average: about 10 per run, none
/// with probability e^−10), and is then off by 2^(64−20) units, which ReLU sees as a negative
/// value and zeroes (the square, up to 65 536, is lost); the exact one is a unit apart at most.
#[test]
fn exact_truncation_holds_where_local_truncation_wraps() {
    let n = 16_384;
    let net = Model::from_layers(
        vec![n],
        vec![
            (Op::Mul(Mul), vec![0, 0], vec![n]),
            (Op::Relu(Relu), vec![1], vec![n]),
        ],
    );
    let fixed = Fixed::new(64, 20).unwrap();
    let x: Vec<f32> = numbers(11, n).iter().map(|v| 256.0 * v).collect();
    let want = Plain::new(&net, fixed).unwrap().run(&x).unwrap();
    let run = |truncation| {
        let options = secure::Options {
            truncation,
            ..secure::Options::new(Protocol::AB)
        };
        let (got, _) = common::private(&net, fixed, options, &x);
        max_difference(&fixed, &want, &got)
    };
    let exact = run(Truncation::Exact);
    assert!(exact < 1e-5, "exact truncation {exact} from fixed point");
    let local = run(Truncation::Local);
    assert!(
        local > 100.0,
        "local truncation only {local} from fixed point"
    );
}
