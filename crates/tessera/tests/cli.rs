//! The command line as a user runs it.

use std::process::Command;

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

/// Two processes, one per party, over TCP and over TLS with pinned certificates: the
/// evaluator prints the FIPS-197 ciphertext; a wrong certificate is refused.
#[test]
fn two_processes_compute_aes128() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let (g_dir, e_dir, x_dir) = (
        dir.path().join("g"),
        dir.path().join("e"),
        dir.path().join("x"),
    );
    for d in [&g_dir, &e_dir, &x_dir] {
        let (ok, out, err) = tessera(&["keygen", "--out", d.to_str().unwrap()]);
        assert!(ok && out.contains("cert.pem"), "{err}");
    }
    let cert = |d: &std::path::Path| d.join("cert.pem").to_str().unwrap().to_owned();
    let tls_g = [
        "--tls-dir".to_owned(),
        g_dir.to_str().unwrap().to_owned(),
        "--peer-cert".to_owned(),
        cert(&e_dir),
    ];
    let tls_e = [
        "--tls-dir".to_owned(),
        e_dir.to_str().unwrap().to_owned(),
        "--peer-cert".to_owned(),
        cert(&g_dir),
    ];
    // The evaluator pins x's certificate instead of the garbler's.
    let tls_wrong = [
        "--tls-dir".to_owned(),
        e_dir.to_str().unwrap().to_owned(),
        "--peer-cert".to_owned(),
        cert(&x_dir),
    ];
    let none: [String; 0] = [];
    for (g_extra, e_extra, should_work) in [
        (&none[..], &none[..], true),
        (&tls_g[..], &tls_e[..], true),
        (&tls_g[..], &tls_wrong[..], false),
    ] {
        let mut garbler = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args([
                "run",
                "--role",
                "garbler",
                "--listen",
                "127.0.0.1:0",
                "--circuit",
                "aes128",
                "--input",
                "000102030405060708090a0b0c0d0e0f",
                "--timeout",
                "10",
            ])
            .args(g_extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(garbler.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let addr = line.trim().rsplit(' ').next().unwrap().to_owned();
        assert!(line.contains("listening on"), "{line}");
        let (ok, out, err) = tessera(
            &[
                &[
                    "run",
                    "--role",
                    "evaluator",
                    "--connect",
                    &addr,
                    "--circuit",
                    "aes128",
                    "--input",
                    "00112233445566778899aabbccddeeff",
                    "--timeout",
                    "10",
                ][..],
                &e_extra.iter().map(String::as_str).collect::<Vec<_>>()[..],
            ]
            .concat(),
        );
        let g_status = garbler.wait().unwrap();
        let mut g_err = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut g_err).unwrap();
        if should_work {
            assert!(ok, "{err}");
            assert_eq!(out.trim(), "69c4e0d86a7b0430d8cdb78070b4c55a");
            assert!(g_status.success(), "{g_err}");
        } else {
            assert!(
                !ok && !g_status.success(),
                "a wrong certificate was accepted: {out} {err}"
            );
            assert!(err.contains("pinned") || err.contains("TLS"), "{err}");
        }
    }
}

/// Mismatched circuits stop both processes with the reason.
#[test]
fn two_processes_with_different_circuits_both_fail_clearly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut garbler = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args([
            "run",
            "--role",
            "garbler",
            "--listen",
            "127.0.0.1:0",
            "--circuit",
            "add8",
            "--input",
            "05",
            "--timeout",
            "10",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(garbler.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line.trim().rsplit(' ').next().unwrap().to_owned();
    let (ok, _, err) = tessera(&[
        "run",
        "--role",
        "evaluator",
        "--connect",
        &addr,
        "--circuit",
        "add16",
        "--input",
        "0500",
        "--timeout",
        "10",
    ]);
    let status = garbler.wait().unwrap();
    let mut g_err = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut g_err).unwrap();
    assert!(!ok && !status.success());
    assert!(err.contains("fingerprint"), "{err}");
    assert!(g_err.contains("fingerprint"), "{g_err}");
}
