//! Networks with branches (residual additions, concatenations) built value by value, with
//! the activations of a few seeded inputs computed as they are added: each Conv followed by a
//! BatchNormalization gets the statistics those inputs give its channels (mean and variance,
//! folded into the Conv as an inference export folds them), and a BatchNormalization on its
//! own (DenseNet's pre-activations) becomes the depthwise 1×1 Conv the importer makes of it.
//! So activations keep the scale of a trained network's through any depth, which the fixed
//! point of the secure layers relies on.

use crate::fixed::Float;
use crate::model::{Add, AvgPool, Clip, Concat, Conv, Dense, GlobalAvgPool, HardSigmoid};
use crate::model::{Function, HardSwish, MaxPool, Mul, Smooth};
use crate::model::{Model, Node, Op, Pool, Relu, Reshape, Window};
use crate::op::Io;
use tessera_core::{Block, Prg};

/// BatchNormalization's ε.
const EPS: f32 = 1e-5;
/// The seeded inputs the statistics come from (a channel of a 1 × 1 value still has as many
/// samples).
const CALIBRATION: usize = 4;

/// A network being built; values are indices, the input 0.
pub(super) struct Graph {
    shapes: Vec<Vec<usize>>,
    nodes: Vec<Node>,
    /// The seeded inputs' activations of each value, input after input.
    acts: Vec<Vec<f32>>,
    prg: Prg,
}

/// A squeeze-and-excitation's activation and gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Gate {
    /// ReLU, then HardSigmoid (MobileNetV3).
    Hard,
    /// SiLU, then Sigmoid (EfficientNet).
    Smooth,
}

/// A window of `k × k`, stride `s`, padding `p` on every side.
pub(super) fn square(k: usize, s: usize, p: usize) -> Window {
    Window {
        kernel: [k, k],
        stride: [s, s],
        pads: [p; 4],
    }
}

impl Graph {
    /// A network on inputs of `shape`, its weights and calibration input from `seed`.
    pub(super) fn new(shape: Vec<usize>, seed: u64) -> Self {
        let mut prg = Prg::from_seed_block(Block::from(u128::from(seed)));
        let n: usize = shape.iter().product();
        // Unit variance, as a normalised image's.
        let input = uniform(&mut prg, CALIBRATION * n, 3f32.sqrt());
        Graph {
            shapes: vec![shape],
            nodes: Vec::new(),
            acts: vec![input],
            prg,
        }
    }

    /// The shape of value `v`.
    pub(super) fn shape(&self, v: usize) -> &[usize] {
        &self.shapes[v]
    }

    /// Adds `op` on `inputs`, of output `shape`; its value.
    pub(super) fn push(&mut self, op: Op, inputs: Vec<usize>, shape: Vec<usize>) -> usize {
        let out = self.shapes.len();
        let act = self.evaluated(&op, &inputs, &shape);
        self.nodes.push(Node {
            name: format!("{}{}", op.kind().to_lowercase(), self.nodes.len()),
            op,
            inputs,
            output: out,
        });
        self.shapes.push(shape);
        self.acts.push(act);
        out
    }

    /// Calibration input `i`'s activation of value `v`.
    fn one(&self, v: usize, i: usize) -> &[f32] {
        let n = self.acts[v].len() / CALIBRATION;
        &self.acts[v][i * n..(i + 1) * n]
    }

    /// `op` on the activations of `inputs`, of output `shape`, in float, calibration input
    /// after calibration input.
    fn evaluated(&self, op: &Op, inputs: &[usize], shape: &[usize]) -> Vec<f32> {
        let e = op.evaluator::<Float>();
        let constants = e.encode(&Float);
        let io = Io {
            name: "layer",
            inputs: inputs.iter().map(|&v| self.shapes[v].as_slice()).collect(),
            output: shape,
        };
        (0..CALIBRATION)
            .flat_map(|i| {
                let args: Vec<&[f32]> = inputs.iter().map(|&v| self.one(v, i)).collect();
                e.eval(&Float, &constants, &args, &io)
            })
            .collect()
    }

    /// A Conv of `out` channels in `groups` on `x` with its window, then (if `norm`) a
    /// BatchNormalization of the statistics the calibration input gives, folded into it.
    pub(super) fn conv(
        &mut self,
        x: usize,
        out: usize,
        w: Window,
        groups: usize,
        norm: bool,
    ) -> usize {
        let &[c, h, wd] = self.shape(x) else {
            unreachable!("convolutions follow [C, H, W] values")
        };
        let [oh, ow] = w.output([h, wd]).expect("the zoo's shapes fit");
        let fan_in = c / groups * w.kernel[0] * w.kernel[1];
        // He's uniform bound: variance 2/fan_in, kept through a ReLU.
        let bound = (6.0 / fan_in as f32).sqrt();
        let mut conv = Conv {
            in_channels: c,
            out_channels: out,
            groups,
            window: w,
            weight: uniform(&mut self.prg, out * fan_in, bound),
            bias: vec![0.0; out],
        };
        if norm {
            let y = self.evaluated(&Op::Conv(conv.clone()), &[x], &[out, oh, ow]);
            for ch in 0..out {
                let (mean, var) = moments(&channel(&y, ch, out, oh * ow));
                let a = 1.0 / (var + EPS).sqrt();
                conv.weight[ch * fan_in..(ch + 1) * fan_in]
                    .iter_mut()
                    .for_each(|v| *v *= a);
                conv.bias[ch] = -mean * a;
            }
        }
        self.push(Op::Conv(conv), vec![x], vec![out, oh, ow])
    }

    /// A BatchNormalization on its own (no Conv before it to fold into), of the calibration
    /// input's statistics: a depthwise 1×1 Conv.
    pub(super) fn batch_norm(&mut self, x: usize) -> usize {
        let shape = self.shape(x).to_vec();
        let plane = shape[1..].iter().product();
        let (weight, bias) = (0..shape[0])
            .map(|ch| {
                let (mean, var) = moments(&channel(&self.acts[x], ch, shape[0], plane));
                let a = 1.0 / (var + EPS).sqrt();
                (a, -mean * a)
            })
            .unzip();
        let conv = Conv {
            in_channels: shape[0],
            out_channels: shape[0],
            groups: shape[0],
            window: square(1, 1, 0),
            weight,
            bias,
        };
        self.push(Op::Conv(conv), vec![x], shape)
    }

    pub(super) fn relu(&mut self, x: usize) -> usize {
        let shape = self.shape(x).to_vec();
        self.push(Op::Relu(Relu), vec![x], shape)
    }

    /// ReLU6: Clip(0, 6).
    pub(super) fn relu6(&mut self, x: usize) -> usize {
        let shape = self.shape(x).to_vec();
        self.push(
            Op::Clip(Clip {
                lo: Some(0.0),
                hi: Some(6.0),
            }),
            vec![x],
            shape,
        )
    }

    /// HardSwish: `x·clip(x/6 + 1/2, 0, 1)`.
    pub(super) fn hard_swish(&mut self, x: usize) -> usize {
        let shape = self.shape(x).to_vec();
        self.push(Op::HardSwish(HardSwish), vec![x], shape)
    }

    /// SiLU (swish): `x·σ(x)`, as PyTorch exports it (Sigmoid, then Mul).
    pub(super) fn silu(&mut self, x: usize) -> usize {
        let shape = self.shape(x).to_vec();
        let s = self.push(
            Op::Smooth(Smooth(Function::Sigmoid)),
            vec![x],
            shape.clone(),
        );
        self.push(Op::Mul(Mul), vec![x, s], shape)
    }

    /// Squeeze-and-excitation (Hu et al., CVPR 2018): the channels' means through a 1×1 Conv
    /// to `squeeze` channels, its activation, a 1×1 Conv back, the gate, and `x` times that,
    /// channel by channel. MobileNetV3 takes ReLU and HardSigmoid, EfficientNet SiLU and
    /// Sigmoid.
    pub(super) fn squeeze_excite(&mut self, x: usize, squeeze: usize, gate: Gate) -> usize {
        let c = self.shape(x)[0];
        let means = self.push(Op::GlobalAvgPool(GlobalAvgPool), vec![x], vec![c, 1, 1]);
        let s = self.conv(means, squeeze, square(1, 1, 0), 1, false);
        let s = match gate {
            Gate::Hard => self.relu(s),
            Gate::Smooth => self.silu(s),
        };
        let s = self.conv(s, c, square(1, 1, 0), 1, false);
        let op = match gate {
            Gate::Hard => Op::HardSigmoid(HardSigmoid {
                alpha: 1.0 / 6.0,
                beta: 0.5,
            }),
            Gate::Smooth => Op::Smooth(Smooth(Function::Sigmoid)),
        };
        let s = self.push(op, vec![s], vec![c, 1, 1]);
        let shape = self.shape(x).to_vec();
        self.push(Op::Mul(Mul), vec![x, s], shape)
    }

    pub(super) fn add(&mut self, x: usize, y: usize) -> usize {
        let shape = self.shape(x).to_vec();
        self.push(Op::Add(Add), vec![x, y], shape)
    }

    /// The values joined on the channel axis.
    pub(super) fn concat(&mut self, xs: &[usize]) -> usize {
        let mut shape = self.shape(xs[0]).to_vec();
        shape[0] = xs.iter().map(|&v| self.shapes[v][0]).sum();
        self.push(Op::Concat(Concat { axis: 0 }), xs.to_vec(), shape)
    }

    /// A max (or average) pooling; `ceil`: the windows of ceil mode.
    pub(super) fn pool(&mut self, x: usize, w: Window, max: bool, ceil: bool) -> usize {
        let &[c, h, wd] = self.shape(x) else {
            unreachable!("pools follow [C, H, W] values")
        };
        let pool = Pool::new(w, max, ceil, [h, wd]);
        let [oh, ow] = pool.window.output([h, wd]).expect("the zoo's shapes fit");
        let op = if max {
            Op::MaxPool(MaxPool(pool))
        } else {
            Op::AvgPool(AvgPool(pool))
        };
        self.push(op, vec![x], vec![c, oh, ow])
    }

    /// Global average pooling, flattened to `[C]`.
    pub(super) fn global_average(&mut self, x: usize) -> usize {
        let c = self.shape(x)[0];
        let pooled = self.push(Op::GlobalAvgPool(GlobalAvgPool), vec![x], vec![c, 1, 1]);
        self.push(Op::Reshape(Reshape), vec![pooled], vec![c])
    }

    /// Global average pooling and a dense layer to `classes`.
    pub(super) fn classify(&mut self, x: usize, classes: usize) -> usize {
        let flat = self.global_average(x);
        self.dense(flat, classes)
    }

    /// A dense layer of `outputs` on the last axis of `x` (at each position of the others),
    /// PyTorch's default initialisation.
    pub(super) fn dense(&mut self, x: usize, outputs: usize) -> usize {
        let c = self.shape(x).last().copied().unwrap_or(1);
        self.dense_within(x, outputs, 1.0 / (c as f32).sqrt())
    }

    /// [`Graph::dense`] with He's uniform bound, as before a ReLU-like gate.
    pub(super) fn dense_he(&mut self, x: usize, outputs: usize) -> usize {
        let c = self.shape(x).last().copied().unwrap_or(1);
        self.dense_within(x, outputs, (6.0 / c as f32).sqrt())
    }

    /// A dense layer of `outputs` on the last axis of `x`, weights and bias uniform within
    /// ±`bound`.
    fn dense_within(&mut self, x: usize, outputs: usize, bound: f32) -> usize {
        let mut shape = self.shape(x).to_vec();
        let c = shape.pop().unwrap_or(1);
        shape.push(outputs);
        let dense = Dense {
            inputs: c,
            outputs,
            weight: uniform(&mut self.prg, c * outputs, bound),
            bias: uniform(&mut self.prg, outputs, bound),
        };
        self.push(Op::Dense(dense), vec![x], shape)
    }

    /// Random numbers uniform within ±`bound` (a position embedding's).
    pub(super) fn uniform(&mut self, n: usize, bound: f32) -> Vec<f32> {
        uniform(&mut self.prg, n, bound)
    }

    /// The network with output `out`.
    pub(super) fn model(self, out: usize) -> Model {
        Model {
            input_name: "input".to_owned(),
            input: 0,
            shapes: self.shapes,
            nodes: self.nodes,
            output: out,
            client_side: Vec::new(),
            has_weights: true,
            lookup: None,
        }
    }
}

/// `n` numbers uniform in ±`bound`.
fn uniform(prg: &mut Prg, n: usize, bound: f32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let u = (prg.random_block().low() >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * u - 1.0) * bound
        })
        .collect()
}

/// Channel `ch` (of `channels` planes of `plane` elements) of every calibration input.
fn channel(acts: &[f32], ch: usize, channels: usize, plane: usize) -> Vec<f32> {
    acts.chunks_exact(channels * plane)
        .flat_map(|input| &input[ch * plane..(ch + 1) * plane])
        .copied()
        .collect()
}

/// Mean and variance.
fn moments(v: &[f32]) -> (f32, f32) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let var = v
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / n;
    (mean as f32, var as f32)
}
