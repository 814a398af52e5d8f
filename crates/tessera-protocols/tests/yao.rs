//! Yao between two parties equals the plaintext evaluation: on FIPS-197, on random inputs,
//! over memory, TCP and TLS, in every output mode, with every scheme of the registry; and
//! every way a peer can misbehave stops the other side with a named error within its timeout,
//! the peer told once and never told back.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use tessera_circuit::Circuit;
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::library::builtin;
use tessera_core::{Block, Prg};
use tessera_garble::SchemeKind;
use tessera_net::tcp::{Mesh, listen, mesh};
use tessera_net::tls::{TlsConfig, keygen};
use tessera_net::{NetConfig, Network, memory};
use tessera_protocols::yao::{OutputTo, Yao, YaoRole};
use tessera_protocols::{Error, Session, SessionConfig};

fn circuit(name: &str) -> Circuit {
    builtin(name).unwrap().unwrap()
}

type Outputs = Result<Vec<Option<Vec<Vec<bool>>>>, Error>;

/// One party: set-up, then one execution per input.
fn party(
    net: Network,
    role: YaoRole,
    c: Circuit,
    scheme: SchemeKind,
    outputs: OutputTo,
    inputs: Vec<Vec<bool>>,
) -> Outputs {
    let peer = 1 - net.id();
    let mut s = Session::new(net, SessionConfig::default())?;
    let mut yao = Yao::setup(&mut s, peer, role, c, scheme, outputs)?;
    inputs
        .iter()
        .map(|x| yao.run(&mut s, x).map(|o| o.output))
        .collect()
}

/// Runs a session of `runs.len()` executions, garbler on party 0; returns each side's outputs.
#[allow(clippy::too_many_arguments)]
fn session(
    (g_net, e_net): (Network, Network),
    (g_circuit, e_circuit): (Circuit, Circuit),
    outputs: OutputTo,
    runs: &[(Vec<bool>, Vec<bool>)],
    scheme: SchemeKind,
) -> (Outputs, Outputs) {
    let (gx, ex): (Vec<_>, Vec<_>) = runs.iter().cloned().unzip();
    let evaluator =
        thread::spawn(move || party(e_net, YaoRole::Evaluator, e_circuit, scheme, outputs, ex));
    let garbler = party(g_net, YaoRole::Garbler, g_circuit, scheme, outputs, gx);
    (garbler, evaluator.join().unwrap())
}

fn random_bits(prg: &mut Prg, n: u32) -> Vec<bool> {
    (0..n).map(|_| prg.random_block().lsb()).collect()
}

const FIPS_KEY: &str = "000102030405060708090a0b0c0d0e0f";
const FIPS_PLAIN: &str = "00112233445566778899aabbccddeeff";
const FIPS_CIPHER: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

fn fips_inputs() -> (Vec<bool>, Vec<bool>) {
    (
        bits_from_hex(FIPS_KEY, 128).unwrap(),
        bits_from_hex(FIPS_PLAIN, 128).unwrap(),
    )
}

fn aes() -> (Circuit, Circuit) {
    (circuit("aes128"), circuit("aes128"))
}

#[test]
fn aes128_fips_vector_in_every_output_mode() {
    for outputs in [OutputTo::Evaluator, OutputTo::Garbler, OutputTo::Both] {
        let (g, e) = session(
            memory::pair().unwrap(),
            aes(),
            outputs,
            &[fips_inputs()],
            SchemeKind::Prp,
        );
        let (g, e) = (g.unwrap(), e.unwrap());
        for (learns, got) in [
            (outputs != OutputTo::Evaluator, &g[0]),
            (outputs != OutputTo::Garbler, &e[0]),
        ] {
            match got {
                Some(v) if learns => assert_eq!(bits_to_hex(&v[0]), FIPS_CIPHER),
                None if !learns => {}
                other => panic!("{outputs:?}: {other:?}"),
            }
        }
    }
}

/// Several executions per session, on circuits of different shapes, with every scheme.
#[test]
fn random_inputs_equal_plaintext() {
    let mut prg = Prg::from_seed_block(Block::new(42));
    for name in ["aes128", "add32", "mul16", "lt64", "eq8", "sha256"] {
        let c = circuit(name);
        let runs: Vec<_> = (0..3)
            .map(|_| {
                (
                    random_bits(&mut prg, c.inputs[0]),
                    random_bits(&mut prg, c.inputs[1]),
                )
            })
            .collect();
        for scheme in SchemeKind::ALL {
            let (g, e) = session(
                memory::pair().unwrap(),
                (c.clone(), c.clone()),
                OutputTo::Both,
                &runs,
                scheme,
            );
            let (g, e) = (g.unwrap(), e.unwrap());
            for (k, (x, y)) in runs.iter().enumerate() {
                let expect = evaluate(&c, &[x.clone(), y.clone()]).unwrap();
                assert_eq!(
                    g[k].as_ref().unwrap(),
                    &expect,
                    "{scheme} {name} run {k} (garbler)"
                );
                assert_eq!(
                    e[k].as_ref().unwrap(),
                    &expect,
                    "{scheme} {name} run {k} (evaluator)"
                );
            }
        }
    }
}

/// A two-party TCP mesh; `tls` gives (party 0's, party 1's) configuration.
fn tcp_pair(tls: Option<(TlsConfig, TlsConfig)>, config: NetConfig) -> (Network, Network) {
    let listener = listen("127.0.0.1:0").unwrap();
    let addr = [listener.local_addr().unwrap().to_string()];
    tcp_pair_at(&listener, &addr, tls, config)
}

fn tcp_pair_at(
    listener: &TcpListener,
    addr: &[String; 1],
    tls: Option<(TlsConfig, TlsConfig)>,
    config: NetConfig,
) -> (Network, Network) {
    let setup = Duration::from_secs(10);
    thread::scope(|s| {
        let tls = &tls;
        let a = s.spawn(move || {
            let m = Mesh {
                me: 0,
                parties: 2,
                listener: Some(listener),
                lower: &[],
                tls: tls.as_ref().map(|t| &t.0),
                setup,
            };
            mesh(m, config).unwrap()
        });
        let m = Mesh {
            me: 1,
            parties: 2,
            listener: None,
            lower: addr,
            tls: tls.as_ref().map(|t| &t.1),
            setup,
        };
        let b = mesh(m, config).unwrap();
        (a.join().unwrap(), b)
    })
}

#[test]
fn aes128_over_tcp_and_tls() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("g"), dir.path().join("e"));
    let (ca, cb) = (keygen(&pa, false).unwrap(), keygen(&pb, false).unwrap());
    let tls = (
        TlsConfig::load(&pa, &[(1, cb.as_path())]).unwrap(),
        TlsConfig::load(&pb, &[(0, ca.as_path())]).unwrap(),
    );
    for tls in [None, Some(tls)] {
        let (g, e) = session(
            tcp_pair(tls, NetConfig::default()),
            aes(),
            OutputTo::Both,
            &[fips_inputs()],
            SchemeKind::Prp,
        );
        assert_eq!(
            bits_to_hex(&g.unwrap()[0].as_ref().unwrap()[0]),
            FIPS_CIPHER
        );
        assert_eq!(
            bits_to_hex(&e.unwrap()[0].as_ref().unwrap()[0]),
            FIPS_CIPHER
        );
    }
}

#[test]
fn different_circuits_modes_schemes_or_roles_stop_both_sides() {
    let cases = [
        (
            (circuit("aes128"), circuit("add32")),
            OutputTo::Both,
            OutputTo::Both,
        ),
        (
            (circuit("add32"), circuit("add32")),
            OutputTo::Both,
            OutputTo::Evaluator,
        ),
    ];
    for (circuits, og, oe) in cases {
        let (g_net, e_net) = memory::pair().unwrap();
        let (cg, ce) = circuits;
        let evaluator = thread::spawn(move || {
            party(e_net, YaoRole::Evaluator, ce, SchemeKind::Prp, oe, vec![])
        });
        let g = party(g_net, YaoRole::Garbler, cg, SchemeKind::Prp, og, vec![]);
        let e = evaluator.join().unwrap();
        // Each side finds the mismatch itself, or learns it from the other's abort.
        for r in [g, e] {
            match r {
                Err(Error::Mismatch(m)) => assert!(m.contains("fingerprint"), "{m}"),
                Err(Error::Net(tessera_net::Error::PeerAborted { code, .. })) => {
                    assert_eq!(code, tessera_net::AbortCode::Mismatch)
                }
                other => panic!("{other:?}"),
            }
        }
    }
    // Schemes: both name the two.
    let (g_net, e_net) = memory::pair().unwrap();
    let evaluator = thread::spawn(move || {
        party(
            e_net,
            YaoRole::Evaluator,
            circuit("add8"),
            SchemeKind::Mi,
            OutputTo::Both,
            vec![],
        )
    });
    let g = party(
        g_net,
        YaoRole::Garbler,
        circuit("add8"),
        SchemeKind::Prf,
        OutputTo::Both,
        vec![],
    );
    let e = evaluator.join().unwrap();
    for (r, here, there) in [(g, "prf", "mi"), (e, "mi", "prf")] {
        match r {
            Err(Error::Mismatch(m)) => assert!(
                m.contains(&format!("garbling scheme {here} here, {there} at the peer")),
                "{m}"
            ),
            Err(Error::Net(tessera_net::Error::PeerAborted { code, .. })) => {
                assert_eq!(code, tessera_net::AbortCode::Mismatch)
            }
            other => panic!("{other:?}"),
        }
    }
    // Two garblers.
    let (a, b) = memory::pair().unwrap();
    let other = thread::spawn(move || {
        party(
            b,
            YaoRole::Garbler,
            circuit("add8"),
            SchemeKind::Prp,
            OutputTo::Both,
            vec![],
        )
    });
    let g = party(
        a,
        YaoRole::Garbler,
        circuit("add8"),
        SchemeKind::Prp,
        OutputTo::Both,
        vec![],
    );
    for r in [g, other.join().unwrap()] {
        match r {
            Err(Error::Mismatch(m)) => assert!(m.contains("both parties are the garbler")),
            Err(Error::Net(tessera_net::Error::PeerAborted { code, .. })) => {
                assert_eq!(code, tessera_net::AbortCode::Mismatch)
            }
            other => panic!("{other:?}"),
        }
    }
}

/// What the relay does to the first frame of a given kind (outside the network's own space).
#[derive(Clone, Copy, Debug)]
enum Misdeed {
    /// Sends one byte less (and says so in the header).
    Truncate,
    /// Sends the payload twice over.
    Oversize,
    /// Sends random bytes of the right length.
    Garbage,
    /// Sends it under another kind (out of order).
    Retag,
    /// Sends nothing from then on and hangs up.
    HangUp,
    /// Sends nothing from then on but stays connected.
    Silent,
}

/// A frame relay between a party and its peer over TCP: forwards frames both ways, applies
/// `misdeed` to the first frame of kind `target` that `bad` (0: the listener's side) sends,
/// and counts the abort frames each side sends.
struct Relay {
    aborts: Arc<Mutex<[u32; 2]>>,
}

fn read_frame(s: &mut TcpStream) -> Option<([u8; 7], Vec<u8>)> {
    let mut h = [0u8; 7];
    s.read_exact(&mut h).ok()?;
    let len = u32::from_le_bytes([h[3], h[4], h[5], h[6]]) as usize;
    let mut p = vec![0u8; len];
    s.read_exact(&mut p).ok()?;
    Some((h, p))
}

impl Relay {
    /// Listens for party 1 at `front`, connects to party 0 at `back`.
    fn start(front: TcpListener, back: String, bad: usize, target: u8, misdeed: Misdeed) -> Relay {
        let aborts = Arc::new(Mutex::new([0u32; 2]));
        let counts = aborts.clone();
        thread::spawn(move || {
            let Ok((to_one, _)) = front.accept() else {
                return;
            };
            let Ok(to_zero) = TcpStream::connect(back) else {
                return;
            };
            let pairs = [
                (to_zero.try_clone().unwrap(), to_one.try_clone().unwrap(), 0),
                (to_one, to_zero, 1),
            ];
            let handles: Vec<_> = pairs
                .into_iter()
                .map(|(mut from, mut to, side)| {
                    let counts = counts.clone();
                    thread::spawn(move || {
                        let mut done = false;
                        while let Some((mut h, mut p)) = read_frame(&mut from) {
                            let control = h[0] == 0 && h[1] == 0;
                            if control && h[2] == 0xff {
                                counts.lock().unwrap()[side] += 1;
                            }
                            if side == bad && !done && !control && h[2] == target {
                                done = true;
                                match misdeed {
                                    Misdeed::Truncate => p.pop().map(drop).unwrap_or(()),
                                    Misdeed::Oversize => p = [p.clone(), p].concat(),
                                    Misdeed::Garbage => {
                                        let mut prg = Prg::from_os().unwrap();
                                        for c in p.chunks_mut(16) {
                                            let b = prg.random_block().to_bytes();
                                            c.copy_from_slice(&b[..c.len()]);
                                        }
                                    }
                                    Misdeed::Retag => h[2] = 0x7e,
                                    Misdeed::HangUp => {
                                        let _ = to.shutdown(std::net::Shutdown::Both);
                                        let _ = from.shutdown(std::net::Shutdown::Both);
                                        return;
                                    }
                                    Misdeed::Silent => {
                                        thread::sleep(TIMEOUT * 4);
                                        return;
                                    }
                                }
                                h[3..7].copy_from_slice(&(p.len() as u32).to_le_bytes());
                            }
                            if to.write_all(&h).and_then(|()| to.write_all(&p)).is_err() {
                                return;
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Write);
                    })
                })
                .collect();
            for h in handles {
                let _ = h.join();
            }
        });
        Relay { aborts }
    }
}

const TIMEOUT: Duration = Duration::from_millis(500);

/// A garbler (party 0) and an evaluator (party 1) through a relay that makes one side
/// misbehave once: the honest side must fail with an error within its timeout, not panic or
/// hang. (Garbage tables, labels or decoding bits give a wrong output, which semi-honest Yao
/// cannot detect; the check against the FIPS ciphertext turns that into an error here.)
fn misbehave(garbler_misbehaves: bool, target: u8, misdeed: Misdeed) -> (Outputs, [u32; 2]) {
    let config = NetConfig::with_timeout(TIMEOUT);
    let zero = listen("127.0.0.1:0").unwrap();
    let front = listen("127.0.0.1:0").unwrap();
    let front_addr = [front.local_addr().unwrap().to_string()];
    let bad = usize::from(!garbler_misbehaves);
    let relay = Relay::start(
        front,
        zero.local_addr().unwrap().to_string(),
        bad,
        target,
        misdeed,
    );
    let (g_net, e_net) = tcp_pair_at(&zero, &front_addr, None, config);
    let outputs = if garbler_misbehaves {
        OutputTo::Evaluator
    } else {
        OutputTo::Garbler
    };
    let (x, y) = fips_inputs();
    let start = Instant::now();
    let evaluator = thread::spawn(move || {
        party(
            e_net,
            YaoRole::Evaluator,
            circuit("aes128"),
            SchemeKind::Prp,
            outputs,
            vec![y],
        )
    });
    let g = party(
        g_net,
        YaoRole::Garbler,
        circuit("aes128"),
        SchemeKind::Prp,
        outputs,
        vec![x],
    );
    let e = evaluator.join().unwrap();
    assert!(start.elapsed() < TIMEOUT * 8, "took {:?}", start.elapsed());
    let honest = if garbler_misbehaves { e } else { g };
    let checked = honest.and_then(|o| match o[0].as_ref() {
        Some(v) if bits_to_hex(&v[0]) == FIPS_CIPHER => Ok(o),
        _ => Err(Error::Input("wrong output".into())),
    });
    thread::sleep(Duration::from_millis(50));
    let aborts = *relay.aborts.lock().unwrap();
    (checked, aborts)
}

#[test]
fn a_misbehaving_garbler_stops_the_evaluator() {
    use Misdeed::*;
    // 0x30 hello, 0x11 base-OT points, 0x31 input labels, 0x32 tables, 0x33 decoding.
    for target in [0x30, 0x11, 0x31, 0x32, 0x33] {
        for misdeed in [Truncate, Oversize, Garbage, Retag, HangUp, Silent] {
            let (r, aborts) = misbehave(true, target, misdeed);
            let text = match r {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{target:#x} {misdeed:?}: the evaluator noticed nothing"),
            };
            assert!(!text.is_empty());
            if matches!(misdeed, Silent) {
                assert!(
                    text.contains("read timeout"),
                    "{target:#x} {misdeed:?}: {text}"
                );
            }
            // Each side tells the other at most once.
            assert!(
                aborts.iter().all(|&a| a <= 1),
                "{target:#x} {misdeed:?}: {aborts:?}"
            );
        }
    }
}

#[test]
fn a_misbehaving_evaluator_stops_the_garbler() {
    use Misdeed::*;
    // 0x30 hello, 0x10 base-OT point and session, 0x20 OT matrix, 0x34 colours.
    for target in [0x30, 0x10, 0x20, 0x34] {
        for misdeed in [Truncate, Oversize, Retag, HangUp, Silent] {
            let (r, aborts) = misbehave(false, target, misdeed);
            assert!(
                r.is_err(),
                "{target:#x} {misdeed:?}: the garbler noticed nothing"
            );
            assert!(
                aborts.iter().all(|&a| a <= 1),
                "{target:#x} {misdeed:?}: {aborts:?}"
            );
        }
    }
}

/// A party that stops tells its peer once; the peer, stopped by that abort, says nothing back.
#[test]
fn an_abort_is_not_echoed_back() {
    let zero = listen("127.0.0.1:0").unwrap();
    let front = listen("127.0.0.1:0").unwrap();
    let front_addr = [front.local_addr().unwrap().to_string()];
    // Party 1 sends a bad hello (retagged): party 0 stops and tells it.
    let relay = Relay::start(
        front,
        zero.local_addr().unwrap().to_string(),
        1,
        0x30,
        Misdeed::Retag,
    );
    let (g_net, e_net) = tcp_pair_at(&zero, &front_addr, None, NetConfig::with_timeout(TIMEOUT));
    let evaluator = thread::spawn(move || {
        party(
            e_net,
            YaoRole::Evaluator,
            circuit("add8"),
            SchemeKind::Prp,
            OutputTo::Both,
            vec![],
        )
    });
    let g = party(
        g_net,
        YaoRole::Garbler,
        circuit("add8"),
        SchemeKind::Prp,
        OutputTo::Both,
        vec![],
    );
    let e = evaluator.join().unwrap();
    assert!(
        matches!(
            g,
            Err(Error::Net(tessera_net::Error::UnexpectedMessage {
                party: 1,
                ..
            }))
        ),
        "{g:?}"
    );
    let peer_abort = |e: &Error| {
        matches!(
            e,
            Error::Net(tessera_net::Error::PeerAborted { party: 0, .. })
                | Error::Ot(tessera_ot::Error::Net(tessera_net::Error::PeerAborted {
                    party: 0,
                    ..
                }))
        )
    };
    assert!(e.as_ref().is_err_and(peer_abort), "{e:?}");
    thread::sleep(Duration::from_millis(100));
    assert_eq!(*relay.aborts.lock().unwrap(), [1, 0]);
}
