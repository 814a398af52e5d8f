//! Transformer encoders (Vaswani et al. 2017, §3): multi-head self-attention and a GELU
//! feed-forward block, each with a residual and a LayerNormalization, as PyTorch exports them
//! (per-token MatMul by a constant, Reshape and Transpose into heads, MatMul of Q by Kᵀ,
//! Div by √d, Softmax, MatMul by V, Transpose and Reshape back). BERT (Devlin et al. 2019:
//! post-norm blocks, the pooler's Dense and Tanh on the first token) and ViT (Dosovitskiy
//! et al. 2021: 16 × 16 patches by a strided Conv, a position embedding, pre-norm blocks).
//!
//! What differs from the published networks: BERT's input is its embeddings' output, `[S, D]`
//! (the lookup of the word, position and segment tables and their LayerNormalization are the
//! client's: the server hands those tables over, so they are not private); ViT pools by the
//! tokens' mean rather than a class token (timm's `global_pool = "avg"`). A [`Scale`] divides
//! the hidden and feed-forward widths (the heads stay, each narrower) and sets the sequence's
//! length (BERT) or the image's side (ViT).

use super::graph::{Graph, square};
use super::nets::Scale;
use crate::model::{AddConst, Scale as Factor, Slice, Smooth, Softmax, Transpose};
use crate::model::{Function, LayerNorm, MatMul, Model, Op, Reduce, Reduction, Reshape};

/// The sizes of an encoder: blocks, hidden width, heads, the feed-forward width.
#[derive(Clone, Copy, Debug)]
struct Encoder {
    layers: usize,
    hidden: usize,
    heads: usize,
    ffn: usize,
    /// LayerNormalization before each block (ViT) rather than after its residual (BERT).
    pre_norm: bool,
    /// LayerNormalization's ε.
    eps: f32,
}

impl Encoder {
    /// The encoder with its widths divided as `s` says.
    fn scaled(self, s: Scale) -> Self {
        let hidden = (self.hidden / s.width).max(self.heads);
        Encoder {
            hidden: hidden - hidden % self.heads,
            ffn: (self.ffn / s.width).max(1),
            ..self
        }
    }
}

/// BERT-Tiny (Turc et al. 2019): 2 blocks, hidden 128, 2 heads, feed-forward 512.
const BERT_TINY: Encoder = Encoder {
    layers: 2,
    hidden: 128,
    heads: 2,
    ffn: 512,
    pre_norm: false,
    eps: 1e-12,
};

/// BERT-Base: 12 blocks, hidden 768, 12 heads, feed-forward 3072.
const BERT_BASE: Encoder = Encoder {
    layers: 12,
    hidden: 768,
    heads: 12,
    ffn: 3072,
    pre_norm: false,
    eps: 1e-12,
};

/// ViT-Tiny/16 (DeiT-Ti): 12 blocks, hidden 192, 3 heads, feed-forward 768.
const VIT_TINY: Encoder = Encoder {
    layers: 12,
    hidden: 192,
    heads: 3,
    ffn: 768,
    pre_norm: true,
    eps: 1e-6,
};

/// BERT-Tiny on a sequence of `s.side` tokens, two classes.
pub fn bert_tiny(seed: u64, s: Scale) -> Model {
    bert(BERT_TINY.scaled(s), seed, s.side)
}

/// BERT-Base on a sequence of `s.side` tokens, two classes.
pub fn bert_base(seed: u64, s: Scale) -> Model {
    bert(BERT_BASE.scaled(s), seed, s.side)
}

/// ViT-Tiny/16 on 3 × side × side, 1000 classes.
pub fn vit_tiny(seed: u64, s: Scale) -> Model {
    let e = VIT_TINY.scaled(s);
    let mut g = Graph::new(vec![3, s.side, s.side], seed);
    let x = g.conv(0, e.hidden, square(16, 16, 0), 1, false);
    let &[d, h, w] = g.shape(x) else {
        unreachable!("a Conv writes [C, H, W]")
    };
    let x = g.push(Op::Reshape(Reshape), vec![x], vec![d, h * w]);
    let x = g.push(
        Op::Transpose(Transpose(vec![1, 0])),
        vec![x],
        vec![h * w, d],
    );
    let position = g.uniform(h * w * d, 0.02 * 3f32.sqrt());
    let mut x = g.push(Op::AddConst(AddConst(position)), vec![x], vec![h * w, d]);
    for _ in 0..e.layers {
        x = block(&mut g, x, e);
    }
    let x = layer_norm(&mut g, x, e.eps);
    let mean = Op::Reduce(Reduce {
        reduction: Reduction::Mean,
        axes: vec![0],
        keepdims: false,
    });
    let x = g.push(mean, vec![x], vec![d]);
    let out = g.dense(x, 1000);
    g.model(out)
}

/// BERT's encoder on `tokens` embedded tokens, then its pooler and a two-class head.
fn bert(e: Encoder, seed: u64, tokens: usize) -> Model {
    let mut g = Graph::new(vec![tokens, e.hidden], seed);
    let mut x = 0;
    for _ in 0..e.layers {
        x = block(&mut g, x, e);
    }
    let first = Op::Slice(Slice {
        ranges: vec![(0, 1, 1), (0, e.hidden, 1)],
    });
    let x = g.push(first, vec![x], vec![1, e.hidden]);
    let x = g.push(Op::Reshape(Reshape), vec![x], vec![e.hidden]);
    let x = g.dense(x, e.hidden);
    let x = g.push(Op::Smooth(Smooth(Function::Tanh)), vec![x], vec![e.hidden]);
    let out = g.dense(x, 2);
    g.model(out)
}

/// One encoder block on `x` (`[tokens, hidden]`): attention, then the feed-forward block,
/// each added to its input, normalised before (pre-norm) or after the sum.
fn block(g: &mut Graph, x: usize, e: Encoder) -> usize {
    let mut x = x;
    for sublayer in [attention, feed_forward] {
        x = if e.pre_norm {
            let n = layer_norm(g, x, e.eps);
            let y = sublayer(g, n, e);
            g.add(x, y)
        } else {
            let y = sublayer(g, x, e);
            let sum = g.add(x, y);
            layer_norm(g, sum, e.eps)
        };
    }
    x
}

/// Multi-head self-attention on `x` (`[tokens, hidden]`), as `torch.onnx.export` writes it.
fn attention(g: &mut Graph, x: usize, e: Encoder) -> usize {
    let (tokens, heads) = (g.shape(x)[0], e.heads);
    let width = e.hidden / heads;
    let [q, k, v] = [(); 3].map(|_| g.dense(x, e.hidden));
    // Per head: Q and V as [heads, tokens, width], K as [heads, width, tokens].
    let mut split = |t: usize, perm: Vec<usize>| {
        let r = g.push(Op::Reshape(Reshape), vec![t], vec![tokens, heads, width]);
        let shape = perm.iter().map(|&a| [tokens, heads, width][a]).collect();
        g.push(Op::Transpose(Transpose(perm)), vec![r], shape)
    };
    let (q, k, v) = (
        split(q, vec![1, 0, 2]),
        split(k, vec![1, 2, 0]),
        split(v, vec![1, 0, 2]),
    );
    let scores = g.push(Op::MatMul(MatMul), vec![q, k], vec![heads, tokens, tokens]);
    let scale = Op::Scale(Factor {
        shape: vec![1, 1, 1],
        factors: vec![1.0 / (width as f32).sqrt()],
    });
    let scores = g.push(scale, vec![scores], vec![heads, tokens, tokens]);
    let softmax = Op::Softmax(Softmax { axes: vec![2] });
    let p = g.push(softmax, vec![scores], vec![heads, tokens, tokens]);
    let y = g.push(Op::MatMul(MatMul), vec![p, v], vec![heads, tokens, width]);
    let y = g.push(
        Op::Transpose(Transpose(vec![1, 0, 2])),
        vec![y],
        vec![tokens, heads, width],
    );
    let y = g.push(Op::Reshape(Reshape), vec![y], vec![tokens, e.hidden]);
    g.dense(y, e.hidden)
}

/// The feed-forward block: a dense layer to the feed-forward width, GELU, and back.
fn feed_forward(g: &mut Graph, x: usize, e: Encoder) -> usize {
    let h = g.dense_he(x, e.ffn);
    let shape = g.shape(h).to_vec();
    let h = g.push(Op::Smooth(Smooth(Function::Gelu)), vec![h], shape);
    g.dense(h, e.hidden)
}

/// LayerNormalization over the last axis, γ = 1 and β = 0 (as initialised).
fn layer_norm(g: &mut Graph, x: usize, eps: f32) -> usize {
    let shape = g.shape(x).to_vec();
    let d = shape[shape.len() - 1];
    let norm = Op::LayerNorm(LayerNorm {
        axis: shape.len() - 1,
        epsilon: eps,
        scale: vec![1.0; d],
        bias: vec![0.0; d],
    });
    g.push(norm, vec![x], shape)
}
