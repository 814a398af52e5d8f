//! The command line against a hostile user and a hostile peer (issue 42, defects 6, 8, 12, 13
//! and 16): devices and FIFOs where files are expected, secrets written through planted links
//! or readable by others, a used folder dealt into again, counts and labels that do not fit,
//! and a peer that trickles its bytes. Every command must end within its bounds with a message
//! naming the file or the peer, never hang, abort or panic.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{data, oaes_prep};

/// Runs `tessera args` for at most 20 s: (success, stdout, stderr); a command still running
/// then is killed and fails the test.
fn tessera(args: &[&str]) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("tessera {args:?} still ran after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !err.contains("panicked"),
        "tessera {args:?} panicked: {err}"
    );
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        err,
    )
}

/// `tessera oaes prep` of two parties, protocol 3, into `out`.
fn deal(out: &Path) -> (bool, String, String) {
    tessera(&oaes_prep("2", "3", out.to_str().unwrap()))
}

fn fifo(dir: &Path) -> String {
    let path = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success()
    );
    path.to_str().unwrap().to_owned()
}

/// Defect 13: `/dev/zero`, a FIFO and a directory as a model, an input, images or
/// pre-processing are refused at once, by name.
#[test]
fn devices_fifos_and_directories_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path());
    let folder = dir.path().to_str().unwrap();
    let model = data("tests/minionn-R_S.onnx");
    let images = data("tests/mnist-t10k-256-images.idx3-ubyte");
    let labels = data("tests/mnist-t10k-256-labels.idx1-ubyte");
    for bad in ["/dev/zero", fifo.as_str(), folder] {
        let runs: [Vec<&str>; 4] = [
            vec!["nn", "info", bad],
            vec![
                "nn", "run", "--role", "client", "--model", &model, "--input", bad,
            ],
            vec![
                "nn", "run", "--role", "client", "--model", bad, "--input", &images,
            ],
            vec![
                "nn", "accuracy", "--model", &model, "--images", bad, "--labels", &labels,
            ],
        ];
        for mut args in runs {
            if args[1] == "run" {
                args.extend(["--connect", "127.0.0.1:9"]);
            }
            let (ok, _, err) = tessera(&args);
            assert!(!ok, "{args:?}");
            assert!(
                err.contains("not a regular file") || err.contains("a directory"),
                "{args:?}: {err}"
            );
        }
        let (ok, _, err) = tessera(&[
            "oaes",
            "run",
            "--party",
            "1",
            "--parties",
            "127.0.0.1:9,-",
            "--prep",
            bad,
            "--key-share",
            "00000000000000000000000000000000",
            "--plaintext",
            "00000000000000000000000000000000",
        ]);
        assert!(!ok);
        assert!(
            err.contains("not a regular file") || err.contains("a directory"),
            "{err}"
        );
    }
}

/// Defect 8 (and 16's used folder): pre-processing files are new files of mode 0600, never
/// written through a planted link nor over old ones, and a fresh dealing's files are not taken
/// for used ones by an old marker.
#[test]
fn pre_processing_is_written_as_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("prep");
    let (ok, _, err) = deal(&out);
    assert!(ok, "{err}");
    for p in 0..2 {
        let file = out.join(format!("party-{p}.oaes"));
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    }
    // Dealing again into the folder would overwrite secrets: refused.
    let (ok, _, err) = deal(&out);
    assert!(!ok && err.contains("exists"), "{err}");
    // A link planted where a file will be written: refused, its target untouched.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let target = dir.path().join("target");
    std::os::unix::fs::symlink(&target, other.join("party-0.oaes")).unwrap();
    let (ok, _, err) = deal(&other);
    assert!(!ok, "{err}");
    assert!(!target.exists(), "nothing is written through the link");
    // A marker of an old dealing beside a fresh one does not block it.
    std::fs::write(
        out.join("party-1.oaes.used-00000000000000000000000000000000"),
        "old",
    )
    .unwrap();
    let mat = tessera_aes::Material::load(&out.join("party-1.oaes"), 1).unwrap();
    tessera_aes::claim(&out.join("party-1.oaes"), &mat.header().session).unwrap();
    assert!(tessera_aes::claim(&out.join("party-1.oaes"), &mat.header().session).is_err());
}

/// Defects 12 and 16: `nn accuracy` with no images, and with labels that are not one per
/// image, is refused with a message.
#[test]
fn accuracy_needs_images_and_one_label_each() {
    let model = data("tests/minionn-S.onnx");
    let images = data("tests/mnist-t10k-256-images.idx3-ubyte");
    let labels = data("tests/mnist-t10k-256-labels.idx1-ubyte");
    let nn16 = data("nn/mnist-t10k-16-labels.idx1-ubyte");
    for (labels, count, named) in [
        (labels.as_str(), "0", "0"),
        (images.as_str(), "3", "one label per image"),
        (nn16.as_str(), "3", "one label per image"),
    ] {
        let (ok, _, err) = tessera(&[
            "nn", "accuracy", "--model", &model, "--images", &images, "--labels", labels,
            "--count", count,
        ]);
        assert!(!ok && err.contains(named), "{err}");
    }
}

/// Defect 6: `oaes run` is bounded by `--deadline`, set-up included, however a peer trickles.
#[test]
fn oaes_run_ends_at_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("prep");
    let (ok, _, err) = deal(&out);
    assert!(ok, "{err}");
    let addr = free_addr();
    let peer = addr.clone();
    // A peer that sends a mesh hello a byte every 500 ms, over and over.
    let trickler = std::thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(4) {
            let Ok(mut s) = std::net::TcpStream::connect(&peer) else {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            for b in [0u8, 0, 1, 15, 0, 0, 0, b't'] {
                if std::io::Write::write_all(&mut s, &[b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    });
    let prep = out.join("party-0.oaes");
    let start = Instant::now();
    let (ok, _, err) = tessera(&[
        "oaes",
        "run",
        "--party",
        "0",
        "--parties",
        &format!("{addr},-"),
        "--prep",
        prep.to_str().unwrap(),
        "--key-share",
        "00000000000000000000000000000000",
        "--plaintext",
        "00000000000000000000000000000000",
        "--timeout",
        "3",
        "--deadline",
        "2",
    ]);
    assert!(!ok, "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}: {err}",
        start.elapsed()
    );
    trickler.join().unwrap();
}

/// Defect 16: a name with escape sequences, 100 KB long, is printed neither raw nor whole.
#[test]
fn names_are_printed_escaped_and_cut() {
    let name = format!("\u{1b}[2J\u{1b}[H{}\u{202e}", "a".repeat(100_000));
    for args in [
        vec!["circuit", "info", &name],
        vec!["run", "--role", "evaluator", "--connect", "127.0.0.1:9"],
    ] {
        let mut args = args;
        if args[0] == "run" {
            args.extend(["--circuit", &name, "--input", "00"]);
        }
        let (ok, out, err) = tessera(&args);
        assert!(!ok && out.is_empty());
        assert!(
            !err.contains('\u{1b}') && !err.contains('\u{202e}'),
            "{err:?}"
        );
        assert!(err.contains("\\u{1b}[2J"), "{err}");
        assert!(err.len() < 2100, "{} bytes", err.len());
    }
}

/// Defect 16: `mpc run` checks its input before it listens or connects, so the peer never
/// sees a connection closed for a mistake of this party's.
#[test]
fn mpc_run_checks_its_input_first() {
    for side in [["--listen", "127.0.0.1:0"], ["--connect", "127.0.0.1:9"]] {
        let (ok, _, err) = tessera(&[
            "mpc",
            "run",
            "--protocol",
            "b",
            side[0],
            side[1],
            "--circuit",
            "add8",
            "--input",
            "zz",
        ]);
        assert!(!ok && !err.contains("listening"), "{err}");
        assert!(err.contains("hex") || err.contains("zz"), "{err}");
    }
}

/// `ag run`: a peer that connects and then sends nothing stops party 0 within its `--timeout`,
/// with a message.
#[test]
fn an_actively_secure_run_stops_when_the_peer_sends_nothing() {
    let addr = free_addr();
    let peer = addr.clone();
    let silent = std::thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(4) {
            if let Ok(s) = std::net::TcpStream::connect(&peer) {
                std::thread::sleep(Duration::from_secs(3));
                drop(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let start = Instant::now();
    let (ok, _, err) = tessera(&[
        "ag",
        "run",
        "--party",
        "0",
        "--parties",
        &format!("{addr},-"),
        "--circuit",
        "aes128",
        "--input",
        "000102030405060708090a0b0c0d0e0f",
        "--timeout",
        "1",
    ]);
    assert!(!ok && err.contains("error"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}: {err}",
        start.elapsed()
    );
    silent.join().unwrap();
}

/// A loopback address with a port that was free a moment ago.
fn free_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("127.0.0.1:{}", listener.local_addr().unwrap().port())
}
