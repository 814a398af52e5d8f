//! Inputs: MNIST's IDX files (LeCun et al.: a big-endian magic of 0x0000_08_NN, NN the number
//! of axes, then each axis's length and the unsigned bytes) and the normalisation that turns
//! pixels into a network's input.

use crate::error::Error;
use std::path::Path;

/// The largest IDX file read: 1 GiB (MNIST's 60 000 training images are 47 MB).
pub const MAX_IDX_BYTES: u64 = 1 << 30;

/// An IDX file of unsigned bytes: its axes and its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idx {
    /// The axes: `[count]` for labels, `[count, rows, columns]` for images.
    pub dims: Vec<usize>,
    /// The bytes, row-major.
    pub data: Vec<u8>,
}

impl Idx {
    /// Reads `path`, a regular file of at most [`MAX_IDX_BYTES`].
    pub fn load(path: &Path) -> Result<Self, Error> {
        let bytes = tessera_core::files::read(path, MAX_IDX_BYTES).map_err(|e| Error::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::parse(&bytes, &path.display().to_string())
    }

    /// Parses an IDX file of unsigned bytes; `what` names it in errors.
    pub fn parse(bytes: &[u8], what: &str) -> Result<Self, Error> {
        let bad = |reason: String| Error::Data {
            what: what.to_owned(),
            reason,
        };
        let Some((&[0, 0, kind, rank], rest)) = bytes.split_first_chunk::<4>() else {
            return Err(bad("shorter than the 4-byte IDX magic".to_owned()));
        };
        if kind != 0x08 {
            return Err(bad(format!(
                "element type {kind:#04x}; only unsigned bytes (0x08) are supported"
            )));
        }
        let rank = usize::from(rank);
        if rank == 0 || rest.len() < 4 * rank {
            return Err(bad(format!("{rank} axes, or a header cut short")));
        }
        let (head, data) = rest.split_at(4 * rank);
        let dims: Vec<usize> = head
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
            .collect();
        let n = dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| bad(format!("axes {dims:?} overflow")))?;
        if data.len() != n {
            return Err(bad(format!(
                "axes {dims:?} need {n} bytes after the header; the file has {}",
                data.len()
            )));
        }
        Ok(Idx {
            dims,
            data: data.to_vec(),
        })
    }

    /// How many items (the first axis).
    pub fn count(&self) -> usize {
        self.dims[0]
    }

    /// Item `i`'s bytes, or an error naming the index and the count.
    pub fn item(&self, i: usize) -> Result<&[u8], Error> {
        let missing = || Error::Input(format!("index {i}: the file has {} items", self.count()));
        if i >= self.count() {
            return Err(missing());
        }
        // With at least one item the data holds them all, so none of this overflows; the
        // checks keep an empty file with huge axes from doing so.
        let size = self.dims[1..]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(missing)?;
        let start = i.checked_mul(size).ok_or_else(missing)?;
        self.data
            .get(start..start.checked_add(size).ok_or_else(missing)?)
            .ok_or_else(missing)
    }
}

/// The model metadata entry that names its input normalisation ([`Normalise::parse`]).
pub const METADATA_KEY: &str = "tessera.normalise";

/// Pixels to inputs: `(p·scale − mean) / std`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normalise {
    /// Multiplies the raw byte first (1/255 for pixels to [0, 1]).
    pub scale: f32,
    /// Subtracted after scaling.
    pub mean: f32,
    /// Divides last.
    pub std: f32,
}

impl Normalise {
    /// MNIST as PyTorch's examples train on it: `(p/255 − 0.1307) / 0.3081`.
    pub const MNIST: Normalise = Normalise {
        scale: 1.0 / 255.0,
        mean: 0.1307,
        std: 0.3081,
    };

    /// CIFAR-10 as CrypTen's LeNet trains on it: `(p/255 − 0.5) / 0.5`.
    pub const HALF: Normalise = Normalise {
        scale: 1.0 / 255.0,
        mean: 0.5,
        std: 0.5,
    };

    /// `mnist`, `half`, `unit` (p/255) or `MEAN,STD` (of p/255, STD non-zero), as the command
    /// line and a model's `tessera.normalise` metadata entry give it.
    pub fn parse(s: &str) -> Option<Normalise> {
        let unit = |mean, std| Normalise {
            scale: 1.0 / 255.0,
            mean,
            std,
        };
        match s.trim() {
            "mnist" => Some(Normalise::MNIST),
            "half" => Some(Normalise::HALF),
            "unit" => Some(unit(0.0, 1.0)),
            other => {
                let (m, d) = other.split_once(',')?;
                let (mean, std): (f32, f32) = (m.trim().parse().ok()?, d.trim().parse().ok()?);
                (mean.is_finite() && std.is_finite() && std != 0.0).then(|| unit(mean, std))
            }
        }
    }

    /// The normalisation a model file names in its metadata entry [`METADATA_KEY`], if any.
    pub fn from_model(bytes: &[u8], what: &str) -> Result<Option<Normalise>, Error> {
        let model = crate::strip::parse(bytes, what)?;
        let Some(entry) = model.metadata_props.iter().find(|p| p.key == METADATA_KEY) else {
            return Ok(None);
        };
        Normalise::parse(&entry.value)
            .map(Some)
            .ok_or_else(|| Error::Data {
                what: what.to_owned(),
                reason: format!(
                    "metadata {METADATA_KEY} = {:?}: not mnist, half, unit or MEAN,STD",
                    entry.value.chars().take(80).collect::<String>()
                ),
            })
    }

    /// The inputs for raw bytes.
    pub fn apply(&self, bytes: &[u8]) -> Vec<f32> {
        bytes
            .iter()
            .map(|&b| (f32::from(b) * self.scale - self.mean) / self.std)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idx_headers_are_checked() {
        let mut file = vec![0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2];
        file.extend([1, 2, 3, 4]);
        let idx = Idx::parse(&file, "t").unwrap();
        assert_eq!(idx.dims, vec![2, 1, 2]);
        assert_eq!(idx.item(1).unwrap(), &[3, 4]);
        assert!(idx.item(2).is_err());
        assert!(Idx::parse(&file[..19], "t").is_err());
        assert!(Idx::parse(&[0, 0, 9, 1, 0, 0, 0, 0], "t").is_err());
        assert!(
            Idx::parse(
                &[0, 0, 8, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                "t"
            )
            .is_err()
        );
        assert!(Idx::parse(&[0, 0, 8], "t").is_err());
        // No items, axes whose product overflows: parsed, and no item to take.
        let empty = Idx::parse(
            &[
                0, 0, 8, 3, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
            "t",
        )
        .unwrap();
        assert!(empty.item(0).is_err() && empty.item(usize::MAX).is_err());
    }
}
