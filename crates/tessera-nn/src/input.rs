//! A network's input from a file: one item of an MNIST IDX file, a PNG image (the `image`
//! crate), or a NumPy `.npy` array (the `npyz` crate). Pixels (IDX, PNG, `.npy` of `u1`) are
//! normalised ([`Normalise`]); floating-point arrays are taken as the network's input as they
//! are, and so are integer ones (token ids, for a model that starts with a lookup). The kind is told by the file's magic bytes, not its name.

use crate::data::{Idx, Normalise};
use crate::error::Error;
use std::path::Path;

/// The largest input file read: 256 MiB.
pub const MAX_FILE: u64 = 1 << 28;

/// Reads item `index` of `path` as an input of `shape` (the model's `[C, H, W]` or `[N]`).
/// `index` picks an item of an IDX file or of a `.npy` array with one more leading axis than
/// `shape`; it must be 0 for anything else.
pub fn load(path: &Path, index: usize, shape: &[usize], n: Normalise) -> Result<Vec<f32>, Error> {
    let what = path.display().to_string();
    let io = |e: std::io::Error| Error::Io {
        path: what.clone(),
        reason: e.to_string(),
    };
    let bytes = tessera_core::files::read(path, MAX_FILE).map_err(io)?;
    parse(&bytes, &what, index, shape, n)
}

/// [`load`] on the bytes of a file; `what` names it in errors.
pub fn parse(
    bytes: &[u8],
    what: &str,
    index: usize,
    shape: &[usize],
    n: Normalise,
) -> Result<Vec<f32>, Error> {
    let len: usize = shape.iter().product();
    let bad = |reason: String| Error::Data {
        what: what.to_owned(),
        reason,
    };
    let values = if bytes.starts_with(&[0, 0, 8]) {
        let idx = Idx::parse(bytes, what)?;
        let item = idx.item(index).map_err(|e| bad(e.to_string()))?;
        if item.len() != len {
            return Err(bad(format!(
                "items of {} values; the model takes {shape:?} = {len}",
                item.len()
            )));
        }
        n.apply(item)
    } else if bytes.starts_with(b"\x89PNG") {
        only_item(index, what)?;
        n.apply(&png(bytes, what, shape)?)
    } else if bytes.starts_with(b"\x93NUMPY") {
        npy(bytes, what, index, shape, n)?
    } else {
        return Err(bad(
            "neither an IDX file of bytes, a PNG image nor a .npy array".to_owned(),
        ));
    };
    Ok(values)
}

fn only_item(index: usize, what: &str) -> Result<(), Error> {
    if index != 0 {
        return Err(Error::Data {
            what: what.to_owned(),
            reason: format!("holds one input; index {index} asked for"),
        });
    }
    Ok(())
}

/// A PNG's pixels, channel after channel: grey for a model of one channel, RGB for three.
fn png(bytes: &[u8], what: &str, shape: &[usize]) -> Result<Vec<u8>, Error> {
    let bad = |reason: String| Error::Data {
        what: what.to_owned(),
        reason,
    };
    let &[channels, h, w] = shape else {
        return Err(bad(format!(
            "an image for a model whose input is {shape:?}, not [C, H, W]"
        )));
    };
    png_chunks(bytes).map_err(&bad)?;
    let mut reader =
        image::ImageReader::with_format(std::io::Cursor::new(bytes), image::ImageFormat::Png);
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_FILE);
    reader.limits(limits);
    let img = reader.decode().map_err(|e| bad(e.to_string()))?;
    if (img.height() as usize, img.width() as usize) != (h, w) {
        return Err(bad(format!(
            "{}×{} pixels; the model takes {h}×{w}",
            img.height(),
            img.width()
        )));
    }
    match channels {
        1 => Ok(img.into_luma8().into_raw()),
        3 => {
            let rgb = img.into_rgb8().into_raw();
            Ok((0..3)
                .flat_map(|c| rgb.iter().skip(c).step_by(3).copied())
                .collect())
        }
        c => Err(bad(format!("an image for a model of {c} channels"))),
    }
}

/// Checks a PNG's chunks (PNG specification, §5.3): each one's CRC-32, and nothing after
/// IEND, before the decoder (which lets some checksums pass) sees the file.
fn png_chunks(bytes: &[u8]) -> Result<(), String> {
    let mut at = 8;
    loop {
        let head = bytes
            .get(at..at + 8)
            .ok_or_else(|| format!("a PNG chunk cut short at byte {at}"))?;
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let body = at + 4..at.saturating_add(8).saturating_add(len);
        let (Some(typed), Some(crc)) = (bytes.get(body.clone()), bytes.get(body.end..body.end + 4))
        else {
            return Err(format!(
                "a PNG chunk of {len} bytes at byte {at} runs past the end"
            ));
        };
        if crc32fast::hash(typed).to_be_bytes() != crc {
            let name = String::from_utf8_lossy(&typed[..4]).into_owned();
            return Err(format!(
                "the CRC of PNG chunk {} at byte {at} does not match",
                tessera_net::escape(name.as_bytes(), 8)
            ));
        }
        at = body.end + 4;
        if &typed[..4] == b"IEND" {
            return if at == bytes.len() {
                Ok(())
            } else {
                Err(format!("{} bytes after the PNG's end", bytes.len() - at))
            };
        }
    }
}

/// A `.npy` array in C order of `u1` (pixels), `f4` or `f8`: the whole array, or item
/// `index` of its first axis.
fn npy(
    bytes: &[u8],
    what: &str,
    index: usize,
    shape: &[usize],
    n: Normalise,
) -> Result<Vec<f32>, Error> {
    use npyz::{DType, TypeChar};
    let bad = |reason: String| Error::Data {
        what: what.to_owned(),
        reason,
    };
    let data_at = plain_header(bytes).map_err(|e| bad(e.to_owned()))?;
    let file = npyz::NpyFile::new(bytes).map_err(|e| bad(e.to_string()))?;
    if file.order() != npyz::Order::C {
        return Err(bad("Fortran order; C order is read".to_owned()));
    }
    let dims: Vec<u64> = file.shape().to_vec();
    let len: usize = shape.iter().product();
    let DType::Plain(ty) = file.dtype() else {
        return Err(bad("a structured array; numbers are read".to_owned()));
    };
    let size = ty.size_field();
    let kind = (ty.type_char(), size);
    // The data must be in the file, all of it and nothing after it: nothing is allocated for
    // what the header merely claims.
    let records = file.len();
    let data = records
        .checked_mul(size)
        .and_then(|b| b.checked_add(data_at as u64));
    if data != Some(bytes.len() as u64) {
        return Err(bad(format!(
            "the header says {records} values of {size} bytes; the file holds {} bytes of data",
            bytes.len().saturating_sub(data_at)
        )));
    }
    // The whole array is the input, or its first axis counts items of it.
    let fits = |axes: &[u64]| {
        let squeeze = |a: &mut dyn Iterator<Item = u64>| a.filter(|&d| d != 1).collect::<Vec<_>>();
        axes == [len as u64]
            || squeeze(&mut axes.iter().copied()) == squeeze(&mut shape.iter().map(|&d| d as u64))
    };
    let (start, take) = if fits(&dims) {
        only_item(index, what)?;
        (0, len)
    } else if dims.len() > 1 && fits(&dims[1..]) && (index as u64) < dims[0] {
        (index * len, len)
    } else {
        return Err(bad(format!(
            "shape {dims:?}: neither the model's input {shape:?} nor items of it, or index {index} past the end"
        )));
    };
    let data = |e: std::io::Error| bad(e.to_string());
    Ok(match kind {
        (TypeChar::Uint, 1) => {
            let v: Vec<u8> = file.into_vec().map_err(data)?;
            n.apply(&v[start..start + take])
        }
        (TypeChar::Float, 4) => {
            let v: Vec<f32> = file.into_vec().map_err(data)?;
            v[start..start + take].to_vec()
        }
        (TypeChar::Float, 8) => {
            let v: Vec<f64> = file.into_vec().map_err(data)?;
            v[start..start + take].iter().map(|&x| x as f32).collect()
        }
        // Token ids, as they are.
        (TypeChar::Int, 8) => {
            let v: Vec<i64> = file.into_vec().map_err(data)?;
            v[start..start + take].iter().map(|&x| x as f32).collect()
        }
        (TypeChar::Int, 4) => {
            let v: Vec<i32> = file.into_vec().map_err(data)?;
            v[start..start + take].iter().map(|&x| x as f32).collect()
        }
        _ => {
            return Err(bad(format!(
                "element type {ty}; u1 (pixels), f4 and f8, i8 and i4 (token ids) are read"
            )));
        }
    })
}

/// The largest `.npy` header read: real ones are under 200 bytes.
const MAX_NPY_HEADER: usize = 4096;

/// Checks that a `.npy` header is the flat dictionary NumPy writes (one pair of braces, at
/// most one tuple, no lists), bounded in length, before the parser sees it: nested brackets
/// make `npyz`'s parser take time exponential in their depth.
fn plain_header(bytes: &[u8]) -> Result<usize, &'static str> {
    let (len, start) = match bytes.get(6) {
        Some(1) => (
            bytes
                .get(8..10)
                .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]]))),
            10,
        ),
        Some(2 | 3) => (
            bytes
                .get(8..12)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
            12,
        ),
        _ => return Err("a .npy version other than 1, 2 or 3"),
    };
    let len = len.ok_or("a .npy header cut short")?;
    if len > MAX_NPY_HEADER {
        return Err("a .npy header longer than 4096 bytes");
    }
    let header = bytes
        .get(start..start + len)
        .ok_or("a .npy header cut short")?;
    let count = |c: u8| header.iter().filter(|&&b| b == c).count();
    if count(b'{') != 1 || count(b'}') != 1 || count(b'(') > 1 || count(b')') > 1 || count(b'[') > 0
    {
        return Err("a .npy header that is not a flat dictionary with one shape tuple");
    }
    Ok(start + len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use npyz::WriterBuilder;

    fn npy_file<T: npyz::AutoSerialize + Copy>(dims: &[u64], v: &[T]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(dims)
            .writer(&mut out)
            .begin_nd()
            .unwrap();
        w.extend(v.iter().copied()).unwrap();
        w.finish().unwrap();
        out
    }

    const ID: Normalise = Normalise {
        scale: 1.0,
        mean: 0.0,
        std: 1.0,
    };

    #[test]
    fn npy_arrays_and_items() {
        let v: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let f = npy_file(&[3, 4], &v);
        assert_eq!(parse(&f, "t", 1, &[4], ID).unwrap(), vec![4., 5., 6., 7.]);
        assert!(parse(&f, "t", 3, &[4], ID).is_err());
        // The whole array must have the input's shape (axes of 1 aside) or be flat: (3, 4) is
        // not a [2, 6] input, nor a [1, 12] one.
        assert!(parse(&f, "t", 0, &[2, 6], ID).is_err());
        assert!(parse(&f, "t", 0, &[1, 12], ID).is_err());
        assert_eq!(parse(&f, "t", 0, &[1, 3, 4], ID).unwrap(), v);
        assert!(parse(&f, "t", 1, &[1, 3, 4], ID).is_err());
        assert_eq!(parse(&npy_file(&[12], &v), "t", 0, &[3, 4], ID).unwrap(), v);
        assert!(parse(&f, "t", 0, &[5], ID).is_err());
        // Nothing may follow the data.
        let mut long = f.clone();
        long.push(0);
        let e = parse(&long, "t", 0, &[3, 4], ID).unwrap_err().to_string();
        assert!(e.contains("holds 49 bytes of data"), "{e}");
        let bytes = npy_file(&[2], &[10u8, 20]);
        let half = Normalise {
            scale: 0.5,
            mean: 1.0,
            std: 2.0,
        };
        assert_eq!(parse(&bytes, "t", 0, &[2], half).unwrap(), vec![2.0, 4.5]);
        // Token ids: integers as they are; other element types refused.
        let ints = npy_file(&[2], &[1i32, 2]);
        assert_eq!(parse(&ints, "t", 0, &[2], ID).unwrap(), vec![1.0, 2.0]);
        let ids = npy_file(&[2], &[7i64, -1]);
        assert_eq!(parse(&ids, "t", 0, &[2], ID).unwrap(), vec![7.0, -1.0]);
        let shorts = npy_file(&[2], &[1i16, 2]);
        let e = parse(&shorts, "t", 0, &[2], ID).unwrap_err().to_string();
        assert!(e.contains("element type"), "{e}");
        // A header claiming more than the file holds.
        let mut short = npy_file(&[4], &[1f32, 2., 3., 4.]);
        short.truncate(short.len() - 8);
        assert!(parse(&short, "t", 0, &[4], ID).is_err());
    }

    #[test]
    fn nested_npy_headers_are_refused_at_once() {
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        let header = format!("{}'descr': '<f4'{}\n", "{".repeat(100), "}".repeat(100));
        f.extend((header.len() as u16).to_le_bytes());
        f.extend(header.as_bytes());
        let start = std::time::Instant::now();
        let e = parse(&f, "t", 0, &[1], ID).unwrap_err().to_string();
        assert!(e.contains("flat dictionary"), "{e}");
        assert!(start.elapsed().as_secs() < 1);
        let mut long = b"\x93NUMPY\x02\x00".to_vec();
        long.extend(1_000_000u32.to_le_bytes());
        assert!(parse(&long, "t", 0, &[1], ID).is_err());
    }

    #[test]
    fn png_grey_and_rgb() {
        let mut grey = Vec::new();
        image::GrayImage::from_fn(3, 2, |x, y| image::Luma([(10 * y + x) as u8]))
            .write_to(
                &mut std::io::Cursor::new(&mut grey),
                image::ImageFormat::Png,
            )
            .unwrap();
        assert_eq!(
            parse(&grey, "g", 0, &[1, 2, 3], ID).unwrap(),
            vec![0., 1., 2., 10., 11., 12.]
        );
        assert!(parse(&grey, "g", 0, &[1, 3, 2], ID).is_err());
        // A flipped bit in any chunk is caught by its CRC; bytes after IEND are refused.
        for at in [20, grey.len() - 20] {
            let mut bad = grey.clone();
            bad[at] ^= 1;
            let e = parse(&bad, "g", 0, &[1, 2, 3], ID).unwrap_err().to_string();
            assert!(e.contains("CRC"), "byte {at}: {e}");
        }
        let mut long = grey.clone();
        long.extend_from_slice(b"junk");
        let e = parse(&long, "g", 0, &[1, 2, 3], ID)
            .unwrap_err()
            .to_string();
        assert!(e.contains("after the PNG's end"), "{e}");
        assert!(parse(&grey, "g", 1, &[1, 2, 3], ID).is_err());
        let mut rgb = Vec::new();
        image::RgbImage::from_fn(2, 1, |x, _| {
            image::Rgb([x as u8, 10 + x as u8, 20 + x as u8])
        })
        .write_to(&mut std::io::Cursor::new(&mut rgb), image::ImageFormat::Png)
        .unwrap();
        assert_eq!(
            parse(&rgb, "c", 0, &[3, 1, 2], ID).unwrap(),
            vec![0., 1., 10., 11., 20., 21.]
        );
        assert!(parse(&rgb[..rgb.len() / 2], "c", 0, &[3, 1, 2], ID).is_err());
    }

    #[test]
    fn unknown_files_are_named() {
        let e = parse(b"hello", "x.bin", 0, &[1], ID)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.bin: neither"), "{e}");
    }
}
