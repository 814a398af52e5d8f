//! Yao between two parties equals the plaintext evaluation: on FIPS-197, on random inputs,
//! over memory, TCP and TLS, in every output mode, with every scheme of the registry; and
//! every way a peer can misbehave stops the other side with a named error within its timeout,
//! the peer told once and never told back.

use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};
use tessera_circuit::Circuit;
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::library::builtin;
use tessera_core::{Block, Prg};
use tessera_garble::SchemeKind;
use tessera_net::Kind;
use tessera_net::tcp::{Mesh, listen, mesh};
use tessera_net::tls::{TlsConfig, keygen};
use tessera_net::{NetConfig, Network, memory};
use tessera_ot::{base, extension};
use tessera_protocols::yao::{self, OutputTo, Yao, YaoRole};
use tessera_protocols::{Error, Session, SessionConfig};
use tessera_testkit::tamper::{self, Edit, Target, Which};

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

const TIMEOUT: Duration = Duration::from_millis(500);

/// A garbler (party 0) and an evaluator (party 1) through the tamper harness, which edits the
/// first frame of `kind` one side sends: the honest side must fail with an error within its
/// timeout, not panic or hang. (Garbage tables, labels or decoding bits give a wrong output,
/// which semi-honest Yao cannot detect; the check against the FIPS ciphertext turns that into
/// an error here.) Also the aborts each side sent.
fn misbehave(garbler_misbehaves: bool, kind: Kind, edit: Edit) -> (Outputs, [usize; 2]) {
    let config = NetConfig::with_timeout(TIMEOUT);
    let target = Target {
        from: usize::from(!garbler_misbehaves),
        which: Which::FirstOf(kind.id),
        edit,
    };
    let (g_net, e_net, frames) = tamper::pair(Some(target), config);
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
    (checked, [frames.aborts_by(0), frames.aborts_by(1)])
}

/// The edits of these tests: random bytes (for the garbler's frames: the evaluator's decide
/// only values whose effect may be nil, such as the choice column of the OT matrix), a byte
/// more or less, the connection cut, another kind, a frame replayed, and silence.
const EDITS: [Edit; 7] = [
    Edit::Cut,
    Edit::Extend,
    Edit::Truncate,
    Edit::ChangeKind,
    Edit::Replay,
    Edit::Silence,
    Edit::Garbage,
];

#[test]
fn a_misbehaving_garbler_stops_the_evaluator() {
    let kinds = [
        yao::HELLO,
        base::POINTS,
        yao::LABELS,
        yao::TABLES,
        yao::DECODING,
    ];
    for kind in kinds {
        for edit in EDITS {
            let (r, aborts) = misbehave(true, kind, edit);
            let what = format!("{} {edit:?}", kind.name);
            let text = match r {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{what}: the evaluator noticed nothing"),
            };
            assert!(!text.is_empty());
            // Silence runs out a wait: the evaluator's own, or the garbler's first (it waits
            // on the evaluator in turn; seen under emulation), which the garbler then reports.
            if edit == Edit::Silence {
                let timed_out = text.contains("read timeout") || text.contains("a wait ran out");
                assert!(timed_out, "{what}: {text}");
            }
            // Each side tells the other at most once.
            assert!(aborts.iter().all(|&a| a <= 1), "{what}: {aborts:?}");
        }
    }
}

#[test]
fn a_misbehaving_evaluator_stops_the_garbler() {
    // The evaluator's garbage (OT matrix, colours) gives a wrong output, which the check
    // against FIPS-197 catches; a flipped hello or base-OT point is refused outright.
    for kind in [yao::HELLO, base::HELLO, extension::MATRIX, yao::COLOURS] {
        for edit in &EDITS[..6] {
            let edit = *edit;
            let (r, aborts) = misbehave(false, kind, edit);
            let what = format!("{} {edit:?}", kind.name);
            assert!(r.is_err(), "{what}: the garbler noticed nothing");
            assert!(aborts.iter().all(|&a| a <= 1), "{what}: {aborts:?}");
        }
    }
}

/// A party that stops tells its peer once; the peer, stopped by that abort, says nothing back.
#[test]
fn an_abort_is_not_echoed_back() {
    // Party 1 sends a bad hello (another kind): party 0 stops and tells it.
    let target = Target {
        from: 1,
        which: Which::FirstOf(yao::HELLO.id),
        edit: Edit::ChangeKind,
    };
    let (g_net, e_net, frames) = tamper::pair(Some(target), NetConfig::with_timeout(TIMEOUT));
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
    assert_eq!([frames.aborts_by(0), frames.aborts_by(1)], [1, 0]);
}
