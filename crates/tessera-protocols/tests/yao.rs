//! Yao between two parties equals the plaintext evaluation: on FIPS-197, on random inputs,
//! over memory, TCP and TLS, in every output mode; and every way a peer can misbehave stops
//! the other side with a named error within its timeout.

use std::thread;
use std::time::{Duration, Instant};
use tessera_circuit::Circuit;
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::library::builtin;
use tessera_core::{Block, Prg};
use tessera_garble::SchemeKind;
use tessera_net::{Channel, Stats, Tag, memory_pair, tcp, tls};
use tessera_protocols::Error;
use tessera_protocols::yao::{OutputTo, YaoEvaluator, YaoGarbler};

fn circuit(name: &str) -> Circuit {
    builtin(name).unwrap().unwrap()
}

type Both = (
    Result<Vec<Option<Vec<Vec<bool>>>>, Error>,
    Result<Vec<Option<Vec<Vec<bool>>>>, Error>,
);

/// Runs a session of `runs.len()` executions; returns each side's outputs.
fn session<C: Channel + Send + 'static>(
    garbler_channel: C,
    mut evaluator_channel: C,
    garbler_circuit: Circuit,
    evaluator_circuit: Circuit,
    outputs: OutputTo,
    runs: Vec<(Vec<bool>, Vec<bool>)>,
    scheme: SchemeKind,
) -> Both {
    let evaluator_runs: Vec<Vec<bool>> = runs.iter().map(|r| r.1.clone()).collect();
    let evaluator = thread::spawn(move || {
        let ch = &mut evaluator_channel;
        let mut e = YaoEvaluator::setup(ch, evaluator_circuit, scheme, outputs, Prg::from_os()?)?;
        evaluator_runs
            .iter()
            .map(|x| e.run(ch, x).map(|o| o.output))
            .collect::<Result<Vec<_>, _>>()
    });
    let mut garbler_channel = garbler_channel;
    let ch = &mut garbler_channel;
    let garbler = (|| {
        let mut g = YaoGarbler::setup(ch, garbler_circuit, scheme, outputs, Prg::from_os()?)?;
        runs.iter()
            .map(|(x, _)| g.run(ch, x).map(|o| o.output))
            .collect::<Result<Vec<_>, _>>()
    })();
    drop(garbler_channel);
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

#[test]
fn aes128_fips_vector_in_every_output_mode() {
    for outputs in [OutputTo::Evaluator, OutputTo::Garbler, OutputTo::Both] {
        let (a, b) = memory_pair(None);
        let (g, e) = session(
            a,
            b,
            circuit("aes128"),
            circuit("aes128"),
            outputs,
            vec![fips_inputs()],
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

/// Several executions per session, on circuits of different shapes, against plaintext.
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
            let (a, b) = memory_pair(None);
            let (g, e) = session(
                a,
                b,
                c.clone(),
                c.clone(),
                OutputTo::Both,
                runs.clone(),
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

fn tcp_pair() -> (impl Channel + Send + 'static, impl Channel + Send + 'static) {
    let listener = tcp::listen("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = thread::spawn(move || tcp::accept(&listener, Duration::from_secs(10)).unwrap());
    let client = tcp::connect(&addr, Duration::from_secs(10)).unwrap();
    (server.join().unwrap(), client)
}

#[test]
fn aes128_over_tcp() {
    let (a, b) = tcp_pair();
    let evaluator = thread::spawn(move || {
        let mut b = b;
        let mut e = YaoEvaluator::setup(
            &mut b,
            circuit("aes128"),
            SchemeKind::Prp,
            OutputTo::Evaluator,
            Prg::from_os().unwrap(),
        )
        .unwrap();
        e.run(&mut b, &fips_inputs().1).unwrap().output.unwrap()
    });
    let mut a = a;
    let mut g = YaoGarbler::setup(
        &mut a,
        circuit("aes128"),
        SchemeKind::Prp,
        OutputTo::Evaluator,
        Prg::from_os().unwrap(),
    )
    .unwrap();
    g.run(&mut a, &fips_inputs().0).unwrap();
    assert_eq!(bits_to_hex(&evaluator.join().unwrap()[0]), FIPS_CIPHER);
}

#[test]
fn aes128_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("g"), dir.path().join("e"));
    let (ca, cb) = (tls::keygen(&pa).unwrap(), tls::keygen(&pb).unwrap());
    let (cfg_a, cfg_b) = (
        tls::TlsConfig::load(&pa, &cb).unwrap(),
        tls::TlsConfig::load(&pb, &ca).unwrap(),
    );
    let listener = tcp::listen("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server =
        thread::spawn(move || tls::accept(&listener, &cfg_a, Duration::from_secs(10)).unwrap());
    let client = tls::connect(&addr, &cfg_b, Duration::from_secs(10)).unwrap();
    let server = server.join().unwrap();
    let (g, e) = session(
        server,
        client,
        circuit("aes128"),
        circuit("aes128"),
        OutputTo::Both,
        vec![fips_inputs()],
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

#[test]
fn different_circuits_or_modes_stop_both_sides() {
    let cases = [
        (
            circuit("aes128"),
            circuit("add32"),
            OutputTo::Both,
            OutputTo::Both,
        ),
        (
            circuit("add32"),
            circuit("add32"),
            OutputTo::Both,
            OutputTo::Evaluator,
        ),
    ];
    for (cg, ce, og, oe) in cases {
        let (mut a, mut b) = memory_pair(None);
        let evaluator = thread::spawn(move || {
            YaoEvaluator::setup(&mut b, ce, SchemeKind::Prp, oe, Prg::from_os().unwrap())
                .map(|_| ())
        });
        let g =
            YaoGarbler::setup(&mut a, cg, SchemeKind::Prp, og, Prg::from_os().unwrap()).map(|_| ());
        let e = evaluator.join().unwrap();
        for r in [g, e] {
            match r {
                Err(Error::Mismatch(m)) => assert!(m.contains("fingerprint"), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }
    // Two garblers.
    let (mut a, mut b) = memory_pair(None);
    let other = thread::spawn(move || {
        YaoGarbler::setup(
            &mut b,
            circuit("add8"),
            SchemeKind::Prp,
            OutputTo::Both,
            Prg::from_os().unwrap(),
        )
        .map(|_| ())
    });
    let g = YaoGarbler::setup(
        &mut a,
        circuit("add8"),
        SchemeKind::Prp,
        OutputTo::Both,
        Prg::from_os().unwrap(),
    )
    .map(|_| ());
    for r in [g, other.join().unwrap()] {
        assert!(
            matches!(r, Err(Error::Mismatch(ref m)) if m.contains("both parties are the garbler")),
            "{r:?}"
        );
    }
}

#[test]
fn different_schemes_stop_both_sides_naming_them() {
    let (mut a, mut b) = memory_pair(None);
    let evaluator = thread::spawn(move || {
        YaoEvaluator::setup(
            &mut b,
            circuit("add8"),
            SchemeKind::Mi,
            OutputTo::Both,
            Prg::from_os().unwrap(),
        )
        .map(|_| ())
    });
    let g = YaoGarbler::setup(
        &mut a,
        circuit("add8"),
        SchemeKind::Prf,
        OutputTo::Both,
        Prg::from_os().unwrap(),
    )
    .map(|_| ());
    let e = evaluator.join().unwrap();
    for (r, here, there) in [(g, "prf", "mi"), (e, "mi", "prf")] {
        match r {
            Err(Error::Mismatch(m)) => assert!(
                m.contains(&format!("garbling scheme {here} here, {there} at the peer")),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }
}

/// What a misbehaving party does to the first message it sends with a given tag.
#[derive(Clone, Copy, Debug)]
enum Misdeed {
    /// Sends one byte less.
    Truncate,
    /// Sends the payload twice over.
    Oversize,
    /// Sends random bytes of the right length.
    Garbage,
    /// Sends it under another tag (out of order).
    Retag,
    /// Sends nothing from then on and hangs up.
    HangUp,
    /// Sends nothing from then on but stays connected.
    Silent,
}

/// A channel that misbehaves once, on the first message tagged `target`.
struct Misbehaving<C> {
    inner: Option<C>,
    target: u8,
    misdeed: Misdeed,
    done: bool,
    muted: bool,
}

impl<C: Channel> Channel for Misbehaving<C> {
    fn send(&mut self, tag: Tag, payload: &[u8]) -> Result<(), tessera_net::Error> {
        if self.muted {
            return Ok(());
        }
        let Some(inner) = self.inner.as_mut() else {
            return Ok(());
        };
        if self.done || tag.id != self.target {
            return inner.send(tag, payload);
        }
        self.done = true;
        match self.misdeed {
            Misdeed::Truncate => inner.send(tag, &payload[..payload.len().saturating_sub(1)]),
            Misdeed::Oversize => inner.send(tag, &[payload, payload].concat()),
            Misdeed::Garbage => {
                let mut prg = Prg::from_os().unwrap();
                let mut junk = vec![0u8; payload.len()];
                rand_fill(&mut prg, &mut junk);
                inner.send(tag, &junk)
            }
            Misdeed::Retag => inner.send(Tag::new(0x7e, "bogus"), payload),
            Misdeed::HangUp => {
                inner.flush().ok();
                self.inner = None;
                Ok(())
            }
            Misdeed::Silent => {
                inner.flush().ok();
                self.muted = true;
                Ok(())
            }
        }
    }
    fn recv_into(&mut self, tag: Tag, out: &mut [u8]) -> Result<(), tessera_net::Error> {
        match self.inner.as_mut() {
            Some(c) => c.recv_into(tag, out),
            None => Err(tessera_net::Error::Closed(String::new())),
        }
    }
    fn recv_bounded(&mut self, tag: Tag, max: usize) -> Result<Vec<u8>, tessera_net::Error> {
        match self.inner.as_mut() {
            Some(c) => c.recv_bounded(tag, max),
            None => Err(tessera_net::Error::Closed(String::new())),
        }
    }
    fn flush(&mut self) -> Result<(), tessera_net::Error> {
        match (self.inner.as_mut(), self.muted) {
            (Some(c), false) => c.flush(),
            _ => Ok(()),
        }
    }
    fn abort(&mut self, reason: &str) {
        if let (Some(c), false) = (self.inner.as_mut(), self.muted) {
            c.abort(reason)
        }
    }
    fn stats(&self) -> Stats {
        self.inner.as_ref().map(|c| c.stats()).unwrap_or_default()
    }
}

impl<C> Drop for Misbehaving<C> {
    fn drop(&mut self) {
        // A silent peer stays connected past the honest side's timeout.
        if self.muted {
            thread::sleep(TIMEOUT * 2);
        }
    }
}

fn rand_fill(prg: &mut Prg, out: &mut [u8]) {
    for chunk in out.chunks_mut(16) {
        let b = prg.random_block().to_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

const TIMEOUT: Duration = Duration::from_millis(400);

/// One misbehaving garbler or evaluator against an honest peer: the honest side must return
/// an error, not panic and not hang past its timeout. (Garbage tables, labels or decoding
/// bits give a wrong output, which semi-honest Yao cannot detect; the check against the FIPS
/// ciphertext turns that into an error here.)
fn misbehave(garbler_misbehaves: bool, target: u8, misdeed: Misdeed) -> Result<(), Error> {
    let (a, b) = memory_pair(Some(TIMEOUT));
    let wrap = |c| Misbehaving {
        inner: Some(c),
        target,
        misdeed,
        done: false,
        muted: false,
    };
    let c = circuit("aes128");
    let (x, y) = fips_inputs();
    let start = Instant::now();
    let (c2, x2) = (c.clone(), x.clone());
    let (honest, _bad) = if garbler_misbehaves {
        let mut ch = wrap(a);
        let bad = thread::spawn(move || {
            let mut g = YaoGarbler::setup(
                &mut ch,
                c2,
                SchemeKind::Prp,
                OutputTo::Evaluator,
                Prg::from_os()?,
            )?;
            g.run(&mut ch, &x2).map(|_| ())
        });
        let mut ch = b;
        let honest = (|| {
            let mut e = YaoEvaluator::setup(
                &mut ch,
                c,
                SchemeKind::Prp,
                OutputTo::Evaluator,
                Prg::from_os()?,
            )?;
            let out = e.run(&mut ch, &y)?.output.unwrap();
            if bits_to_hex(&out[0]) == FIPS_CIPHER {
                Ok(())
            } else {
                Err(Error::Input("wrong output".into()))
            }
        })();
        (honest, bad.join().unwrap())
    } else {
        let mut ch = wrap(b);
        let bad = thread::spawn(move || {
            let mut e = YaoEvaluator::setup(
                &mut ch,
                c2,
                SchemeKind::Prp,
                OutputTo::Garbler,
                Prg::from_os()?,
            )?;
            e.run(&mut ch, &y).map(|_| ())
        });
        let mut ch = a;
        let honest = (|| {
            let mut g = YaoGarbler::setup(
                &mut ch,
                c,
                SchemeKind::Prp,
                OutputTo::Garbler,
                Prg::from_os()?,
            )?;
            let out = g.run(&mut ch, &x)?.output.unwrap();
            if bits_to_hex(&out[0]) == FIPS_CIPHER {
                Ok(())
            } else {
                Err(Error::Input("wrong output".into()))
            }
        })();
        (honest, bad.join().unwrap())
    };
    assert!(start.elapsed() < TIMEOUT * 6, "took {:?}", start.elapsed());
    honest
}

#[test]
fn a_misbehaving_garbler_stops_the_evaluator() {
    use Misdeed::*;
    // 0x30 fingerprint, 0x11 base-OT points, 0x31 input labels, 0x32 tables, 0x33 decoding.
    for target in [0x30, 0x11, 0x31, 0x32, 0x33] {
        for misdeed in [Truncate, Oversize, Garbage, Retag, HangUp, Silent] {
            let r = misbehave(true, target, misdeed);
            match r {
                Err(e) => {
                    let text = e.to_string();
                    assert!(!text.is_empty());
                    if matches!(misdeed, Silent) {
                        assert!(
                            text.contains("read timeout"),
                            "{target:#x} {misdeed:?}: {text}"
                        );
                    }
                }
                Ok(()) => panic!("{target:#x} {misdeed:?}: the evaluator noticed nothing"),
            }
        }
    }
}

#[test]
fn a_misbehaving_evaluator_stops_the_garbler() {
    use Misdeed::*;
    // 0x30 fingerprint, 0x10/0x12 base-OT point and session, 0x20 OT matrix, 0x34 colours.
    for target in [0x30, 0x10, 0x12, 0x20, 0x34] {
        for misdeed in [Truncate, Oversize, Retag, HangUp, Silent] {
            let r = misbehave(false, target, misdeed);
            assert!(
                r.is_err(),
                "{target:#x} {misdeed:?}: the garbler noticed nothing"
            );
        }
    }
}
