//! Reading small files a party is given (keys, certificates): regular files only, with a bound
//! on their size counted as they are read, so a path such as `/dev/zero` or a FIFO is refused
//! at once instead of read until memory runs out or waited on ([`tessera_core::files`]).

use crate::Error;
use std::path::Path;

/// The largest key or certificate file read, in bytes.
pub const MAX_KEY_FILE_BYTES: u64 = 1 << 20;

/// The bytes of `path`, refused by name if there are more than `max` or it is not a regular
/// file.
pub fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, Error> {
    tessera_core::files::read(path, max).map_err(|e| Error::File {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}
