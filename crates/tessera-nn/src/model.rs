//! A network as this crate runs it: a DAG of layers over per-sample tensors with static shapes,
//! weights as `f32` in ONNX's layouts, BatchNormalization already folded, and the output
//! transforms the client applies itself (Softmax, LogSoftmax, Log) peeled off the end.
//!
//! Tensors are row-major; the batch axis of the ONNX graph is gone (one sample at a time), so a
//! convolution's input is `[C, H, W]` and a dense layer's `[features]` (or `[tokens, features]`);
//! where a graph of batch 1 mixes that axis with the others, it is kept as the first axis of 1.

use crate::op::Io;
pub use crate::op::{
    Add, AddConst, AvgPool, Clip, Concat, Conv, Dense, Divide, Expand, FILL_LIMIT, Fill, Function,
    Gather, GlobalAvgPool, HardSigmoid, HardSwish, LayerNorm, MASK, MatMul, MaxPool, Mul, Neg, Op,
    Pad, Pool, Power, Reduce, Reduction, Relu, Reshape, Scale, Slice, Smooth, Softmax, Sub, Tensor,
    Transpose, Where, supported,
};

/// A value of the graph: an index into [`Model::shapes`].
pub type ValueId = usize;

/// A window over the two spatial axes of a `[C, H, W]` tensor: kernel, stride and padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// `[height, width]`.
    pub kernel: [usize; 2],
    /// `[height, width]`.
    pub stride: [usize; 2],
    /// `[top, left, bottom, right]`.
    pub pads: [usize; 4],
}

impl Window {
    /// This window in ceil mode as one in floor mode on an input of `[height, width]`: the
    /// end paddings grown so that the last window, which must start inside the input or its
    /// start padding (as PyTorch and onnxruntime count), is whole. For max pooling, which
    /// ignores padded places.
    pub fn ceiled(&self, input: [usize; 2]) -> Window {
        let mut pads = self.pads;
        for i in 0..2 {
            let (k, s) = (self.kernel[i], self.stride[i].max(1));
            let padded = input[i] + pads[i] + pads[i + 2];
            let mut out = padded.saturating_sub(k).div_ceil(s) + 1;
            if (out - 1) * s >= input[i] + pads[i] {
                out -= 1;
            }
            pads[i + 2] += ((out - 1) * s + k).saturating_sub(padded);
        }
        Window { pads, ..*self }
    }

    /// The output's `[height, width]` for an input of `[height, width]` (floor mode), or
    /// `None` when the kernel does not fit the padded input (or the padded size overflows).
    pub fn output(&self, input: [usize; 2]) -> Option<[usize; 2]> {
        let axis = |i: usize, lo: usize, hi: usize| {
            let padded = input[i].checked_add(lo)?.checked_add(hi)?;
            (self.stride[i] > 0 && self.kernel[i] > 0 && padded >= self.kernel[i])
                .then(|| (padded - self.kernel[i]) / self.stride[i] + 1)
        };
        Some([
            axis(0, self.pads[0], self.pads[2])?,
            axis(1, self.pads[1], self.pads[3])?,
        ])
    }
}

impl Ceiling {
    /// The elements of a tensor of `shape` if it fits: every axis at most [`Ceiling::axis`],
    /// all of them at most [`Ceiling::tensor_elements`] (in checked arithmetic).
    pub fn tensor(&self, shape: &[usize]) -> Option<usize> {
        shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d).filter(|_| d <= self.axis))
            .filter(|&n| n <= self.tensor_elements)
    }

    /// Where the ceiling is explained.
    const NOTE: &'static str = "over the ceiling on a model's size (tessera_nn::model::CEILING; README, Private inference)";
}

/// One node: an operation on values of the graph, producing one.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Its name in the ONNX file.
    pub name: String,
    /// What it computes.
    pub op: Op,
    /// The values it reads.
    pub inputs: Vec<ValueId>,
    /// The value it writes.
    pub output: ValueId,
}

/// A network: one input, one output, nodes in an order where every value is written before it
/// is read.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The graph input's name.
    pub input_name: String,
    /// The value the input is (always 0).
    pub input: ValueId,
    /// Each value's per-sample shape.
    pub shapes: Vec<Vec<usize>>,
    /// The layers, in evaluation order.
    pub nodes: Vec<Node>,
    /// The value returned: the logits when [`Model::client_side`] is not empty.
    pub output: ValueId,
    /// The output transforms peeled off the end, in order (for example `["Softmax", "Log"]`):
    /// the client applies them to the logits if it wants them; none changes the argmax.
    pub client_side: Vec<String>,
    /// False for an architecture written by [`crate::strip`]: its weights are all zero and only
    /// the shapes are of use.
    pub has_weights: bool,
    /// The embedding table the client looks its token ids up in before the protocol, if the
    /// graph starts with one ([`Model::embed`]); the input is then the lookup's output.
    pub lookup: Option<Lookup>,
}

/// An embedding lookup of the client's (issue 60, item 3): a graph's first Gather of a
/// constant table by the graph input's token ids. The client applies it in the clear, so
/// the table is the architecture's (`nn strip` keeps it: the client learns the table, the
/// server nothing of the ids); a one-hot product by the server's private table would cost
/// a linear layer of vocabulary × width per token instead.
#[derive(Clone, Debug, PartialEq)]
pub struct Lookup {
    /// The ids' per-sample shape.
    pub ids: Vec<usize>,
    /// The table's rows.
    pub vocabulary: usize,
    /// The table, `[vocabulary, width]` row-major (the input's last axis is its width).
    pub table: Vec<f32>,
}

/// The largest model this crate imports, evaluates or compiles: a file, or an architecture a
/// server hands a client, cannot ask for more work or memory than this. [`Model::check`] holds a
/// model to it in checked arithmetic before anything of its size is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ceiling {
    /// Nodes in an ONNX graph.
    pub nodes: usize,
    /// One axis of a tensor, a kernel, a stride or a padding.
    pub axis: usize,
    /// Elements of one tensor: a value of the graph, or a layer's image-to-column matrix.
    pub tensor_elements: usize,
    /// Elements of all the graph's values together.
    pub model_elements: usize,
    /// Weights and constants of the whole model (the zeros a stripped architecture stands for
    /// count too).
    pub weights: usize,
    /// One layer's multiplications, ReLUs and maxima.
    pub layer_work: usize,
    /// The whole model's multiplications, ReLUs and maxima.
    pub model_work: usize,
}

/// The ceiling in force: ImageNet networks (ResNet-50: 4·10^9 multiplications, 2.5·10^7
/// weights; VGG-16's largest image-to-column matrix, 2.9·10^7 elements) fit; a 2^20 padding or
/// a million-node graph does not. Compiling costs about 12 bytes per element of the values, so
/// a model at the ceiling asks a client for a few GiB at most.
pub const CEILING: Ceiling = Ceiling {
    nodes: 1 << 16,
    axis: 1 << 16,
    tensor_elements: 1 << 25,
    model_elements: 1 << 28,
    weights: 1 << 28,
    layer_work: 1 << 36,
    model_work: 1 << 38,
};

/// One layer's size, for `nn info` and for planning the secure protocols.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LayerCost {
    /// Multiplications by weights.
    pub multiplications: usize,
    /// Products of two computed values (Beaver triples).
    pub products: usize,
    /// Elements whose sign is extracted (ReLU).
    pub relus: usize,
    /// Two-input maxima (MaxPool: kernel size − 1 per output).
    pub maxima: usize,
    /// Divisions by a public count (AveragePool, GlobalAveragePool).
    pub divisions: usize,
}

impl Model {
    /// A model built in code: `layers` (operator, inputs, output shape) on an input named `x`
    /// of shape `input`, value `i + 1` the `i`-th layer's output and the last one returned.
    pub fn from_layers(input: Vec<usize>, layers: Vec<(Op, Vec<ValueId>, Vec<usize>)>) -> Model {
        let mut shapes = vec![input];
        let mut nodes = Vec::with_capacity(layers.len());
        for (i, (op, inputs, shape)) in layers.into_iter().enumerate() {
            nodes.push(Node {
                name: format!("{}{i}", op.kind().to_lowercase()),
                op,
                inputs,
                output: i + 1,
            });
            shapes.push(shape);
        }
        Model {
            input_name: "x".to_owned(),
            input: 0,
            output: shapes.len() - 1,
            shapes,
            nodes,
            client_side: Vec::new(),
            has_weights: true,
            lookup: None,
        }
    }

    /// The shape of what the client gives per sample: token ids where the model starts with
    /// a [`Lookup`], else the input.
    pub fn sample_shape(&self) -> &[usize] {
        match &self.lookup {
            Some(l) => &l.ids,
            None => &self.shapes[self.input],
        }
    }

    /// The input from what the client gives (`x`, one sample of [`Model::sample_shape`]): the
    /// embeddings of its token ids where the model starts with a [`Lookup`] (each id a whole
    /// number below the vocabulary's size, or negative from its end, as ONNX's Gather reads
    /// it), else `x` itself.
    pub fn embed(&self, x: &[f32]) -> Result<Vec<f32>, crate::Error> {
        let Some(l) = &self.lookup else {
            return Ok(x.to_vec());
        };
        let width = l.table.len() / l.vocabulary.max(1);
        let mut out = Vec::with_capacity(x.len().saturating_mul(width));
        for (at, &id) in x.iter().enumerate() {
            let n = l.vocabulary as f32;
            let row = if id < 0.0 { id + n } else { id };
            if row.fract() != 0.0 || !(0.0..n).contains(&row) {
                return Err(crate::Error::Input(format!(
                    "token id {id} at {at}: ids are whole numbers from {} to {}",
                    -(l.vocabulary as i64),
                    l.vocabulary - 1
                )));
            }
            let row = row as usize * width;
            out.extend_from_slice(&l.table[row..row + width]);
        }
        Ok(out)
    }

    /// A lookup's table holds `vocabulary` rows of the input's width, finite, and its ids
    /// as many as the input has rows.
    fn check_lookup(&self, l: &Lookup) -> Result<(), crate::Error> {
        let input = &self.shapes[self.input];
        let (width, rows) = match input.split_last() {
            Some((&w, rest)) => (w, rest.iter().product::<usize>()),
            None => (0, 0),
        };
        let ids: usize = l.ids.iter().product();
        if width == 0 || Some(l.table.len()) != l.vocabulary.checked_mul(width) || ids != rows {
            return Err(crate::Error::Graph(format!(
                "an embedding table of {} values for {} ids of rows of {width} into an input of {input:?}",
                l.table.len(),
                l.vocabulary
            )));
        }
        if l.table.iter().any(|v| !v.is_finite()) {
            return Err(crate::Error::Graph(
                "the embedding table holds a value that is not finite".to_owned(),
            ));
        }
        Ok(())
    }

    /// Elements of a value.
    pub fn len(&self, value: ValueId) -> usize {
        self.shapes[value].iter().product()
    }

    /// Elements of the input.
    pub fn input_len(&self) -> usize {
        self.len(self.input)
    }

    /// Elements of the output.
    pub fn output_len(&self) -> usize {
        self.len(self.output)
    }

    /// The size of `node` in the units that cost in secure evaluation (saturating: a model
    /// that passed [`Model::check`] never reaches the bound).
    pub fn cost(&self, node: &Node) -> LayerCost {
        self.checked_cost(node).unwrap_or(LayerCost {
            multiplications: usize::MAX,
            ..LayerCost::default()
        })
    }

    /// [`Model::cost`] in checked arithmetic (the operator's [`crate::op`] module's rule):
    /// `None` on overflow.
    fn checked_cost(&self, node: &Node) -> Option<LayerCost> {
        node.op.operator().cost(&Io::of(self, node)?)
    }

    /// Holds the model to `ceiling` (in checked arithmetic) and its weights to finite values:
    /// what the importer ends with, and what evaluators and the compiler check first, since a
    /// model may also be built in code.
    pub fn check(&self, ceiling: &Ceiling) -> Result<(), crate::Error> {
        let over = |what: String| Err(crate::Error::Graph(format!("{what}: {}", Ceiling::NOTE)));
        if self.nodes.len() > ceiling.nodes {
            return over(format!(
                "{} nodes, more than {}",
                self.nodes.len(),
                ceiling.nodes
            ));
        }
        let mut elements = 0usize;
        for shape in &self.shapes {
            let Some(n) = ceiling.tensor(shape) else {
                return over(format!("a value of shape {shape:?} is too large"));
            };
            elements = elements.saturating_add(n);
        }
        if elements > ceiling.model_elements {
            return over(format!("the values hold {elements} elements together"));
        }
        let (mut work, mut weights) = (0usize, 0usize);
        for node in &self.nodes {
            let c = self.cost(node);
            let layer = c
                .multiplications
                .saturating_add(c.products)
                .saturating_add(c.relus)
                .saturating_add(c.maxima);
            let matrix = self.im2col_elements(node).unwrap_or(usize::MAX);
            if layer > ceiling.layer_work || matrix > ceiling.tensor_elements {
                return over(format!(
                    "node {:?} ({}) asks for {layer} operations and a {matrix}-element matrix",
                    node.name,
                    node.op.kind()
                ));
            }
            work = work.saturating_add(layer);
            let data = node.op.weights();
            weights = data.iter().fold(weights, |n, d| n.saturating_add(d.len()));
            if let Some(bad) = data.iter().flat_map(|d| d.iter()).find(|w| !w.is_finite()) {
                return Err(crate::Error::Graph(format!(
                    "node {:?} ({}) has a weight of {bad}; weights must be finite",
                    node.name,
                    node.op.kind()
                )));
            }
        }
        if let Some(l) = &self.lookup {
            self.check_lookup(l)?;
            weights = weights.saturating_add(l.table.len());
        }
        if work > ceiling.model_work || weights > ceiling.weights {
            return over(format!("{work} operations and {weights} weights in all"));
        }
        Ok(())
    }

    /// The largest matrix `node`'s evaluation builds (a Conv's image-to-column matrix).
    fn im2col_elements(&self, node: &Node) -> Option<usize> {
        node.op.operator().matrix_elements(&Io::of(self, node)?)
    }

    /// For each value, the index of the last node that reads it (`usize::MAX` for the output):
    /// an evaluator frees a value after that node.
    pub fn last_uses(&self) -> Vec<usize> {
        let mut last = vec![0; self.shapes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            for &v in &node.inputs {
                last[v] = i;
            }
        }
        last[self.output] = usize::MAX;
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8 × 8 pooled 3 × 3 by 2 with one place of padding per side: ceil mode adds a fifth
    /// window per axis, starting on the last input and hanging one place past the padding.
    #[test]
    fn ceil_mode_divisors_count_the_declared_padding_never_the_overhang() {
        let window = Window {
            kernel: [3, 3],
            stride: [2, 2],
            pads: [1, 1, 1, 1],
        };
        let axis = |pool: &Pool| {
            (0..5)
                .map(|o| pool.divisor([8, 8], (o, 4)))
                .collect::<Vec<_>>()
        };
        let counted = Pool::new(window, true, true, [8, 8]);
        assert_eq!(counted.overhang, [1, 1]);
        assert_eq!(counted.window.output([8, 8]), Some([5, 5]));
        // The last column's windows: places 7 (input) and 8 (padding) of the row axis.
        assert_eq!(axis(&counted), [6, 6, 6, 6, 4]);
        let inputs = Pool::new(window, false, true, [8, 8]);
        assert_eq!(axis(&inputs), [2, 3, 3, 3, 1]);
        // Floor mode: every window whole with its padding, the kernel's size when counted.
        let floor = Pool::new(window, true, false, [8, 8]);
        assert_eq!(
            (floor.overhang, floor.window.output([8, 8])),
            ([0, 0], Some([4, 4]))
        );
        assert!((0..4).all(|o| floor.divisor([8, 8], (o, o)) == 9));
        // Where the declared padding already holds the last window, ceil mode is floor mode.
        assert_eq!(
            Pool::new(window, true, true, [7, 7]),
            Pool::new(window, true, false, [7, 7])
        );
    }
}
