//! A network as this crate runs it: a DAG of layers over per-sample tensors with static shapes,
//! weights as `f32` in ONNX's layouts, BatchNormalization already folded, and the output
//! transforms the client applies itself (Softmax, LogSoftmax, Log) peeled off the end.
//!
//! Tensors are row-major; the batch axis of the ONNX graph is gone (one sample at a time), so a
//! convolution's input is `[C, H, W]` and a dense layer's `[features]`.

/// The ONNX operators [`crate::import`] accepts, for error messages and `nn info`.
pub const SUPPORTED: &[&str] = &[
    "Gemm",
    "MatMul (by a constant)",
    "Conv (2-D, grouped and depthwise, dilation 1)",
    "Relu",
    "Clip (constant bounds: ReLU6 and the like)",
    "MaxPool and AveragePool (floor and ceil mode)",
    "GlobalAveragePool",
    "BatchNormalization (folded into a Conv or Gemm before it; elsewhere a depthwise 1×1 Conv)",
    "Flatten",
    "Reshape",
    "Transpose",
    "Concat (of computed tensors)",
    "Pad (constant mode, zeros)",
    "Shape, Gather, Unsqueeze, Squeeze, Cast, Mul, Concat of constants (shape subgraphs, folded at import)",
    "Identity",
    "Dropout",
    "Add",
    "Sub",
    "Softmax, LogSoftmax, Log (at the output)",
];

/// A value of the graph: an index into [`Model::shapes`].
pub type ValueId = usize;

/// A dense layer: `y = W·x + b` with `W` of `outputs × inputs`, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Dense {
    /// Input features.
    pub inputs: usize,
    /// Output features.
    pub outputs: usize,
    /// `outputs × inputs`.
    pub weight: Vec<f32>,
    /// `outputs`.
    pub bias: Vec<f32>,
}

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

/// A 2-D convolution, dilation 1: `y[o] = b[o] + Σ W[o, c, i, j] · x[c, …]` over the input
/// channels `c` of output channel `o`'s group (all of them unless grouped; one for depthwise).
#[derive(Clone, Debug, PartialEq)]
pub struct Conv {
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// Groups: both channel counts are multiples of it.
    pub groups: usize,
    /// Kernel, stride and padding.
    pub window: Window,
    /// `[out_channels, in_channels / groups, kernel height, kernel width]`.
    pub weight: Vec<f32>,
    /// `out_channels`.
    pub bias: Vec<f32>,
}

/// A pooling layer's window and how an average counts padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Kernel, stride and padding (in ceil mode with the end padding grown: [`Window::ceiled`]).
    pub window: Window,
    /// AveragePool's `count_include_pad`: divide by the window's places in the input and its
    /// declared padding, not by its inputs alone.
    pub count_include_pad: bool,
    /// The end padding `[bottom, right]` that ceil mode added to the declared one (zeros in
    /// floor mode): places no average counts.
    pub overhang: [usize; 2],
}

impl Pool {
    /// A pooling by `window` (its declared padding) of an input of `[height, width]`, in ceil
    /// mode or in floor mode.
    pub fn new(window: Window, count_include_pad: bool, ceil: bool, input: [usize; 2]) -> Pool {
        let grown = if ceil { window.ceiled(input) } else { window };
        Pool {
            window: grown,
            count_include_pad,
            overhang: [0, 1].map(|i| grown.pads[i + 2] - window.pads[i + 2]),
        }
    }

    /// What the average of output `(oy, ox)` on an input of `[height, width]` divides by: the
    /// window's places inside the input, or with `count_include_pad` inside the input and its
    /// declared padding (a ceil-mode window's overhang is never counted), as in PyTorch's
    /// `avg_pool2d` and onnxruntime's AveragePool.
    pub fn divisor(&self, [height, width]: [usize; 2], (oy, ox): (usize, usize)) -> usize {
        let Window {
            kernel,
            stride,
            pads,
        } = self.window;
        let axis = |i: usize, out: usize, len: usize| {
            let start = out * stride[i];
            let (lo, hi) = if self.count_include_pad {
                (
                    0,
                    (pads[i] + len + pads[i + 2]).saturating_sub(self.overhang[i]),
                )
            } else {
                (pads[i], pads[i] + len)
            };
            (start + kernel[i]).min(hi).saturating_sub(start.max(lo))
        };
        axis(0, oy, height) * axis(1, ox, width)
    }

    /// [`Pool::divisor`] of every output, in the output's order, for an input of `shape`
    /// `[channels, height, width]` (none for another shape).
    pub fn divisors(&self, shape: &[usize]) -> Vec<usize> {
        let &[channels, height, width] = shape else {
            return Vec::new();
        };
        let [oh, ow] = self.window.output([height, width]).unwrap_or_default();
        let plane: Vec<usize> = (0..oh)
            .flat_map(|oy| (0..ow).map(move |ox| self.divisor([height, width], (oy, ox))))
            .collect();
        plane.repeat(channels)
    }
}

/// What a node computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Gemm, MatMul by a constant, or ONNX's Linear form of them.
    Dense(Dense),
    /// Conv.
    Conv(Conv),
    /// max(x, 0).
    Relu,
    /// The maximum over each window, channel by channel.
    MaxPool(Pool),
    /// The mean over each window, channel by channel.
    AvgPool(Pool),
    /// The mean over each channel: `[C, H, W]` to `[C]`.
    GlobalAvgPool,
    /// The same elements in a new shape (Flatten, Reshape, Identity, Dropout).
    Reshape,
    /// Axes permuted: output axis `i` is input axis `perm[i]`.
    Transpose(Vec<usize>),
    /// The sum of two computed tensors of one shape.
    Add,
    /// The difference of two computed tensors of one shape.
    Sub,
    /// A constant (broadcast to the output's shape) added to a computed tensor.
    AddConst(Vec<f32>),
    /// The inputs joined along a per-sample axis (ONNX's axis less one: the batch axis is
    /// gone).
    Concat(usize),
    /// Zeros added before and after each per-sample axis: `(before, after)` per axis.
    Pad(Vec<(usize, usize)>),
    /// The value held between bounds (`None`: no bound on that side): ReLU6 is `(0, 6)`.
    Clip(Option<f32>, Option<f32>),
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

impl Op {
    /// The numbers the operation carries: weights, biases, constants.
    pub fn weights(&self) -> Vec<&[f32]> {
        match self {
            Op::Dense(d) => vec![&d.weight, &d.bias],
            Op::Conv(c) => vec![&c.weight, &c.bias],
            Op::AddConst(k) => vec![k],
            Op::Clip(lo, hi) => [lo, hi]
                .into_iter()
                .flatten()
                .map(std::slice::from_ref)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A short name for tables: the operator as ONNX would call it.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Dense(_) => "Gemm",
            Op::Conv(_) => "Conv",
            Op::Relu => "Relu",
            Op::MaxPool(_) => "MaxPool",
            Op::AvgPool(_) => "AveragePool",
            Op::GlobalAvgPool => "GlobalAveragePool",
            Op::Reshape => "Reshape",
            Op::Transpose(_) => "Transpose",
            Op::Add => "Add",
            Op::Sub => "Sub",
            Op::AddConst(_) => "Add (constant)",
            Op::Concat(_) => "Concat",
            Op::Pad(_) => "Pad",
            Op::Clip(..) => "Clip",
        }
    }
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerCost {
    /// Multiplications by weights.
    pub multiplications: usize,
    /// Elements whose sign is extracted (ReLU).
    pub relus: usize,
    /// Two-input maxima (MaxPool: kernel size − 1 per output).
    pub maxima: usize,
    /// Divisions by a public count (AveragePool, GlobalAveragePool).
    pub divisions: usize,
}

impl Model {
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
            relus: 0,
            maxima: 0,
            divisions: 0,
        })
    }

    /// [`Model::cost`] in checked arithmetic, with the layer's image-to-column matrix (a Conv's
    /// `in_channels · kh · kw × positions`, else 0): `None` on overflow.
    fn checked_cost(&self, node: &Node) -> Option<LayerCost> {
        let out = self.checked_len(node.output)?;
        let mut c = LayerCost {
            multiplications: 0,
            relus: 0,
            maxima: 0,
            divisions: 0,
        };
        let kernel = |w: &Window| w.kernel[0].checked_mul(w.kernel[1]);
        match &node.op {
            Op::Dense(d) => c.multiplications = d.inputs.checked_mul(d.outputs)?,
            Op::Conv(conv) => {
                let k = kernel(&conv.window)?;
                let per_group = conv.in_channels.checked_div(conv.groups)?;
                c.multiplications = out.checked_mul(per_group)?.checked_mul(k)?;
            }
            Op::Relu => c.relus = out,
            // max(x, lo) and min(x, hi) as ReLUs of x − lo and x − hi.
            Op::Clip(lo, hi) => {
                c.relus = out.checked_mul(usize::from(lo.is_some()) + usize::from(hi.is_some()))?
            }
            Op::MaxPool(p) => c.maxima = out.checked_mul(kernel(&p.window)?.checked_sub(1)?)?,
            Op::AvgPool(_) | Op::GlobalAvgPool => c.divisions = out,
            Op::Reshape
            | Op::Transpose(_)
            | Op::Add
            | Op::Sub
            | Op::AddConst(_)
            | Op::Concat(_)
            | Op::Pad(_) => {}
        }
        Some(c)
    }

    fn checked_len(&self, value: ValueId) -> Option<usize> {
        self.shapes
            .get(value)?
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
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
        if work > ceiling.model_work || weights > ceiling.weights {
            return over(format!("{work} operations and {weights} weights in all"));
        }
        Ok(())
    }

    /// A Conv's image-to-column matrix: `in_channels · kh · kw` rows by the output positions.
    fn im2col_elements(&self, node: &Node) -> Option<usize> {
        let Op::Conv(conv) = &node.op else {
            return Some(0);
        };
        let positions = self.checked_len(node.output)? / conv.out_channels.max(1);
        conv.in_channels
            .checked_mul(conv.window.kernel[0])?
            .checked_mul(conv.window.kernel[1])?
            .checked_mul(positions)
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
