//! The deep networks of the zoo (VASA's CrypTFlow2 experiments, MobileNetV2 and V3,
//! EfficientNet-B0, BERT-Tiny, BERT-Base, ViT-Tiny): their small
//! versions run privately and equal fixed point; every one, full size too, is written as ONNX,
//! read back to the same outputs, and evaluated in fixed point close to float.

mod common;

use std::time::Instant;
use tessera_nn::eval::{Plain, argmax, max_difference};
use tessera_nn::fixed::{Arith, Fixed, Float};
use tessera_nn::model::Model;
use tessera_nn::secure::{self, Protocol};
use tessera_nn::{export, import, zoo};
use tessera_testkit::numbers;

const DEEP: [&str; 11] = [
    "resnet50",
    "squeezenet1.1",
    "squeezenet-cifar",
    "densenet121",
    "mobilenetv2",
    "mobilenetv3-small",
    "efficientnet-b0",
    "resnet32-cifar",
    "bert-tiny",
    "bert-base",
    "vit-tiny",
];

/// The fixed point the deep networks take: ℓ = 64, f = 16 (CrypTFlow2 runs ResNet-50 at 37
/// bits and scale 12; 32 bits lose the class of the deepest ones here).
fn deep_fixed() -> Fixed {
    Fixed::new(64, 16).unwrap()
}

/// How far fixed point may be from float: 2 % of the logits' scale (the error grows with the
/// depth and the logits' magnitude; measured at most 0.25 % for ResNet-50's small version).
fn tolerance(logits: &[f32]) -> f32 {
    0.02 * (1.0 + logits.iter().fold(0f32, |m, v| m.max(v.abs())))
}

/// The largest difference between fixed point and float on `x`, whether their classes agree,
/// and the tolerance.
fn fixed_against_float(model: &Model, fixed: Fixed, x: &[f32]) -> (f32, bool, f32) {
    let want = Plain::new(model, Float).unwrap().run(x).unwrap();
    let got = Plain::new(model, fixed).unwrap().run(x).unwrap();
    let diff = got
        .iter()
        .zip(&want)
        .map(|(&g, &w)| (fixed.decode(g) - w).abs())
        .fold(0.0, f32::max);
    (
        diff,
        argmax(&fixed, &got) == argmax(&Float, &want),
        tolerance(&want),
    )
}

fn private(model: &Model, fixed: Fixed, protocol: Protocol, x: &[f32]) -> Vec<u64> {
    common::private(model, fixed, secure::Options::new(protocol), x).0
}

#[test]
fn small_deep_networks_run_privately_and_equal_fixed_point() {
    for name in DEEP {
        let small = format!("{name}-small");
        let model = zoo::network(&small, 1).unwrap();
        let x = numbers(2, model.input_len());
        let fixed = deep_fixed();
        let (off, same, tolerance) = fixed_against_float(&model, fixed, &x);
        assert!(
            off < tolerance && same,
            "{small}: fixed point {off} from float"
        );
        let want = Plain::new(&model, fixed).unwrap().run(&x).unwrap();
        for protocol in [Protocol::AB, Protocol::AlphaBeta] {
            let start = Instant::now();
            let got = private(&model, fixed, protocol, &x);
            let diff = max_difference(&fixed, &want, &got);
            let p = protocol.name();
            let nodes = model.nodes.len();
            eprintln!(
                "{small} {p}: {nodes} nodes, {:?}, {diff} from fixed point",
                start.elapsed()
            );
            assert!(diff < tolerance, "{small} {p}: {diff}");
            assert_eq!(argmax(&fixed, &got), argmax(&fixed, &want), "{small} {p}");
        }
    }
}

/// The networks whose full size takes half a minute here to build and evaluate in float and
/// fixed point (BERT-Base: 11 GFLOP per input, four evaluations, 326 MB of ONNX): their full
/// size in the ignored tests.
const HEAVY: [&str; 1] = ["bert-base"];

#[test]
fn deep_networks_round_trip_through_onnx() {
    for name in DEEP {
        if !HEAVY.contains(&name) {
            round_trip(name);
        }
        round_trip(&format!("{name}-small"));
    }
}

#[test]
#[ignore = "half a minute and 2 GB: run by .ci/run with the other ignored tests"]
fn heavy_networks_round_trip_through_onnx() {
    for name in HEAVY {
        round_trip(name);
    }
}

/// `name` written as ONNX and read back computes what it did (in float, to rounding), and in
/// fixed point close to float with its class.
fn round_trip(name: &str) {
    let start = Instant::now();
    let model = zoo::network(name, 1).unwrap();
    let built = start.elapsed();
    let bytes = export::to_onnx(&model).unwrap();
    let back = import::from_bytes(&bytes, name).unwrap();
    let x = numbers(3, model.input_len());
    let want = Plain::new(&model, Float).unwrap().run(&x).unwrap();
    let got = Plain::new(&back, Float).unwrap().run(&x).unwrap();
    // A per-token dense layer's bias comes back as an Add after its MatMul, as PyTorch
    // writes it: the same sums, rounded in another order.
    let rounding = 1e-4 * tolerance(&want);
    let off = max_difference(&Float, &got, &want);
    assert!(off <= rounding, "{name}: {off} from what it computed");
    let (off, same, tolerance) = fixed_against_float(&back, deep_fixed(), &x);
    eprintln!(
        "{name}: built in {built:?}, {} MB of ONNX, fixed point {off} from float, all in {:?}",
        bytes.len() >> 20,
        start.elapsed()
    );
    assert!(
        off < tolerance && same,
        "{name}: fixed point {off} from float"
    );
}

/// A Y protocol on an ImageNet network would plan every garbled circuit at once: refused by
/// name before anything of that size is allocated, while MiniONN-CIFAR still compiles.
#[test]
fn y_protocols_refuse_networks_too_large_to_garble_at_once() {
    let big = zoo::network("squeezenet1.1", 1).unwrap();
    for protocol in [Protocol::AY, Protocol::AlphaY] {
        let options = secure::Options::new(protocol);
        let e = secure::compile(&big, deep_fixed(), options).err().unwrap();
        assert!(e.to_string().contains("use a+b or alpha+beta"), "{e}");
    }
    assert!(secure::compile(&big, deep_fixed(), secure::Options::new(Protocol::AB)).is_ok());
    let cifar = zoo::network("minionn-cifar", 1).unwrap();
    let options = secure::Options::new(Protocol::AY);
    assert!(secure::compile(&cifar, deep_fixed(), options).is_ok());
}
