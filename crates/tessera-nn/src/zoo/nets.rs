//! The networks of VASA's CrypTFlow2 experiments (seed 000, §4.3.4, Tables 7 and 9) and
//! MobileNetV2, as torchvision defines them (ResNet-50: He et al. 2016, bottlenecks with the
//! stride on the 3×3; SqueezeNet 1.1: Iandola et al., fire modules, ceil-mode pools;
//! DenseNet-121: Huang et al. 2017, BN-ReLU-Conv layers, growth 32; MobileNetV2: Sandler et
//! al. 2018, inverted residuals, ReLU6) and ResNet-32 for CIFAR (He et al. §4.2: 3 stages of
//! 5 basic blocks, 16/32/64 channels, 1×1 projections where the shape changes). A [`Scale`]
//! divides every width and sets the input's side: the small versions CI runs privately have
//! the same blocks.

use super::graph::{Gate, Graph, square};
use crate::model::Model;
use crate::model::Window;

/// Widths divided by `width`, inputs of `side × side`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Every layer's channels divided by this (at least 1 left).
    pub width: usize,
    /// The input's height and width.
    pub side: usize,
}

impl Scale {
    fn ch(self, c: usize) -> usize {
        (c / self.width).max(1)
    }
}

/// ResNet-50 on 3 × side × side, 1000 classes.
pub fn resnet50(seed: u64, s: Scale) -> Model {
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, s.ch(64), square(7, 2, 3), 1, true);
    let x = g.relu(x);
    let mut x = g.pool(x, square(3, 2, 1), true, false);
    for (stage, (width, blocks)) in [(64, 3), (128, 4), (256, 6), (512, 3)]
        .into_iter()
        .enumerate()
    {
        for b in 0..blocks {
            let stride = if b == 0 && stage > 0 { 2 } else { 1 };
            x = bottleneck(&mut g, x, s.ch(width), stride);
        }
    }
    let out = g.classify(x, 1000);
    g.model(out)
}

/// 1×1 to `width`, 3×3 (stride), 1×1 to 4·`width`, each with BN, ReLU after the first two
/// and after the sum with the shortcut (projected where the shape changes).
fn bottleneck(g: &mut Graph, x: usize, width: usize, stride: usize) -> usize {
    let out = 4 * width;
    let y = g.conv(x, width, square(1, 1, 0), 1, true);
    let y = g.relu(y);
    let y = g.conv(y, width, square(3, stride, 1), 1, true);
    let y = g.relu(y);
    let y = g.conv(y, out, square(1, 1, 0), 1, true);
    residual(g, x, y, stride)
}

/// ReLU of `y` plus the block's input `x`, projected by a 1×1 Conv (and BN) where the shape
/// changes.
fn residual(g: &mut Graph, x: usize, y: usize, stride: usize) -> usize {
    let out = g.shape(y)[0];
    let shortcut = if stride != 1 || g.shape(x)[0] != out {
        g.conv(x, out, square(1, stride, 0), 1, true)
    } else {
        x
    };
    let sum = g.add(y, shortcut);
    g.relu(sum)
}

/// ResNet-32 for CIFAR-10 on 3 × side × side.
pub fn resnet32_cifar(seed: u64, s: Scale) -> Model {
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, s.ch(16), square(3, 1, 1), 1, true);
    let mut x = g.relu(x);
    for (stage, width) in [16, 32, 64].into_iter().enumerate() {
        for b in 0..5 {
            let stride = if b == 0 && stage > 0 { 2 } else { 1 };
            let out = s.ch(width);
            let y = g.conv(x, out, square(3, stride, 1), 1, true);
            let y = g.relu(y);
            let y = g.conv(y, out, square(3, 1, 1), 1, true);
            x = residual(&mut g, x, y, stride);
        }
    }
    let out = g.classify(x, 10);
    g.model(out)
}

/// SqueezeNet 1.1 on 3 × side × side, 1000 classes (the published network has no
/// BatchNormalization: its Convs are scaled here by the calibration input's statistics, as
/// training leaves their outputs in range).
pub fn squeezenet1_1(seed: u64, s: Scale) -> Model {
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, s.ch(64), square(3, 2, 0), 1, true);
    let mut x = g.relu(x);
    let fires: [&[(usize, usize)]; 3] = [
        &[(16, 64), (16, 64)],
        &[(32, 128), (32, 128)],
        &[(48, 192), (48, 192), (64, 256), (64, 256)],
    ];
    for stage in fires {
        x = g.pool(x, square(3, 2, 0), true, true);
        for &(squeeze, expand) in stage {
            x = fire(&mut g, x, s.ch(squeeze), s.ch(expand));
        }
    }
    // The classifier: a 1×1 Conv to the classes, ReLU, global average.
    let y = g.conv(x, 1000, square(1, 1, 0), 1, true);
    let y = g.relu(y);
    let pooled = g.global_average(y);
    g.model(pooled)
}

/// SqueezeNet for CIFAR-10 as CrypTFlow2 runs it (EzPC's `Athos/Networks/SqueezeNetCIFAR10`)
/// on 3 × side × side, 10 classes: Conv 64 3×3, then twice a MaxPool 3×3/2 and two fire
/// modules (squeeze 32, expand 64, then 128), a 1×1 Conv to the classes, each Conv with
/// ReLU, and the global average. TensorFlow's SAME padding: a pool's odd row and column at
/// the end.
pub fn squeezenet_cifar(seed: u64, s: Scale) -> Model {
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, s.ch(64), square(3, 1, 1), 1, true);
    let mut x = g.relu(x);
    for expand in [64, 128] {
        let side = g.shape(x)[1];
        x = g.pool(x, same(3, 2, side), true, false);
        for _ in 0..2 {
            x = fire(&mut g, x, s.ch(32), s.ch(expand));
        }
    }
    let y = g.conv(x, 10, square(1, 1, 0), 1, true);
    let y = g.relu(y);
    let pooled = g.global_average(y);
    g.model(pooled)
}

/// A k×k window of stride `s` padded as TensorFlow's SAME pads a side of `n`: ⌈n/s⌉ outputs,
/// the padding split with its odd pixel at the end.
fn same(k: usize, s: usize, n: usize) -> Window {
    let total = ((n.div_ceil(s) - 1) * s + k).saturating_sub(n);
    let (before, after) = (total / 2, total - total / 2);
    Window {
        kernel: [k, k],
        stride: [s, s],
        pads: [before, before, after, after],
    }
}

/// Squeeze 1×1, then expand 1×1 and 3×3 side by side, joined; ReLU after each Conv.
fn fire(g: &mut Graph, x: usize, squeeze: usize, expand: usize) -> usize {
    let y = g.conv(x, squeeze, square(1, 1, 0), 1, true);
    let y = g.relu(y);
    let a = g.conv(y, expand, square(1, 1, 0), 1, true);
    let a = g.relu(a);
    let b = g.conv(y, expand, square(3, 1, 1), 1, true);
    let b = g.relu(b);
    g.concat(&[a, b])
}

/// DenseNet-121 on 3 × side × side, 1000 classes.
pub fn densenet121(seed: u64, s: Scale) -> Model {
    let (growth, bottleneck) = (s.ch(32), 4 * s.ch(32));
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, s.ch(64), square(7, 2, 3), 1, true);
    let x = g.relu(x);
    let mut x = g.pool(x, square(3, 2, 1), true, false);
    for (block, layers) in [6, 12, 24, 16].into_iter().enumerate() {
        for _ in 0..layers {
            // BN-ReLU-Conv 1×1 (its BN folded)-ReLU-Conv 3×3, joined to what came before.
            let y = g.batch_norm(x);
            let y = g.relu(y);
            let y = g.conv(y, bottleneck, square(1, 1, 0), 1, true);
            let y = g.relu(y);
            let y = g.conv(y, growth, square(3, 1, 1), 1, false);
            x = g.concat(&[x, y]);
        }
        if block < 3 {
            // Transition: BN-ReLU-Conv 1×1 to half the channels, average pool 2.
            let y = g.batch_norm(x);
            let y = g.relu(y);
            let half = g.shape(y)[0] / 2;
            let y = g.conv(y, half, square(1, 1, 0), 1, false);
            x = g.pool(y, square(2, 2, 0), false, false);
        }
    }
    let y = g.batch_norm(x);
    let y = g.relu(y);
    let out = g.classify(y, 1000);
    g.model(out)
}

/// MobileNetV2 (width 1) on 3 × side × side, 1000 classes.
pub fn mobilenetv2(seed: u64, s: Scale) -> Model {
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, s.ch(32), square(3, 2, 1), 1, true);
    let mut x = g.relu6(x);
    let blocks = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ];
    for (expand, width, repeat, stride) in blocks {
        for r in 0..repeat {
            let stride = if r == 0 { stride } else { 1 };
            x = inverted_residual(&mut g, x, (expand, s.ch(width)), stride);
        }
    }
    let y = g.conv(x, s.ch(1280), square(1, 1, 0), 1, true);
    let y = g.relu6(y);
    let out = g.classify(y, 1000);
    g.model(out)
}

/// MobileNetV3-Small (Howard et al., ICCV 2019, Table 2; as torchvision defines it) on 3 ×
/// side × side, 1000 classes: inverted residuals with squeeze-and-excitation gated by
/// HardSigmoid, ReLU in the first blocks and HardSwish after, a 1024-wide classifier.
pub fn mobilenetv3_small(seed: u64, s: Scale) -> Model {
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, s.ch(16), square(3, 2, 1), 1, true);
    let mut x = g.hard_swish(x);
    // Kernel, expanded and output channels, squeeze-and-excitation, HardSwish, stride.
    let blocks = [
        (3, 16, 16, true, false, 2),
        (3, 72, 24, false, false, 2),
        (3, 88, 24, false, false, 1),
        (5, 96, 40, true, true, 2),
        (5, 240, 40, true, true, 1),
        (5, 240, 40, true, true, 1),
        (5, 120, 48, true, true, 1),
        (5, 144, 48, true, true, 1),
        (5, 288, 96, true, true, 2),
        (5, 576, 96, true, true, 1),
        (5, 576, 96, true, true, 1),
    ];
    for (k, expanded, out, se, hard_swish, stride) in blocks {
        let block = Bneck {
            kernel: k,
            expanded: s.ch(expanded),
            out: s.ch(out),
            squeeze: se.then(|| s.ch(divisible_by_8(expanded / 4))),
            hard_swish,
            stride,
        };
        x = bneck(&mut g, x, block);
    }
    let y = g.conv(x, s.ch(576), square(1, 1, 0), 1, true);
    let y = g.hard_swish(y);
    let y = g.global_average(y);
    let y = g.dense(y, s.ch(1024));
    let y = g.hard_swish(y);
    let out = g.dense(y, 1000);
    g.model(out)
}

/// EfficientNet-B0 (Tan and Le, ICML 2019, Table 1; as torchvision defines it) on 3 × side ×
/// side, 1000 classes: MBConv blocks with squeeze-and-excitation, SiLU throughout.
pub fn efficientnet_b0(seed: u64, s: Scale) -> Model {
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, s.ch(32), square(3, 2, 1), 1, true);
    let mut x = g.silu(x);
    // Expansion, kernel, stride, output channels, repeats.
    let stages = [
        (1, 3, 1, 16, 1),
        (6, 3, 2, 24, 2),
        (6, 5, 2, 40, 2),
        (6, 3, 2, 80, 3),
        (6, 5, 1, 112, 3),
        (6, 5, 2, 192, 4),
        (6, 3, 1, 320, 1),
    ];
    for (expand, k, stride, out, repeats) in stages {
        for r in 0..repeats {
            let stride = if r == 0 { stride } else { 1 };
            x = mbconv(&mut g, x, (expand, k, stride), s.ch(out));
        }
    }
    let y = g.conv(x, s.ch(1280), square(1, 1, 0), 1, true);
    let y = g.silu(y);
    let out = g.classify(y, 1000);
    g.model(out)
}

/// EfficientNet's MBConv: expand 1×1 (×`expand`, BN, SiLU) where it widens, depthwise k×k
/// (stride, BN, SiLU), squeeze-and-excitation to a quarter of the block's input channels,
/// project 1×1 to `out` (BN, linear), plus the input where the shape stays.
fn mbconv(
    g: &mut Graph,
    x: usize,
    (expand, k, stride): (usize, usize, usize),
    out: usize,
) -> usize {
    let c = g.shape(x)[0];
    let hidden = c * expand;
    let mut y = x;
    if expand != 1 {
        y = g.conv(y, hidden, square(1, 1, 0), 1, true);
        y = g.silu(y);
    }
    y = g.conv(y, hidden, square(k, stride, (k - 1) / 2), hidden, true);
    y = g.silu(y);
    y = g.squeeze_excite(y, (c / 4).max(1), Gate::Smooth);
    let y = g.conv(y, out, square(1, 1, 0), 1, true);
    if stride == 1 && c == out {
        g.add(x, y)
    } else {
        y
    }
}

/// torchvision's `_make_divisible(v, 8)`: the nearest multiple of 8, at least 8, never below
/// 90 % of `v`.
fn divisible_by_8(v: usize) -> usize {
    let d = ((v + 4) / 8 * 8).max(8);
    if d * 10 < v * 9 { d + 8 } else { d }
}

/// One block of MobileNetV3.
struct Bneck {
    kernel: usize,
    expanded: usize,
    out: usize,
    /// The squeeze-and-excitation's channels, if it has one.
    squeeze: Option<usize>,
    /// HardSwish (else ReLU) after the expansion and the depthwise Conv.
    hard_swish: bool,
    stride: usize,
}

/// Expand 1×1 (BN, activation) where the width changes, depthwise k×k (stride, BN,
/// activation), squeeze-and-excitation, project 1×1 (BN, linear), plus the input where the
/// shape stays.
fn bneck(g: &mut Graph, x: usize, b: Bneck) -> usize {
    let c = g.shape(x)[0];
    let act = |g: &mut Graph, y: usize| {
        if b.hard_swish {
            g.hard_swish(y)
        } else {
            g.relu(y)
        }
    };
    let mut y = x;
    if b.expanded != c {
        y = g.conv(y, b.expanded, square(1, 1, 0), 1, true);
        y = act(g, y);
    }
    let window = square(b.kernel, b.stride, (b.kernel - 1) / 2);
    y = g.conv(y, b.expanded, window, b.expanded, true);
    y = act(g, y);
    if let Some(squeeze) = b.squeeze {
        y = g.squeeze_excite(y, squeeze, Gate::Hard);
    }
    let y = g.conv(y, b.out, square(1, 1, 0), 1, true);
    if b.stride == 1 && c == b.out {
        g.add(x, y)
    } else {
        y
    }
}

/// Expand 1×1 (×`expand`, with BN and ReLU6), depthwise 3×3 (stride, BN, ReLU6), project
/// 1×1 to `out` (BN, linear), plus the input where the shape stays.
fn inverted_residual(
    g: &mut Graph,
    x: usize,
    (expand, out): (usize, usize),
    stride: usize,
) -> usize {
    let c = g.shape(x)[0];
    let hidden = c * expand;
    let mut y = x;
    if expand != 1 {
        y = g.conv(y, hidden, square(1, 1, 0), 1, true);
        y = g.relu6(y);
    }
    let y = g.conv(y, hidden, square(3, stride, 1), hidden, true);
    let y = g.relu6(y);
    let y = g.conv(y, out, square(1, 1, 0), 1, true);
    if stride == 1 && c == out {
        g.add(x, y)
    } else {
        y
    }
}
