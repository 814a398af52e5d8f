//! Reading ONNX's protobuf messages (the ONNX IR specification, `onnx/onnx.proto`): tensors
//! as `f32` weights or `i64` shapes, node attributes, and the element types this importer
//! knows. Every size a file states is checked against what the file holds and against the
//! [`Ceiling`] before anything is allocated.

use crate::model::Ceiling;
use crate::onnx::{AttributeProto, AttributeType, NodeProto, TensorProto};

/// ONNX's `TensorProto.DataType` codes that this importer reads.
pub(crate) mod data_type {
    /// 32-bit float.
    pub const FLOAT: i32 = 1;
    /// 32-bit signed integer.
    pub const INT32: i32 = 6;
    /// Boolean, one byte each in `raw_data` or one `int32_data` entry each.
    pub const BOOL: i32 = 9;
    /// 64-bit signed integer.
    pub const INT64: i32 = 7;
    /// 16-bit float (IEEE half), carried in `int32_data` or `raw_data`.
    pub const FLOAT16: i32 = 10;
    /// 64-bit float.
    pub const DOUBLE: i32 = 11;
    /// bfloat16.
    pub const BFLOAT16: i32 = 16;
}

/// Whether an element type holds real numbers (weights), as opposed to integers (shapes).
pub(crate) fn is_float(data_type: i32) -> bool {
    use data_type::*;
    matches!(data_type, FLOAT | DOUBLE | FLOAT16 | BFLOAT16)
}

/// A tensor's dimensions as sizes, and its element count, each checked against `ceiling`.
pub(crate) fn dims(t: &TensorProto, ceiling: &Ceiling) -> Result<(Vec<usize>, usize), String> {
    let mut shape = Vec::with_capacity(t.dims.len().min(16));
    let mut n = 1usize;
    for &d in &t.dims {
        let d = usize::try_from(d)
            .ok()
            .filter(|&d| d <= ceiling.weights)
            .ok_or_else(|| format!("dimension {d} in {:?}", t.dims))?;
        n = n
            .checked_mul(d)
            .filter(|&n| n <= ceiling.weights)
            .ok_or_else(|| format!("dimensions {:?} hold too many elements", t.dims))?;
        shape.push(d);
    }
    Ok((shape, n))
}

/// Whether the tensor carries any element data.
pub(crate) fn has_data(t: &TensorProto) -> bool {
    !t.raw_data.is_empty()
        || !t.float_data.is_empty()
        || !t.double_data.is_empty()
        || !t.int32_data.is_empty()
        || !t.int64_data.is_empty()
        || !t.uint64_data.is_empty()
        || !t.string_data.is_empty()
}

/// `n` elements of `size` bytes from `raw_data`, or `n` entries of `field`: whichever the
/// tensor uses, checked to hold exactly `n`.
fn pick<'a, T>(
    t: &'a TensorProto,
    n: usize,
    size: usize,
    field: &'a [T],
) -> Result<Either<'a, T>, String> {
    if !t.external_data.is_empty() || t.data_location != 0 {
        return Err("its data is in an external file, which is not read".to_owned());
    }
    if !t.raw_data.is_empty() {
        if Some(t.raw_data.len()) != n.checked_mul(size) {
            return Err(format!(
                "{} raw bytes for {n} elements of {size} bytes",
                t.raw_data.len()
            ));
        }
        return Ok(Either::Raw(&t.raw_data));
    }
    if field.len() != n {
        return Err(format!("{} values for {n} elements", field.len()));
    }
    Ok(Either::Field(field))
}

enum Either<'a, T> {
    Raw(&'a [u8]),
    Field(&'a [T]),
}

/// A real-valued tensor's elements as `f32`. An empty tensor of a stripped architecture
/// (`zeros` set) stands for zeros, counted against the budget `zeros` holds.
pub(crate) fn floats(
    t: &TensorProto,
    ceiling: &Ceiling,
    zeros: Option<&mut usize>,
) -> Result<(Vec<usize>, Vec<f32>), String> {
    use data_type::*;
    let (shape, n) = dims(t, ceiling)?;
    if !is_float(t.data_type) {
        return Err(format!(
            "element type {} where real numbers are needed",
            t.data_type
        ));
    }
    if let Some(budget) = zeros.filter(|_| !has_data(t)) {
        *budget = budget.checked_sub(n).ok_or_else(|| {
            format!(
                "a stripped architecture asks for more than {} zeros in all",
                crate::strip::MAX_FILLED
            )
        })?;
        return Ok((shape, vec![0.0; n]));
    }
    let values: Vec<f32> = match t.data_type {
        FLOAT => match pick(t, n, 4, &t.float_data)? {
            Either::Raw(r) => r
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            Either::Field(f) => f.to_vec(),
        },
        DOUBLE => match pick(t, n, 8, &t.double_data)? {
            Either::Raw(r) => r
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()) as f32)
                .collect(),
            Either::Field(f) => f.iter().map(|&v| v as f32).collect(),
        },
        half => {
            let wide = |bits: u16| {
                if half == BFLOAT16 {
                    f32::from_bits(u32::from(bits) << 16)
                } else {
                    f16_to_f32(bits)
                }
            };
            match pick(t, n, 2, &t.int32_data)? {
                Either::Raw(r) => r
                    .chunks_exact(2)
                    .map(|c| wide(u16::from_le_bytes([c[0], c[1]])))
                    .collect(),
                Either::Field(f) => f.iter().map(|&v| wide(v as u16)).collect(),
            }
        }
    };
    Ok((shape, values))
}

/// IEEE 754 binary16 to binary32, exactly.
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f32::from(h & 0x3ff);
    match exp {
        0 => sign * frac * (-24f32).exp2(),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + frac / 1024.0) * ((e - 15) as f32).exp2(),
    }
}

/// An integer or Boolean tensor's elements (a shape: Reshape's target; Where's condition, as
/// 0 and 1).
pub(crate) fn ints(t: &TensorProto, ceiling: &Ceiling) -> Result<Vec<i64>, String> {
    use data_type::*;
    let (_, n) = dims(t, ceiling)?;
    match t.data_type {
        INT64 => Ok(match pick(t, n, 8, &t.int64_data)? {
            Either::Raw(r) => r
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
            Either::Field(f) => f.to_vec(),
        }),
        INT32 => Ok(match pick(t, n, 4, &t.int32_data)? {
            Either::Raw(r) => r
                .chunks_exact(4)
                .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
            Either::Field(f) => f.iter().map(|&v| i64::from(v)).collect(),
        }),
        BOOL => Ok(match pick(t, n, 1, &t.int32_data)? {
            Either::Raw(r) => r.iter().map(|&b| i64::from(b != 0)).collect(),
            Either::Field(f) => f.iter().map(|&v| i64::from(v != 0)).collect(),
        }),
        other => Err(format!("element type {other} where integers are needed")),
    }
}

/// A node's attributes, looked up by name.
pub(crate) struct Attributes<'a>(pub(crate) &'a [AttributeProto]);

impl<'a> Attributes<'a> {
    pub(crate) fn of(node: &'a NodeProto) -> Self {
        Attributes(&node.attribute)
    }

    /// Attribute `name`, which must be declared of type `kind` (or of no type, as some old
    /// exporters write): the importer reads a number as the type says, as `strip` removes it.
    pub(crate) fn get(
        &self,
        name: &str,
        kind: AttributeType,
    ) -> Result<Option<&'a AttributeProto>, String> {
        let Some(a) = self.0.iter().find(|a| a.name == name) else {
            return Ok(None);
        };
        let declared = a.type_();
        if declared != kind && declared != AttributeType::Undefined {
            // ONNX's names for them: FLOAT, INTS, ...
            let onnx = |t: AttributeType| format!("{t:?}").to_uppercase();
            return Err(format!(
                "attribute {name} is of type {}; {} is needed",
                onnx(declared),
                onnx(kind)
            ));
        }
        Ok(Some(a))
    }

    /// An integer attribute, or `default`.
    pub(crate) fn int(&self, name: &str, default: i64) -> Result<i64, String> {
        Ok(self
            .get(name, AttributeType::Int)?
            .map_or(default, |a| a.i.unwrap_or(0)))
    }

    /// A real attribute, or `default`; it must be finite.
    pub(crate) fn float(&self, name: &str, default: f32) -> Result<f32, String> {
        let v = self
            .get(name, AttributeType::Float)?
            .map_or(default, |a| a.f.unwrap_or(0.0));
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!("attribute {name} = {v} is not finite"))
        }
    }

    /// An integer list attribute, if present.
    pub(crate) fn ints(&self, name: &str) -> Result<Option<&'a [i64]>, String> {
        Ok(self.get(name, AttributeType::Ints)?.map(|a| &a.ints[..]))
    }

    /// A string attribute, if present.
    pub(crate) fn string(&self, name: &str) -> Result<Option<&'a [u8]>, String> {
        Ok(self.get(name, AttributeType::String)?.map(|a| &a.s[..]))
    }

    /// `name` as `N` sizes in `lo..=hi` (kernels, strides, paddings), or `default`; a negative
    /// or larger value is refused, never wrapped.
    pub(crate) fn sizes<const N: usize>(
        &self,
        name: &str,
        default: Option<[usize; N]>,
        (lo, hi): (usize, usize),
    ) -> Result<[usize; N], String> {
        let Some(list) = self.ints(name)? else {
            return default.ok_or_else(|| format!("attribute {name} is missing"));
        };
        let mut out = [0usize; N];
        if list.len() != N {
            return Err(format!(
                "attribute {name} = {list:?}: {N} values are needed"
            ));
        }
        for (o, &v) in out.iter_mut().zip(list) {
            *o = usize::try_from(v)
                .ok()
                .filter(|v| (lo..=hi).contains(v))
                .ok_or_else(|| {
                    format!("attribute {name} = {list:?}: each must be in {lo}..={hi}")
                })?;
        }
        Ok(out)
    }
}
