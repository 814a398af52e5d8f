//! Reading small files a party is given (keys, certificates) with a bound on their size, so a
//! path such as `/dev/zero` is refused instead of read until memory runs out.

use crate::Error;
use std::io::Read;
use std::path::Path;

/// The largest key or certificate file read, in bytes.
pub const MAX_KEY_FILE_BYTES: u64 = 1 << 20;

/// The bytes of `path`, refused by name if there are more than `max`.
pub fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, Error> {
    let fail = |message: String| Error::File {
        path: path.display().to_string(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > max {
        return Err(fail(format!("larger than the limit of {max} bytes")));
    }
    Ok(bytes)
}
