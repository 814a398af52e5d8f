//! Private inference between two sessions over memory against the plaintext fixed-point
//! reference: the client's logits within the truncations' error of the reference, and the
//! same class, for MNIST models with dense, convolution, ReLU and pooling layers.

use std::path::{Path, PathBuf};
use std::thread;
use tessera_nn::data::{Idx, Normalise};
use tessera_nn::eval::{Plain, argmax};
use tessera_nn::fixed::{Arith, Fixed};
use tessera_nn::secure::{self, CLIENT, SERVER};
use tessera_nn::{import, strip};
use tessera_protocols::hybrid::Plain as Shared;
use tessera_protocols::{Session, SessionConfig};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn digit(i: usize) -> Vec<f32> {
    let images = Idx::load(&shared().join("datasets/mnist/t10k-images.idx3-ubyte")).unwrap();
    Normalise::MNIST.apply(images.item(i).unwrap())
}

/// The client's logits from a private inference of `path` (the client holding only the
/// stripped architecture) on `x`.
fn private(path: &Path, fixed: Fixed, x: &[f32]) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap();
    let arch = strip::strip(&bytes, "arch").unwrap();
    let (n0, n1) = tessera_net::memory::pair().unwrap();
    let input: Vec<u64> = x.iter().map(|&v| fixed.encode(v)).collect();
    let server = thread::spawn(move || {
        let model = import::from_bytes(&bytes, "model").unwrap();
        let c = secure::compile(&model, fixed).unwrap();
        let mut s = Session::new(n0, SessionConfig::default()).unwrap();
        s.run(|s| {
            let prepared = c.program.setup_with(s, CLIENT, &c.weights)?;
            c.program.online(s, CLIENT, prepared, &[])
        })
        .unwrap()
    });
    let model = import::from_bytes(&arch, "arch").unwrap();
    let c = secure::compile(&model, fixed).unwrap();
    assert!(c.weights.is_empty());
    let mut s = Session::new(n1, SessionConfig::default()).unwrap();
    let out = s
        .run(|s| {
            let prepared = c.program.setup_with(s, SERVER, &[])?;
            c.program
                .online(s, SERVER, prepared, &[(c.input, Shared::Ring(input))])
        })
        .unwrap();
    assert_eq!(
        server.join().unwrap(),
        vec![None],
        "the server learns nothing"
    );
    match out.into_iter().next() {
        Some(Some(Shared::Ring(v))) => v,
        other => panic!("no logits: {other:?}"),
    }
}

fn check(name: &str, dir: &str, digits: &[usize]) {
    let path = shared().join("models").join(dir).join(name);
    let fixed = Fixed::new(64, 13).unwrap();
    let model = import::load(&path).unwrap();
    let plain = Plain::new(&model, fixed).unwrap();
    for &i in digits {
        let x = digit(i);
        let want = plain.run(&x).unwrap();
        let got = private(&path, fixed, &x);
        let diff = want
            .iter()
            .zip(&got)
            .map(|(&a, &b)| (fixed.decode(a) - fixed.decode(b)).abs())
            .fold(0.0, f32::max);
        eprintln!("{name} digit {i}: max logit difference {diff}");
        assert!(diff < 0.05, "{name} digit {i}: logits differ by {diff}");
        assert_eq!(
            argmax(&fixed, &got),
            argmax(&fixed, &want),
            "{name} digit {i}"
        );
    }
}

#[test]
fn dense_relu_network_matches_fixed_point() {
    check("R2_S.onnx", "minionn-ssgaalto", &[0, 1]);
}

#[test]
fn convolution_and_average_pooling_match_fixed_point() {
    check(
        "crypten_tfe_networkB_minionn_mnist.onnx",
        "crypten-derived",
        &[0],
    );
}

#[test]
fn max_pooling_network_matches_fixed_point() {
    // CrypTen's LeNet for CIFAR-10 (MaxPool), on a synthetic image: no CIFAR data is at hand,
    // and the check is against the same network in plaintext.
    let path = shared().join("models/crypten-derived/crypten_lenet_cifar10.onnx");
    let fixed = Fixed::new(64, 13).unwrap();
    let model = import::load(&path).unwrap();
    let x: Vec<f32> = (0..3 * 32 * 32)
        .map(|i| ((i * 37 % 255) as f32 / 255.0 - 0.5) / 0.5)
        .collect();
    let want = Plain::new(&model, fixed).unwrap().run(&x).unwrap();
    let got = private(&path, fixed, &x);
    let diff = want
        .iter()
        .zip(&got)
        .map(|(&a, &b)| (fixed.decode(a) - fixed.decode(b)).abs())
        .fold(0.0, f32::max);
    assert!(diff < 0.05, "logits differ by {diff}");
    assert_eq!(argmax(&fixed, &got), argmax(&fixed, &want));
}
