//! Files a party is handed, read and written as hostile input and as secrets.
//!
//! [`read`] and [`open`] take regular files only: a device such as `/dev/zero`, a FIFO, a
//! socket or a directory is refused by name (a FIFO is opened without blocking, so it cannot
//! hold the caller), and [`read`] stops at its bound by counting the bytes it reads, never by
//! trusting the size the file system states. [`create_new`] makes a new file, refusing one that
//! exists and a symbolic link in its place (`O_CREAT | O_EXCL | O_NOFOLLOW`); [`create_secret`]
//! makes it readable by its owner alone (mode 0600).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading, if it is a regular file.
pub fn open(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO's open would wait for a writer; a regular file ignores the flag.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file (a device, FIFO or socket)"
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
    }
    Ok(file)
}

/// The bytes of the regular file `path`, refused if there are more than `max`.
pub fn read(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = open(path)?;
    // Sized by what the file says, within the bound; grown by what is read.
    let hint = file.metadata().map_or(0, |m| m.len()).min(max);
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the limit of {max} bytes"),
        ));
    }
    Ok(bytes)
}

/// Creates the new file `path` for writing, with permissions `mode`: refused if anything (a
/// file, a symbolic link) is already there, so nothing is ever written through a link.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode).custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = mode;
    options.open(path)
}

/// Creates the new file `path` for writing a secret: [`create_new`] with mode 0600.
pub fn create_secret(path: &Path) -> io::Result<File> {
    create_new(path, 0o600)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn devices_fifos_and_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for path in [Path::new("/dev/zero"), Path::new("/dev/null"), dir.path()] {
            let err = read(path, 1 << 20).unwrap_err();
            assert_eq!(
                err.kind(),
                io::ErrorKind::InvalidInput,
                "{}",
                path.display()
            );
        }
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let err = read(&fifo, 1 << 20).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn reads_stop_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [7u8; 100]).unwrap();
        assert_eq!(read(&path, 100).unwrap(), [7u8; 100]);
        assert!(read(&path, 99).unwrap_err().to_string().contains("99"));
    }

    #[test]
    fn secrets_are_new_private_files_and_never_links() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        create_secret(&path).unwrap().write_all(b"k").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            create_secret(&path).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        let target = dir.path().join("target");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(create_secret(&link).is_err());
        assert!(!target.exists(), "nothing was written through the link");
    }
}
