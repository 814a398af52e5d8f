//! Yao of circuit files streamed window by window between two parties, each reading the file
//! itself, equals the plaintext evaluation for every scheme and output mode, over memory and
//! TCP; parties with different files or windows stop with a mismatch.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;
use tessera_circuit::Circuit;
use tessera_circuit::bristol::stream::Streamed;
use tessera_circuit::bristol::{Format, write};
use tessera_circuit::eval::evaluate;
use tessera_circuit::library::builtin;
use tessera_core::{Block, Prg};
use tessera_garble::SchemeKind;
use tessera_net::{NetConfig, Network, memory, tcp};
use tessera_protocols::yao::file::{self as yao_file, FileOutcome};
use tessera_protocols::yao::{OutputTo, YaoRole};
use tessera_protocols::{Error, Session, SessionConfig};

type Both = (Result<FileOutcome, Error>, Result<FileOutcome, Error>);

fn party(
    net: Network,
    role: YaoRole,
    (path, window): (&Path, usize),
    (scheme, outputs): (SchemeKind, OutputTo),
    input: &[bool],
) -> Result<FileOutcome, Error> {
    let peer = 1 - net.id();
    let mut s = Session::new(net, SessionConfig::default())?;
    let file = Streamed::open(path, window)?;
    yao_file::run(&mut s, (peer, role), file, (scheme, outputs), input)
}

/// The garbler on party 0 with `g`'s file and window, the evaluator with `e`'s.
fn run(
    (g_net, e_net): (Network, Network),
    (g, e): ((PathBuf, usize), (PathBuf, usize)),
    modes: (SchemeKind, OutputTo),
    (gx, ex): (Vec<bool>, Vec<bool>),
) -> Both {
    let evaluator =
        thread::spawn(move || party(e_net, YaoRole::Evaluator, (&e.0, e.1), modes, &ex));
    let garbler = party(g_net, YaoRole::Garbler, (&g.0, g.1), modes, &gx);
    (garbler, evaluator.join().unwrap())
}

fn written(dir: &Path, name: &str) -> (PathBuf, Circuit) {
    let c = builtin(name).unwrap().unwrap();
    let path = dir.join(format!("{name}.txt"));
    std::fs::write(&path, write(&c, Format::Fashion).unwrap()).unwrap();
    (path, c)
}

fn random_bits(prg: &mut Prg, n: u32) -> Vec<bool> {
    (0..n).map(|_| prg.random_block().lsb()).collect()
}

#[test]
fn streamed_files_equal_plaintext_for_every_scheme_and_output_mode() {
    let dir = tempfile::tempdir().unwrap();
    let mut prg = Prg::from_seed_block(Block::new(21));
    for (name, window) in [("aes128", 1000), ("mul32", 64)] {
        let (path, c) = written(dir.path(), name);
        for scheme in SchemeKind::ALL {
            for outputs in [OutputTo::Evaluator, OutputTo::Garbler, OutputTo::Both] {
                let x = [
                    random_bits(&mut prg, c.inputs[0]),
                    random_bits(&mut prg, c.inputs[1]),
                ];
                let want = evaluate(&c, &x).unwrap();
                let files = ((path.clone(), window), (path.clone(), window));
                let (g, e) = run(memory::pair().unwrap(), files, (scheme, outputs), x.into());
                let (g, e) = (g.unwrap(), e.unwrap());
                let learns = |yes: bool| yes.then(|| want.clone());
                let garbler_learns = outputs != OutputTo::Evaluator;
                let evaluator_learns = outputs != OutputTo::Garbler;
                assert_eq!(
                    g.output,
                    learns(garbler_learns),
                    "{name} {scheme} {outputs:?}"
                );
                assert_eq!(
                    e.output,
                    learns(evaluator_learns),
                    "{name} {scheme} {outputs:?}"
                );
                assert_eq!(g.gates, c.gates.len() as u64);
            }
        }
    }
}

#[test]
fn streamed_file_over_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let (path, c) = written(dir.path(), "sha256");
    let nets = tcp::loopback(2, None, Duration::from_secs(10), NetConfig::default()).unwrap();
    let mut nets = nets.into_iter();
    let pair = (nets.next().unwrap(), nets.next().unwrap());
    let mut prg = Prg::from_seed_block(Block::new(5));
    let x = [
        random_bits(&mut prg, c.inputs[0]),
        random_bits(&mut prg, c.inputs[1]),
    ];
    let want = evaluate(&c, &x).unwrap();
    let files = ((path.clone(), 4096), (path, 4096));
    let modes = (SchemeKind::ALL[0], OutputTo::Both);
    let (g, e) = run(pair, files, modes, x.into());
    assert_eq!(g.unwrap().output, Some(want.clone()));
    assert_eq!(e.unwrap().output, Some(want));
}

#[test]
fn different_files_or_windows_stop_both_parties() {
    let dir = tempfile::tempdir().unwrap();
    let (aes, c) = written(dir.path(), "aes128");
    // The same gates with one more blank line: other bytes, another digest.
    let other = dir.path().join("other.txt");
    let text = std::fs::read_to_string(&aes).unwrap();
    std::fs::write(&other, format!("{text}\n\n")).unwrap();
    let x = [
        vec![false; c.inputs[0] as usize],
        vec![true; c.inputs[1] as usize],
    ];
    let modes = (SchemeKind::ALL[0], OutputTo::Both);
    for files in [
        ((aes.clone(), 1000), (aes.clone(), 2000)),
        ((aes.clone(), 1000), (other.clone(), 1000)),
    ] {
        let (g, e) = run(memory::pair().unwrap(), files, modes, x.clone().into());
        assert!(matches!(g, Err(Error::Mismatch(_))), "{g:?}");
        assert!(matches!(e, Err(Error::Mismatch(_))), "{e:?}");
    }
}
