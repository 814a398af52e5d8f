//! Conv (ONNX Operators: Conv), 2-D, grouped and depthwise, dilation 1: a private linear map
//! of the server's on the image-to-column matrix of its input (MOTION2NX, Braun et al.,
//! App. A.3; [`kernels::im2col`]), its bias at the products' scale.

use super::{Evaluate, Family, Io, Operator, spatial};
use crate::error::Error;
use crate::export::NodeWriter;
use crate::fixed::Arith;
use crate::import::args::{bias, computed, weight};
use crate::import::proto::Attributes;
use crate::import::{At, Importer, Refusal};
use crate::kernels;
use crate::model::{LayerCost, Window};
use crate::secure::{Compiler, Shared};
use tessera_protocols::hybrid::{ConvGeometry, LinearMap, linear};

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

pub(super) const FAMILY: &[Family] = &[Family {
    name: "Conv",
    import,
    supported: "Conv (2-D, grouped and depthwise, dilation 1)",
}];

impl Conv {
    /// The rows of a group's image-to-column block: `in_channels / groups · kh · kw`.
    pub(crate) fn per_output(&self) -> usize {
        self.in_channels / self.groups.max(1) * self.window.kernel[0] * self.window.kernel[1]
    }

    /// The output's `[height, width]` from its shape.
    fn positions(io: &Io<'_>) -> [usize; 2] {
        match io.output {
            &[_, oh, ow] => [oh, ow],
            _ => [0, 0],
        }
    }
}

impl Operator for Conv {
    fn kind(&self) -> &'static str {
        "Conv"
    }

    /// A depthwise 1×1 Conv is a BatchNormalization on its own (what the importer makes of
    /// one it cannot fold).
    fn class(&self) -> &'static str {
        if self.groups == self.in_channels && self.window.kernel == [1, 1] {
            "BN"
        } else {
            "Conv"
        }
    }

    fn weights(&self) -> Vec<&[f32]> {
        vec![&self.weight, &self.bias]
    }

    fn ranges(&self) -> [&[f32]; 2] {
        [&self.weight, &self.bias]
    }

    fn cost(&self, io: &Io<'_>) -> Option<LayerCost> {
        let k = self.window.kernel[0].checked_mul(self.window.kernel[1])?;
        let per_group = self.in_channels.checked_div(self.groups)?;
        Some(LayerCost {
            multiplications: io.output_len()?.checked_mul(per_group)?.checked_mul(k)?,
            ..LayerCost::default()
        })
    }

    /// The image-to-column matrix: `in_channels · kh · kw` rows by the output positions.
    fn matrix_elements(&self, io: &Io<'_>) -> Option<usize> {
        let positions = io.output_len()? / self.out_channels.max(1);
        self.in_channels
            .checked_mul(self.window.kernel[0])?
            .checked_mul(self.window.kernel[1])?
            .checked_mul(positions)
    }

    fn lower(&self, c: &mut Compiler, args: &[Shared], io: &Io<'_>) -> Result<Shared, Error> {
        let [ci, h, w] = io.spatial()?;
        let [oh, ow] = Self::positions(io);
        let gather = gather([ci, h, w], &self.window, [oh, ow]);
        let shape = (self.out_channels, self.per_output(), oh * ow);
        let [top, left, bottom, right] = self.window.pads;
        let geometry = if self.window.kernel == [1, 1] {
            // A 1 × 1 kernel reads only the places it lands on: its image is those places,
            // at stride 1 (no strided convolution computed at every place and thinned).
            ConvGeometry {
                channels: ci / self.groups,
                height: oh,
                width: ow,
                kernel: [1, 1],
                stride: [1, 1],
            }
        } else {
            ConvGeometry {
                channels: ci / self.groups,
                height: h + top + bottom,
                width: w + left + right,
                kernel: self.window.kernel,
                stride: self.window.stride,
            }
        };
        let map = LinearMap::grouped(self.groups, shape, ci * h * w, gather)
            .and_then(|map| map.convolution(geometry))
            .map_err(Error::Compile)?;
        c.linear(args[0], map, &self.weight, &self.bias)
    }

    fn export(&self, w: &mut NodeWriter<'_>) -> &'static str {
        let [kh, kw] = self.window.kernel;
        let shape = [self.out_channels, self.in_channels / self.groups, kh, kw];
        w.floats("weight", &shape, &self.weight);
        w.floats("bias", &[self.out_channels], &self.bias);
        w.window(&self.window);
        w.int("group", self.groups as i64);
        "Conv"
    }
}

impl<A: Arith> Evaluate<A> for Conv {
    fn encode(&self, a: &A) -> Vec<Vec<A::E>> {
        vec![a.encode_all(&self.weight), a.encode_products(&self.bias)]
    }

    fn eval(&self, a: &A, k: &[Vec<A::E>], args: &[&[A::E]], io: &Io<'_>) -> Vec<A::E> {
        let input = spatial(io.input()).unwrap_or_default();
        let [oh, ow] = Self::positions(io);
        let cols = kernels::im2col(args[0], input, &self.window, [oh, ow]);
        let shape = (self.out_channels, self.per_output(), oh * ow);
        kernels::matmul_bias(a, &k[0], &cols, &k[1], shape, self.groups)
    }
}

/// The gather of a convolution's image-to-column matrix: row `(c, i, j)`, column `(oy, ox)`.
fn gather(shape: [usize; 3], window: &Window, [oh, ow]: [usize; 2]) -> Vec<u32> {
    let indices: Vec<u32> = (0..(shape[0] * shape[1] * shape[2]) as u32).collect();
    // The padding's zeros become ZERO entries: im2col fills them with the default.
    let shifted: Vec<u32> = indices.iter().map(|i| i + 1).collect();
    kernels::im2col(&shifted, shape, window, [oh, ow])
        .into_iter()
        .map(|v| if v == 0 { linear::ZERO } else { v - 1 })
        .collect()
}

fn import<'a>(imp: &mut Importer<'a>, at: &At<'a>) -> Result<(), Refusal> {
    let a = Attributes::of(at.node);
    let (x, shape) = computed(imp, at)?;
    let (x, shape) = imp.image(at, x, shape)?;
    let [ci, h, w] = spatial(&shape)?;
    let (wshape, weight) = weight(imp, at, 1, "weight")?;
    let [co, wci, kh, kw] = wshape[..] else {
        return Err(format!("weight of shape {wshape:?}").into());
    };
    let group = a.int("group", 1)?;
    let groups = usize::try_from(group)
        .ok()
        .filter(|&g| g > 0 && ci % g == 0 && co % g == 0)
        .ok_or_else(|| {
            format!("{ci} input and {co} output channels do not divide into {group} groups")
        })?;
    let declared = a.sizes("kernel_shape", Some([kh, kw]), (1, imp.ceiling.axis))?;
    if wci * groups != ci || declared != [kh, kw] {
        return Err(format!(
            "weight of shape {wshape:?} for an input of {ci} channels in {groups} groups"
        )
        .into());
    }
    let (window, [oh, ow]) = crate::import::args::window(&a, imp, [h, w], [kh, kw])?;
    let bias = bias(imp, at, 2, co)?;
    let conv = Conv {
        in_channels: ci,
        out_channels: co,
        groups,
        window,
        weight,
        bias,
    };
    imp.push_image(at, super::Op::Conv(conv), vec![x], vec![co, oh, ow])
}
