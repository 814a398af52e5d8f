//! The benchmark networks of MOTION2NX's tables (Braun et al., Tables 1-3) and of VASA's
//! CrypTFlow2 experiments (seed 000, Tables 7 and 9; [`nets`]) for which no trained weights
//! exist here: their architectures with seeded random weights (uniform in ±1/√fan-in for the
//! small sequential ones; He's bound and BatchNormalization statistics from a seeded input for
//! the deep ones, `graph`), so activations stay in the range of trained ones. Timing does not
//! depend on the weights; accuracy is measured on the trained models in `../shared/models`.
//! Each deep network also comes small (`NAME-small`: every width divided, a smaller input, the
//! same blocks), which CI runs privately.

mod graph;
pub mod nets;
pub mod operators;
pub mod transformers;

use crate::model::{AvgPool, Conv, Dense, MaxPool, Model, Node, Op, Pool, Relu, Reshape, Window};
use nets::Scale;
use tessera_core::{Block, Prg};

/// The built-in networks: name and what it is.
pub const NETWORKS: &[(&str, &str)] = &[
    (
        "cryptonets",
        "CryptoNets with ReLU (Table 1): Conv 5 5×5/2 pad 1, ReLU, FC 845-100, ReLU, FC 100-10",
    ),
    (
        "minionn-mnist",
        "MiniONN-MNIST (Table 2): Conv 16 5×5, ReLU, MaxPool 2, Conv 16 5×5, ReLU, MaxPool 2, FC 256-100, ReLU, FC 100-10",
    ),
    (
        "minionn-cifar",
        "MiniONN-CIFAR (Table 3): Conv 64 3×3 ×2, MeanPool 2, Conv 64 3×3 ×2, MeanPool 2, Conv 64 3×3, Conv 64 1×1, Conv 16 1×1 (each + ReLU), FC 1024-10",
    ),
    (
        "resnet50",
        "ResNet-50 (VASA Table 7), ImageNet 224×224: bottlenecks [3, 4, 6, 3], 1000 classes",
    ),
    (
        "squeezenet1.1",
        "SqueezeNet 1.1 (VASA Table 7), ImageNet 224×224: 8 fire modules, ceil-mode pools",
    ),
    (
        "squeezenet-cifar",
        "SqueezeNet for CIFAR-10 as in CrypTFlow2 (VASA Table 7), 32×32: Conv 64 3×3, 4 fire modules, 10 classes",
    ),
    (
        "densenet121",
        "DenseNet-121 (VASA Table 7), ImageNet 224×224: dense blocks [6, 12, 24, 16], growth 32",
    ),
    (
        "mobilenetv2",
        "MobileNetV2, ImageNet 224×224: inverted residuals, depthwise Convs, ReLU6",
    ),
    (
        "mobilenetv3-small",
        "MobileNetV3-Small, ImageNet 224×224: squeeze-and-excitation, HardSwish, HardSigmoid",
    ),
    (
        "efficientnet-b0",
        "EfficientNet-B0, ImageNet 224×224: MBConv blocks, squeeze-and-excitation, SiLU",
    ),
    (
        "bert-tiny",
        "BERT-Tiny, 128 tokens: 2 post-norm encoder blocks, hidden 128, 2 heads, GELU 512; input the embeddings' output",
    ),
    (
        "bert-base",
        "BERT-Base, 128 tokens: 12 post-norm encoder blocks, hidden 768, 12 heads, GELU 3072; input the embeddings' output",
    ),
    (
        "vit-tiny",
        "ViT-Tiny/16, ImageNet 224×224: 16×16 patches, 12 pre-norm blocks, hidden 192, 3 heads, mean-pooled",
    ),
    (
        "resnet32-cifar",
        "ResNet-32 for CIFAR-10, 32×32: 3 stages of 5 basic blocks, 16/32/64 channels",
    ),
];

/// What builds a deep network from a seed at a scale.
type Build = fn(u64, Scale) -> Model;

/// A deep network of [`NETWORKS`]: its builder, its input's side at full size, and the scale
/// of its small version.
struct Deep {
    name: &'static str,
    build: Build,
    side: usize,
    small: Scale,
}

/// The CIFAR networks' small versions: widths divided by 4, 16 × 16 inputs.
const SMALL_CIFAR: Scale = Scale { width: 4, side: 16 };

/// The deep networks.
const DEEP: &[Deep] = &[
    Deep {
        name: "resnet50",
        build: nets::resnet50,
        side: 224,
        small: SMALL_IMAGENET,
    },
    Deep {
        name: "squeezenet1.1",
        build: nets::squeezenet1_1,
        side: 224,
        small: SMALL_IMAGENET,
    },
    Deep {
        name: "squeezenet-cifar",
        build: nets::squeezenet_cifar,
        side: 32,
        small: SMALL_CIFAR,
    },
    Deep {
        name: "densenet121",
        build: nets::densenet121,
        side: 224,
        small: SMALL_IMAGENET,
    },
    Deep {
        name: "mobilenetv2",
        build: nets::mobilenetv2,
        side: 224,
        small: SMALL_IMAGENET,
    },
    Deep {
        name: "mobilenetv3-small",
        build: nets::mobilenetv3_small,
        side: 224,
        small: SMALL_IMAGENET,
    },
    Deep {
        name: "efficientnet-b0",
        build: nets::efficientnet_b0,
        side: 224,
        small: SMALL_EFFICIENTNET,
    },
    Deep {
        name: "bert-tiny",
        build: transformers::bert_tiny,
        side: 128,
        small: SMALL_SEQUENCE,
    },
    Deep {
        name: "bert-base",
        build: transformers::bert_base,
        side: 128,
        small: Scale {
            width: 16,
            side: 16,
        },
    },
    Deep {
        name: "vit-tiny",
        build: transformers::vit_tiny,
        side: 224,
        small: SMALL_VIT,
    },
    Deep {
        name: "resnet32-cifar",
        build: nets::resnet32_cifar,
        side: 32,
        small: SMALL_CIFAR,
    },
];

/// The transformers' small versions: widths divided by 4, 16 tokens (BERT-Base: by 16).
const SMALL_SEQUENCE: Scale = Scale { width: 4, side: 16 };

/// ViT's small version: widths divided by 4 on 32 × 32 (four patches).
const SMALL_VIT: Scale = Scale { width: 4, side: 32 };

/// EfficientNet-B0's small version: widths divided by 8 on 64 × 64 inputs. At 32 × 32 its
/// last stages see one place per channel, whose BatchNormalization statistics over the four
/// calibration inputs make the seeded network chaotic (logits in the thousands, float and
/// fixed point apart by 8 %), which says nothing of the protocols.
const SMALL_EFFICIENTNET: Scale = Scale { width: 8, side: 64 };

/// The ImageNet networks' small versions: widths divided by 16, 32 × 32 inputs.
const SMALL_IMAGENET: Scale = Scale {
    width: 16,
    side: 32,
};

/// A network being built, value by value.
struct Net {
    shapes: Vec<Vec<usize>>,
    nodes: Vec<Node>,
    prg: Prg,
}

impl Net {
    fn new(input: Vec<usize>, seed: u64) -> Self {
        Net {
            shapes: vec![input],
            nodes: Vec::new(),
            prg: Prg::from_seed_block(Block::from(u128::from(seed))),
        }
    }

    fn last(&self) -> usize {
        self.shapes.len() - 1
    }

    fn push(&mut self, op: Op, shape: Vec<usize>) {
        let input = self.last();
        self.nodes.push(Node {
            name: format!("{}{}", op.kind().to_lowercase(), self.nodes.len()),
            op,
            inputs: vec![input],
            output: input + 1,
        });
        self.shapes.push(shape);
    }

    /// `n` weights uniform in ±1/√fan_in.
    fn weights(&mut self, n: usize, fan_in: usize) -> Vec<f32> {
        let bound = 1.0 / (fan_in as f32).sqrt();
        (0..n)
            .map(|_| {
                let u = (self.prg.random_block().low() >> 40) as f32 / (1u64 << 24) as f32;
                (2.0 * u - 1.0) * bound
            })
            .collect()
    }

    fn conv(&mut self, out: usize, k: usize, stride: usize, pad: usize) {
        let &[c, h, w] = &self.shapes[self.last()][..] else {
            unreachable!("convolutions follow [C, H, W] values")
        };
        let window = Window {
            kernel: [k, k],
            stride: [stride, stride],
            pads: [pad; 4],
        };
        let [oh, ow] = window.output([h, w]).expect("the zoo's shapes fit");
        let fan_in = c * k * k;
        let conv = Conv {
            groups: 1,
            in_channels: c,
            out_channels: out,
            window,
            weight: self.weights(out * fan_in, fan_in),
            bias: self.weights(out, fan_in),
        };
        self.push(Op::Conv(conv), vec![out, oh, ow]);
        self.push(Op::Relu(Relu), vec![out, oh, ow]);
    }

    fn pool(&mut self, max: bool) {
        let &[c, h, w] = &self.shapes[self.last()][..] else {
            unreachable!("pools follow [C, H, W] values")
        };
        let window = Window {
            kernel: [2, 2],
            stride: [2, 2],
            pads: [0; 4],
        };
        let pool = Pool::new(window, false, false, [h, w]);
        let op = if max {
            Op::MaxPool(MaxPool(pool))
        } else {
            Op::AvgPool(AvgPool(pool))
        };
        self.push(op, vec![c, h / 2, w / 2]);
    }

    fn dense(&mut self, outputs: usize, relu: bool) {
        let inputs: usize = self.shapes[self.last()].iter().product();
        if self.shapes[self.last()].len() > 1 {
            self.push(Op::Reshape(Reshape), vec![inputs]);
        }
        let d = Dense {
            inputs,
            outputs,
            weight: self.weights(inputs * outputs, inputs),
            bias: self.weights(outputs, inputs),
        };
        self.push(Op::Dense(d), vec![outputs]);
        if relu {
            self.push(Op::Relu(Relu), vec![outputs]);
        }
    }

    fn model(self) -> Model {
        Model {
            input_name: "input".to_owned(),
            input: 0,
            output: self.shapes.len() - 1,
            shapes: self.shapes,
            nodes: self.nodes,
            client_side: Vec::new(),
            has_weights: true,
            lookup: None,
        }
    }
}

/// The network `name` (one of [`NETWORKS`], a deep one's `NAME-small`, or one operator of
/// [`operators::OPERATORS`]) with weights from `seed`.
pub fn network(name: &str, seed: u64) -> Option<Model> {
    if let Some(model) = operators::operator(name) {
        return Some(model);
    }
    let small = name.strip_suffix("-small");
    if let Some(deep) = DEEP.iter().find(|d| Some(d.name) == small) {
        return Some((deep.build)(seed, deep.small));
    }
    if let Some(deep) = DEEP.iter().find(|d| d.name == name) {
        let full = Scale {
            width: 1,
            side: deep.side,
        };
        return Some((deep.build)(seed, full));
    }
    let net = match name {
        "cryptonets" => {
            let mut n = Net::new(vec![1, 28, 28], seed);
            n.conv(5, 5, 2, 1);
            n.dense(100, true);
            n.dense(10, false);
            n
        }
        "minionn-mnist" => {
            let mut n = Net::new(vec![1, 28, 28], seed);
            n.conv(16, 5, 1, 0);
            n.pool(true);
            n.conv(16, 5, 1, 0);
            n.pool(true);
            n.dense(100, true);
            n.dense(10, false);
            n
        }
        "minionn-cifar" => {
            let mut n = Net::new(vec![3, 32, 32], seed);
            n.conv(64, 3, 1, 1);
            n.conv(64, 3, 1, 1);
            n.pool(false);
            n.conv(64, 3, 1, 1);
            n.conv(64, 3, 1, 1);
            n.pool(false);
            n.conv(64, 3, 1, 1);
            n.conv(64, 1, 1, 0);
            n.conv(16, 1, 1, 0);
            n.dense(10, false);
            n
        }
        _ => return None,
    };
    Some(net.model())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zoo_has_the_papers_shapes() {
        let sizes = |name: &str| {
            let m = network(name, 1).unwrap();
            let macs: usize = m.nodes.iter().map(|n| m.cost(n).multiplications).sum();
            (m.input_len(), m.output_len(), macs)
        };
        assert_eq!(
            sizes("cryptonets"),
            (784, 10, 5 * 25 * 169 + 845 * 100 + 1000)
        );
        assert_eq!(
            sizes("minionn-mnist"),
            (784, 10, 16 * 25 * 576 + 16 * 400 * 64 + 256 * 100 + 1000)
        );
        let cifar = 3 * 9 * 64 * 1024
            + 64 * 9 * 64 * (1024 + 256 + 256 + 64)
            + 64 * 64 * 64
            + 64 * 16 * 64
            + 1024 * 10;
        assert_eq!(sizes("minionn-cifar"), (3072, 10, cifar));
        assert!(network("lenet", 1).is_none());
        assert_eq!(network("cryptonets", 7), network("cryptonets", 7));
        assert_ne!(network("cryptonets", 7), network("cryptonets", 8));
    }
}
