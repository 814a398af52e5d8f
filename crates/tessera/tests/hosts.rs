//! Runs between hosts of the test's own making (issue 43): two and three network namespaces,
//! each joined by a veth pair to a bridge in a fourth (a switch), bandwidth shaped with `tbf`,
//! each host on its own address. `tessera run`, `mpc run`, `nn run` and `oaes run` (from a
//! parties file) run between them over TLS. Network namespaces need root: the test is marked
//! `#[ignore]` and `.ci/run`, which runs as root, runs it with `--ignored`. The namespaces, and
//! with them every link, are removed whatever happens.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

mod common;
use common::{data, oaes_prep};

/// `ip ARGS`, which must succeed.
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Hosts 0..n on 10.77.0.1..n/24 behind a switch; removed when dropped.
struct Hosts {
    names: Vec<String>,
    switch: String,
}

impl Hosts {
    fn new(n: usize) -> Hosts {
        let tag = std::process::id() % 100_000;
        let switch = format!("ts{tag}-sw");
        let names: Vec<String> = (0..n).map(|i| format!("ts{tag}-h{i}")).collect();
        // Made at once so that Drop removes whatever was made, even if a step fails.
        let hosts = Hosts { names, switch };
        ip(&["netns", "add", &hosts.switch]);
        hosts.exec_ok(
            &hosts.switch,
            &["ip", "link", "add", "br0", "type", "bridge"],
        );
        hosts.exec_ok(&hosts.switch, &["ip", "link", "set", "br0", "up"]);
        for (i, host) in hosts.names.iter().enumerate() {
            ip(&["netns", "add", host]);
            let (inner, outer) = (format!("ts{tag}-v{i}"), format!("ts{tag}-p{i}"));
            ip(&[
                "link", "add", &inner, "type", "veth", "peer", "name", &outer,
            ]);
            ip(&["link", "set", &inner, "netns", host]);
            ip(&["link", "set", &outer, "netns", &hosts.switch]);
            hosts.exec_ok(
                &hosts.switch,
                &["ip", "link", "set", &outer, "master", "br0"],
            );
            hosts.exec_ok(&hosts.switch, &["ip", "link", "set", &outer, "up"]);
            let addr = format!("{}/24", Hosts::address(i));
            hosts.exec_ok(host, &["ip", "addr", "add", &addr, "dev", &inner]);
            hosts.exec_ok(host, &["ip", "link", "set", &inner, "up"]);
            hosts.exec_ok(host, &["ip", "link", "set", "lo", "up"]);
            hosts.exec_ok(
                host,
                &[
                    "tc", "qdisc", "add", "dev", &inner, "root", "tbf", "rate", "1gbit", "burst",
                    "1mb", "latency", "50ms",
                ],
            );
        }
        hosts
    }

    fn address(i: usize) -> String {
        format!("10.77.0.{}", i + 1)
    }

    fn exec_ok(&self, ns: &str, args: &[&str]) {
        let out = Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{ns}: {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `tessera args` on host `i`, not started.
    fn tessera(&self, i: usize, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &self.names[i],
            env!("CARGO_BIN_EXE_tessera"),
        ])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        c
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for ns in self.names.iter().chain([&self.switch]) {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Both parties' output, the listener's started first.
fn pair(listener: &mut Command, connector: &mut Command) -> (Output, Output) {
    let first: Child = listener.spawn().unwrap();
    let second = connector.output().unwrap();
    let first = first.wait_with_output().unwrap();
    for (who, o) in [("listener", &first), ("connector", &second)] {
        assert!(
            o.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    (first, second)
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// A key and certificate for each of `n` parties in `dir`/k0.. : their certificate paths.
fn keys(hosts: &Hosts, dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let out = dir.join(format!("k{i}"));
            let o = hosts
                .tessera(0, &["keygen", "--out", out.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(o.status.success());
            out.join("cert.pem")
        })
        .collect()
}

#[test]
#[ignore = "needs root for network namespaces: .ci/run runs it with --ignored"]
fn two_and_three_hosts_over_tls_need_root() {
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p).to_str().unwrap().to_owned();
    let hosts = Hosts::new(3);
    let certs = keys(&hosts, dir.path(), 3);
    let tls = |i: usize| {
        let peer = certs[1 - i].to_str().unwrap().to_owned();
        vec![
            "--tls-dir".to_owned(),
            d(&format!("k{i}")),
            "--peer-cert".to_owned(),
            peer,
        ]
    };
    let listen = format!("{}:7000", Hosts::address(0));
    let (key, text_in) = (
        "000102030405060708090a0b0c0d0e0f",
        "00112233445566778899aabbccddeeff",
    );

    // `cmd` on host 0 (listening, with `first`) and host 1 (connecting, with `second`), TLS.
    let two = |cmd: &[&str], first: &[&str], second: &[&str]| {
        let mut sides = [(0, "--listen", first), (1, "--connect", second)].map(|(i, how, own)| {
            let mut c = hosts.tessera(i, cmd);
            c.args([how, &listen]).args(own).args(tls(i));
            c
        });
        let [listener, connector] = &mut sides;
        pair(listener, connector)
    };

    // Yao, two hosts.
    let yao = ["run", "--circuit", "aes128"];
    let (_, e) = two(
        &yao,
        &["--role", "garbler", "--input", key],
        &["--role", "evaluator", "--input", text_in],
    );
    assert_eq!(text(&e), "69c4e0d86a7b0430d8cdb78070b4c55a");

    // GMW, two hosts: 5 + 7 in 8 bits, both learn it.
    let gmw = ["mpc", "run", "--protocol", "b", "--circuit", "add8"];
    let (a, b) = two(&gmw, &["--input", "05"], &["--input", "07"]);
    assert_eq!((text(&a), text(&b)), ("0c".to_owned(), "0c".to_owned()));

    // Private inference, two hosts: the client holds the stripped architecture.
    let model = data("tests/minionn-R_S.onnx");
    let o = hosts
        .tessera(0, &["nn", "strip", &model, "-o", &d("arch.onnx")])
        .output()
        .unwrap();
    assert!(o.status.success());
    let images = data("tests/mnist-t10k-256-images.idx3-ubyte");
    let (_, c) = two(
        &["nn", "run"],
        &["--role", "server", "--model", &model],
        &[
            "--role",
            "client",
            "--model",
            &d("arch.onnx"),
            "--input",
            &images,
        ],
    );
    assert!(text(&c).starts_with("class 7"), "{}", text(&c));

    // Oblivious AES, three hosts, from one parties file.
    let o = hosts
        .tessera(0, &oaes_prep("3", "3", &d("prep")))
        .output()
        .unwrap();
    assert!(o.status.success());
    let file: String = (0..3)
        .map(|i| {
            let cert = certs[i].to_str().unwrap();
            format!(
                "[[party]]\nid = {i}\naddress = \"{}:7100\"\ncertificate = \"{cert}\"\n\n",
                Hosts::address(i)
            )
        })
        .collect();
    std::fs::write(d("parties.toml"), file).unwrap();
    let run = |i: usize| {
        let share = if i == 0 {
            key
        } else {
            "00000000000000000000000000000000"
        };
        let prep = d(&format!("prep/party-{i}.oaes"));
        let mut c = hosts.tessera(
            i,
            &[
                "oaes",
                "run",
                "--party",
                &i.to_string(),
                "--parties-file",
                &d("parties.toml"),
            ],
        );
        c.args([
            "--prep",
            &prep,
            "--tls-dir",
            &d(&format!("k{i}")),
            "--key-share",
            share,
            "--plaintext",
            text_in,
        ]);
        c
    };
    let children: Vec<Child> = (0..3).map(|i| run(i).spawn().unwrap()).collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(text(&o), "69c4e0d86a7b0430d8cdb78070b4c55a");
    }
}
