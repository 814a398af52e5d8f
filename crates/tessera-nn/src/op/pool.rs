//! MaxPool, AveragePool (floor and ceil mode) and GlobalAveragePool (ONNX Operators), channel
//! by channel (MOTION2NX, Braun et al., App. A.3): MaxPool as a tree of `max(a, b) = a +
//! ReLU(b − a)` over the window's offsets, each level one ReLU on all pairs (padding repeats
//! one of the window's inputs); the averages as sums times the public ⌊2^f/k⌉, then
//! truncation (padding adds zeros; windows of each divisor, [`Pool::divisor`], are averaged
//! apart).

use super::{Evaluate, Family, Io, Operator, spatial};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{computed, window};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels::{self, window_positions};
use crate::model::{LayerCost, Window};
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::{Value, linear};

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

/// The maximum over each window, channel by channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxPool(pub Pool);

/// The mean over each window, channel by channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvgPool(pub Pool);

/// The mean over each channel: `[C, H, W]` to `[C, 1, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalAvgPool;

pub(super) const FAMILY: &[Family] = &[
    Family {
        name: "MaxPool",
        import: max_pool,
        supported: "MaxPool and AveragePool (floor and ceil mode)",
    },
    Family {
        name: "AveragePool",
        import: average_pool,
        supported: "",
    },
    Family {
        name: "GlobalAveragePool",
        import: global_average_pool,
        supported: "GlobalAveragePool",
    },
];

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

    /// The ONNX attributes of the window with its declared padding, and ceil mode where it
    /// grew the padding.
    fn export(&self, w: &mut NodeWriter<'_>) {
        let mut declared = self.window;
        for i in 0..2 {
            declared.pads[i + 2] = declared.pads[i + 2].saturating_sub(self.overhang[i]);
        }
        w.window(&declared);
        w.int("ceil_mode", i64::from(self.overhang != [0, 0]));
    }

    /// Max or average pooling of `x` (`[channels, height, width]`) to the output's shape.
    fn eval<A: Arith>(&self, a: &A, x: &[A::E], io: &Io<'_>, max: bool) -> Vec<A::E> {
        let input = spatial(io.input()).unwrap_or_default();
        let [_, oh, ow] = spatial(io.output).unwrap_or_default();
        kernels::pool(a, x, input, self, max, [oh, ow])
    }

    /// Its lowering's windows: the input indices under each window offset, one vector of
    /// output positions each, channel by channel. A window's padded positions repeat one of
    /// its inputs (`max`: the maximum is unchanged) or are zeros ([`linear::ZERO`], for an
    /// average).
    fn offsets(&self, io: &Io<'_>, max: bool) -> Result<Vec<Vec<u32>>, Error> {
        let [c, h, w] = io.spatial()?;
        let refused = |why: String| Error::node(io.name, "pooling", why);
        let [oh, ow] = self
            .window
            .output([h, w])
            .ok_or_else(|| refused("the window does not fit".to_owned()))?;
        let k = self.window.kernel[0] * self.window.kernel[1];
        let mut offsets = vec![Vec::with_capacity(c * oh * ow); k];
        let mut positions = Vec::with_capacity(k);
        for ch in 0..c {
            for oy in 0..oh {
                for ox in 0..ow {
                    positions.clear();
                    positions.extend(window_positions(&self.window, [h, w], (oy, ox)));
                    let Some(&first) = positions.first() else {
                        return Err(refused(format!("a window of only padding at ({oy}, {ox})")));
                    };
                    // Max pooling repeats an input; averaging adds a zero.
                    let at = |pos: usize| (ch * h * w + pos) as u32;
                    let rest = if max { at(first) } else { linear::ZERO };
                    for (j, o) in offsets.iter_mut().enumerate() {
                        o.push(positions.get(j).map_or(rest, |&pos| at(pos)));
                    }
                }
            }
        }
        Ok(offsets)
    }
}

impl Operator for MaxPool {
    fn kind(&self) -> &'static str {
        "MaxPool"
    }

    fn class(&self) -> &'static str {
        "MaxPool"
    }

    /// Kernel size − 1 maxima per output.
    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let kernel = self.0.window.kernel[0].checked_mul(self.0.window.kernel[1])?;
        Some(LayerCost {
            maxima: io.output_len()?.checked_mul(kernel.checked_sub(1)?)?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let groups = self.0.offsets(io, true)?;
        c.maximum(args[0], groups)
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        self.0.export(w);
        "MaxPool"
    }
}

impl<A: Arith> Evaluate<A> for MaxPool {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        self.0.eval(a, args[0], io, true)
    }
}

impl Operator for AvgPool {
    fn kind(&self) -> &'static str {
        "AveragePool"
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        Some(LayerCost {
            divisions: io.output_len()?,
            ..LayerCost::default()
        })
    }

    /// Each window's sum over its divisor: windows of one divisor averaged together and put
    /// back in place by a gather.
    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let groups = self.0.offsets(io, false)?;
        let counts = self.0.divisors(io.input());
        let outputs = counts.len();
        if groups.first().map_or(0, Vec::len) != outputs {
            return Err(Error::Graph(
                "a pooling's divisors do not match its windows".into(),
            ));
        }
        let count = counts.first().copied().unwrap_or(1);
        if counts.iter().all(|&n| n == count) {
            return c.mean(args[0], groups, count);
        }
        let x = c.settle(args[0])?;
        let mut distinct = counts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let (mut parts, mut place) = (Vec::new(), vec![(0, 0); outputs]);
        for &count in &distinct {
            let chosen: Vec<usize> = (0..outputs).filter(|&q| counts[q] == count).collect();
            for (rank, &q) in chosen.iter().enumerate() {
                place[q] = (parts.len(), rank);
            }
            let windows = groups
                .iter()
                .map(|g| chosen.iter().map(|&q| g[q]).collect())
                .collect();
            parts.push((c.mean(x, windows, count)?, chosen.len()));
        }
        interleave(c, &parts, &place)
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        self.0.export(w);
        w.int("count_include_pad", i64::from(self.0.count_include_pad));
        "AveragePool"
    }
}

impl<A: Arith> Evaluate<A> for AvgPool {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        self.0.eval(a, args[0], io, false)
    }
}

impl Operator for GlobalAvgPool {
    fn kind(&self) -> &'static str {
        "GlobalAveragePool"
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        Some(LayerCost {
            divisions: io.output_len()?,
            ..LayerCost::default()
        })
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let [ch, h, w] = io.spatial()?;
        let groups = (0..h * w)
            .map(|t| (0..ch).map(|cc| (cc * h * w + t) as u32).collect())
            .collect();
        c.mean(args[0], groups, h * w)
    }

    fn export(&self, _w: &mut NodeWriter<'_>) -> &'static str {
        "GlobalAveragePool"
    }
}

impl<A: Arith> Evaluate<A> for GlobalAvgPool {
    fn eval(&self, a: &A, _k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let [c, h, w] = spatial(io.input()).unwrap_or_default();
        args[0]
            .chunks_exact((h * w).max(1))
            .take(c)
            .map(|plane| {
                let sum = plane.iter().fold(A::E::default(), |s, &v| a.add(s, v));
                a.mean(sum, h * w)
            })
            .collect()
    }
}

/// The averages of each divisor's windows (`parts`: each with its length per input) put back
/// in place: output q is rank `place[q].1` of part `place[q].0`, input by input of the batch.
fn interleave(
    c: &mut Compiler,
    parts: &[(Shared, usize)],
    place: &[(usize, usize)],
) -> Result<Shared, Error> {
    // Output q of input b: rank r of its count's part, at that part's b·len + r.
    let starts: Vec<usize> = parts
        .iter()
        .scan(0, |at, &(_, len)| {
            let start = *at;
            *at += len * c.batch;
            Some(start)
        })
        .collect();
    let indices = (0..c.batch)
        .flat_map(|b| {
            let starts = &starts;
            place
                .iter()
                .map(move |&(part, rank)| (starts[part] + b * parts[part].1 + rank) as u32)
        })
        .collect();
    let values: Vec<Value> = parts.iter().map(|(p, _)| p.v).collect();
    let gathered = c.p.gather_from(&values, indices).map_err(Error::Compile)?;
    Ok(parts[0].0.like(gathered))
}

fn max_pool<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    import(imp, at, true)
}

fn average_pool<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    import(imp, at, false)
}

fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>, max: bool) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    let ceil = a.int("ceil_mode", 0)? != 0;
    let (x, shape) = computed(imp, at)?;
    let (x, shape) = imp.image(at, x, shape)?;
    let [c, h, w] = spatial(&shape)?;
    let kernel = a.sizes("kernel_shape", None, (1, imp.ceiling.axis))?;
    let (window, _) = window(&a, imp, [h, w], kernel)?;
    if (0..4).any(|i| window.pads[i] >= kernel[i % 2]) {
        return Err(format!("pads {:?} as wide as the kernel {kernel:?}", window.pads).into());
    }
    let count_include_pad = max || a.int("count_include_pad", 0)? != 0;
    let pool = Pool::new(window, count_include_pad, ceil, [h, w]);
    let [oh, ow] = pool
        .window
        .output([h, w])
        .ok_or("the ceiled window does not fit")?;
    let op = if max {
        super::Op::MaxPool(MaxPool(pool))
    } else {
        super::Op::AvgPool(AvgPool(pool))
    };
    imp.push_image(at, op, vec![x], vec![c, oh, ow])
}

fn global_average_pool<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let (x, shape) = computed(imp, at)?;
    let (x, shape) = imp.image(at, x, shape)?;
    let [c, _, _] = spatial(&shape)?;
    // ONNX keeps the spatial axes as 1 × 1.
    imp.push_image(
        at,
        super::Op::GlobalAvgPool(GlobalAvgPool),
        vec![x],
        vec![c, 1, 1],
    )
}
