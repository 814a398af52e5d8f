//! The command line as a user runs it.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

fn tessera(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn circuit_info_and_eval_on_a_half_adder() {
    let dir = std::env::temp_dir().join(format!("tessera-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("half_adder.txt");
    std::fs::write(&file, "2 4\n2 1 1\n2 1 1\n\n2 1 0 1 2 XOR\n2 1 0 1 3 AND\n").unwrap();
    let f = file.to_str().unwrap();
    let (ok, out, _) = tessera(&["circuit", "info", "--json", f]);
    assert!(ok);
    assert!(
        out.contains("\"and_gates\":1")
            && out.contains("\"xor_gates\":1")
            && out.contains("\"and_depth\":1"),
        "{out}"
    );
    for (a, b, sum, carry) in [
        ("00", "00", "00", "00"),
        ("01", "00", "01", "00"),
        ("01", "01", "00", "01"),
    ] {
        let (ok, out, err) = tessera(&["circuit", "eval", f, "--input", a, "--input", b]);
        assert!(ok, "{err}");
        assert_eq!(out, format!("{sum}\n{carry}\n"));
    }
    let (ok, _, err) = tessera(&["circuit", "eval", f, "--input", "02", "--input", "00"]);
    assert!(!ok && err.contains("beyond its 1 bits"), "{err}");
    std::fs::write(&file, "2 4\n2 1 1\n2 1 1\n2 1 0 1 2 XOR\n2 1 0 1 2 AND\n").unwrap();
    let (ok, _, err) = tessera(&["circuit", "info", f]);
    assert!(
        !ok && err.contains("line 5") && err.lines().count() == 1,
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn builtin_circuits_by_name() {
    let (ok, out, err) = tessera(&[
        "circuit",
        "eval",
        "aes128",
        "--input",
        "000102030405060708090a0b0c0d0e0f",
        "--input",
        "00112233445566778899aabbccddeeff",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, "69c4e0d86a7b0430d8cdb78070b4c55a\n");
    let (ok, out, _) = tessera(&["circuit", "info", "--json", "aes128"]);
    assert!(ok && out.contains("\"and_gates\":6400"), "{out}");
    let (ok, _, err) = tessera(&["circuit", "info", "no-such-circuit"]);
    assert!(!ok && err.contains("neither a built-in circuit"), "{err}");
}

#[test]
fn unknown_or_unsupported_backend_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["bench", "aes"])
        .env("TESSERA_AES_BACKEND", "vaes1024")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("vaes1024"));
}

/// `tessera demo` runs AES-128 as a 2PC in one process and checks it against plain AES.
#[test]
fn demo_checks_its_ciphertext() {
    let (ok, out, err) = tessera(&["demo", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["correct"], true);
    assert_eq!(v["ciphertext"], v["plain_aes"]);
    assert!(v["garbler"]["bytes_sent"].as_u64().unwrap() > 6400 * 32);
}

/// A garbler process listening on a free port: the process, its address and its stderr.
fn spawn_garbler(
    circuit: &str,
    input: &str,
    extra: &[String],
) -> (
    std::process::Child,
    String,
    BufReader<std::process::ChildStderr>,
) {
    let mut garbler = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args([
            "run",
            "--role",
            "garbler",
            "--listen",
            "127.0.0.1:0",
            "--timeout",
            "10",
        ])
        .args(["--circuit", circuit, "--input", input])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(garbler.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("listening on"), "{line}");
    let addr = line.trim().rsplit(' ').next().unwrap().to_owned();
    (garbler, addr, stderr)
}

/// The evaluator process's (success, stdout, stderr), and then the garbler's (success, stderr).
fn run_evaluator(
    garbler: (
        std::process::Child,
        String,
        BufReader<std::process::ChildStderr>,
    ),
    circuit: &str,
    input: &str,
    extra: &[String],
) -> ((bool, String, String), (bool, String)) {
    let (mut child, addr, mut stderr) = garbler;
    let mut args = vec![
        "run",
        "--role",
        "evaluator",
        "--connect",
        &addr,
        "--timeout",
        "10",
    ];
    args.extend(["--circuit", circuit, "--input", input]);
    args.extend(extra.iter().map(String::as_str));
    let evaluator = tessera(&args);
    let status = child.wait().unwrap();
    let mut g_err = String::new();
    stderr.read_to_string(&mut g_err).unwrap();
    (evaluator, (status.success(), g_err))
}

/// Two processes, one per party, over TCP and over TLS with pinned certificates: the
/// evaluator prints the FIPS-197 ciphertext; a wrong certificate is refused.
#[test]
fn two_processes_compute_aes128() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    for d in ["g", "e", "x"] {
        let (ok, out, err) = tessera(&["keygen", "--out", &path(d)]);
        assert!(ok && out.contains("cert.pem"), "{err}");
    }
    let tls = |own: &str, peer: &str| {
        vec![
            "--tls-dir".to_owned(),
            path(own),
            "--peer-cert".to_owned(),
            path(&format!("{peer}/cert.pem")),
        ]
    };
    // Last case: the evaluator pins x's certificate instead of the garbler's.
    for (g_extra, e_extra, should_work) in [
        (vec![], vec![], true),
        (tls("g", "e"), tls("e", "g"), true),
        (tls("g", "e"), tls("e", "x"), false),
    ] {
        let garbler = spawn_garbler("aes128", "000102030405060708090a0b0c0d0e0f", &g_extra);
        let ((ok, out, err), (g_ok, g_err)) = run_evaluator(
            garbler,
            "aes128",
            "00112233445566778899aabbccddeeff",
            &e_extra,
        );
        if should_work {
            assert!(ok, "{err}");
            assert_eq!(out.trim(), "69c4e0d86a7b0430d8cdb78070b4c55a");
            assert!(g_ok, "{g_err}");
        } else {
            assert!(
                !ok && !g_ok,
                "a wrong certificate was accepted: {out} {err}"
            );
            assert!(err.contains("pinned") || err.contains("TLS"), "{err}");
        }
    }
}

/// Mismatched circuits stop both processes with the reason.
#[test]
fn two_processes_with_different_circuits_both_fail_clearly() {
    let garbler = spawn_garbler("add8", "05", &[]);
    let ((ok, _, err), (g_ok, g_err)) = run_evaluator(garbler, "add16", "0500", &[]);
    assert!(!ok && !g_ok);
    assert!(err.contains("fingerprint"), "{err}");
    assert!(g_err.contains("fingerprint"), "{g_err}");
}

/// Defect 1: a 5-line file that declares 4 Gi input wires behind one gate is refused at the
/// line that declares them, before any wire table is allocated (it grew past 3 GB before).
/// Defect 2: an endless file is refused at its first line, not read to the end.
/// Defect 5: hex inputs take digits only, no sign.
#[test]
fn hostile_circuit_files_and_inputs_are_refused_early() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.txt");
    std::fs::write(
        &bomb,
        "1 4294967295\n2 2147483648 2147483646\n1 1\n\n2 1 0 1 4294967294 XOR\n",
    )
    .unwrap();
    let bomb = bomb.to_str().unwrap();
    for args in [
        vec!["circuit", "info", bomb],
        vec!["circuit", "eval", bomb, "--input", "00", "--input", "00"],
    ] {
        let (ok, _, err) = tessera(&args);
        assert!(
            !ok && err.contains("line 2") && err.contains("can read at most 2"),
            "{args:?}: {err}"
        );
    }
    let start = std::time::Instant::now();
    let (ok, _, err) = tessera(&["circuit", "info", "/dev/zero"]);
    assert!(
        !ok && err.contains("line 1") && err.contains("longer than the limit"),
        "{err}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    let (ok, _, err) = tessera(&["circuit", "eval", "add8", "--input", "+f", "--input", "01"]);
    assert!(!ok && err.contains("not hex at digit 0"), "{err}");
}
