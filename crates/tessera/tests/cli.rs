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
