//! Bristol files read in two passes ([`tessera_circuit::bristol::stream`]) against the same
//! files read whole: the same outputs on random inputs, the faults only streaming meets, and
//! memory that follows the live wires. (Refused files, streamed, are checked beside the whole
//! reader's tests in `bristol.rs`.)

use proptest::prelude::*;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use tessera_circuit::bristol::stream::{DEFAULT_WINDOW, Streamed, compiled};
use tessera_circuit::bristol::{Format, read_file, write};
use tessera_circuit::builder::Builder;
use tessera_circuit::eval::evaluate;
use tessera_circuit::{Circuit, Error, Gate, GateKind};
use tessera_core::{Block, Prg};

fn random_inputs(c: &Circuit, prg: &mut Prg) -> Vec<Vec<bool>> {
    c.inputs
        .iter()
        .map(|&w| (0..w).map(|_| prg.random_block().lsb()).collect())
        .collect()
}

fn file_with(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f.flush().unwrap();
    f
}

fn streamed(path: &Path, window: usize, inputs: &[Vec<bool>]) -> Result<Vec<Vec<bool>>, Error> {
    Streamed::open(path, window)?.evaluate(inputs)
}

#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn reference_files_stream_as_read_whole() {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/circuits/bristol");
    let mut prg = Prg::from_seed_block(Block::new(7));
    let mut files = 0;
    for sub in ["bristol_fashion", "bristol_format"] {
        for entry in std::fs::read_dir(d.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let (whole, format) = read_file(&path).unwrap();
            let s = Streamed::open(&path, 1000).unwrap();
            assert_eq!(
                (s.inputs(), s.outputs()),
                (&whole.inputs[..], &whole.outputs[..])
            );
            assert_eq!(
                (s.num_gates() as usize, s.format()),
                (whole.gates.len(), format)
            );
            let ands = whole
                .gates
                .iter()
                .filter(|g| g.kind == GateKind::And)
                .count();
            assert_eq!(s.and_gates(), ands as u64, "{path:?}");
            let windows: &[usize] = if whole.gates.len() < 50_000 {
                &[1, 7, 1000, DEFAULT_WINDOW]
            } else {
                &[333, DEFAULT_WINDOW]
            };
            for &window in windows {
                let inputs = random_inputs(&whole, &mut prg);
                let got = streamed(&path, window, &inputs).unwrap();
                assert_eq!(got, evaluate(&whole, &inputs).unwrap(), "{path:?} {window}");
            }
            files += 1;
        }
    }
    assert_eq!(files, 8);
}

/// A random valid circuit: gates read earlier wires at random and write a random order of
/// the non-input wires, so outputs (the last wires) are written anywhere and read by later
/// gates, some gates are never read and some inputs never used.
fn random_circuit(seed: u64, inputs: u32, gates: u32, outputs: u32, old: bool) -> Circuit {
    let mut prg = Prg::from_seed_block(Block::new(u128::from(seed)));
    let mut next = |n: u32| (prg.random_block().as_u128() % u128::from(n)) as u32;
    let mut order: Vec<u32> = (inputs..inputs + gates).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, next(i as u32 + 1) as usize);
    }
    let mut written: Vec<u32> = (0..inputs).collect();
    let mut list = Vec::new();
    for out in order {
        let mut pick = || written[next(written.len() as u32) as usize];
        let (a, b) = (pick(), pick());
        let kinds: &[GateKind] = if old {
            &[GateKind::Xor, GateKind::And, GateKind::Inv]
        } else {
            &[
                GateKind::Xor,
                GateKind::And,
                GateKind::Inv,
                GateKind::Eqw,
                GateKind::Eq,
            ]
        };
        let kind = kinds[next(kinds.len() as u32) as usize];
        let gate = match kind {
            GateKind::Xor | GateKind::And => Gate { kind, a, b, out },
            GateKind::Inv | GateKind::Eqw => Gate { kind, a, b: 0, out },
            GateKind::Eq => Gate {
                kind,
                a: next(2),
                b: 0,
                out,
            },
        };
        list.push(gate);
        written.push(out);
    }
    let half = inputs / 2;
    Circuit {
        num_wires: inputs + gates,
        inputs: vec![half, inputs - half],
        outputs: if old {
            vec![outputs]
        } else {
            vec![1, outputs - 1]
        },
        gates: list,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random circuits in both formats, with blank lines and CRLF line ends, give the outputs
    /// of the circuit read whole for every window size.
    #[test]
    fn random_circuits_stream_as_read_whole(
        seed in any::<u64>(),
        inputs in 2u32..40,
        gates in 40u32..400,
        window in 1usize..100,
        old in any::<bool>(),
        crlf in any::<bool>(),
    ) {
        let c = random_circuit(seed, inputs, gates, 8, old);
        c.check().unwrap();
        let format = if old { Format::Old } else { Format::Fashion };
        let mut text = write(&c, format).unwrap().replace("AND\n", "AND\n\n");
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        let f = file_with(&text);
        let mut prg = Prg::from_seed_block(Block::new(u128::from(seed) << 64));
        let x = random_inputs(&c, &mut prg);
        let want = evaluate(&c, &x).unwrap();
        let ands = c.gates.iter().filter(|g| g.kind == GateKind::And).count() as u64;
        prop_assert_eq!(Streamed::open(f.path(), window).unwrap().and_gates(), ands);
        prop_assert_eq!(streamed(f.path(), window, &x).unwrap(), want);
    }

}

/// What only a streamed read meets (the whole reader's faults, streamed, are checked beside
/// its own test): a fault the tolerant liveness pass passes over, found by the forward pass
/// at its line; a wire written twice after its first write died, which the written-wire
/// ranges catch. Each names the file.
#[test]
fn malformed_gates_name_the_line() {
    let cases = [
        (
            "2 4\n2 1 1\n2 1 1\n2 1 0 x 2 XOR\n2 1 0 1 3 AND\n",
            4,
            "\"x\"",
        ),
        (
            "3 5\n2 1 1\n1 1\n2 1 0 1 2 XOR\n2 1 2 0 3 AND\n2 1 0 1 2 AND\n",
            6,
            "already",
        ),
    ];
    for (text, line, what) in cases {
        let f = file_with(text);
        let got = Streamed::open(f.path(), 1).and_then(|s| s.evaluate(&[vec![true], vec![true]]));
        match got {
            Err(Error::Parse { line: l, message }) => {
                assert_eq!(l, line, "{text:?}: {message}");
                assert!(message.contains(what), "{text:?}: {message}");
                assert!(message.contains(&f.path().display().to_string()));
            }
            other => panic!("{text:?} gave {other:?}"),
        }
    }
}

/// A circuit iterated many times (a 64-bit mixing step: add, rotate, XOR, AND) needs the
/// positions of one step's live wires, not of the whole: 40 steps take the positions of 4
/// (within an eighth, as windows fall differently), for 10 times the gates.
#[test]
fn positions_follow_the_live_wires() {
    let chain = |steps: usize| {
        let mut b = Builder::new();
        let x = b.input(64);
        let k = b.input(64);
        let mut s = x;
        for i in 0..steps {
            let t = b.add(&s, &k);
            let r = Builder::rotl(&t, 7 + i % 5);
            let m = b.and_bits(&r, &s);
            s = b.xor_bits(&m, &t);
        }
        b.finish(&[s]).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut prg = Prg::from_seed_block(Block::new(3));
    let mut most = Vec::new();
    for steps in [4, 40] {
        let c = chain(steps);
        let path = dir.path().join(format!("chain{steps}.txt"));
        std::fs::write(&path, write(&c, Format::Fashion).unwrap()).unwrap();
        let mut s = Streamed::open(&path, 64).unwrap();
        let (mut positions, mut live) = (0, 0);
        while let Some(w) = s.next_window().unwrap() {
            positions = positions.max(w.positions);
            live = live.max(w.inputs.len());
        }
        most.push(positions);
        assert!(live <= 3 * 64, "{live}");
        let x = random_inputs(&c, &mut prg);
        let got = streamed(&path, 64, &x).unwrap();
        assert_eq!(got, evaluate(&c, &x).unwrap());
    }
    assert!(8 * most[1] <= 9 * most[0], "{most:?}");
}

/// SHA-256's compression function chained over a padded message into one file (the message
/// as input value 0, the chaining value as value 1) gives RustCrypto's digest, read whole and
/// streamed; a circuit that does not chain is refused.
#[test]
fn chained_sha256_file_gives_the_digest() {
    use sha2::Digest;
    use tessera_circuit::bristol::write_chained;
    use tessera_circuit::eval::{bits_from_bytes, bytes_from_bits};
    use tessera_circuit::library::{SHA256_IV, builtin, sha256_final_blocks};
    let step = builtin("sha256").unwrap().unwrap();
    let message: Vec<u8> = (0..150u32).map(|k| (k * 13 + 5) as u8).collect();
    let mut blocks: Vec<[u8; 64]> = message[..128]
        .chunks_exact(64)
        .map(|c| c.try_into().unwrap())
        .collect();
    blocks.extend(sha256_final_blocks(&message[128..], message.len() as u64));
    let mut text = Vec::new();
    write_chained(&step, blocks.len() as u32, Format::Fashion, &mut text).unwrap();
    let f = file_with(std::str::from_utf8(&text).unwrap());
    let (whole, _) = read_file(f.path()).unwrap();
    assert_eq!(whole.gates.len(), blocks.len() * step.gates.len());
    let x = vec![
        bits_from_bytes(&blocks.concat()),
        bits_from_bytes(&SHA256_IV),
    ];
    let digest = sha2::Sha256::digest(&message).to_vec();
    assert_eq!(bytes_from_bits(&evaluate(&whole, &x).unwrap()[0]), digest);
    assert_eq!(
        bytes_from_bits(&streamed(f.path(), 5000, &x).unwrap()[0]),
        digest
    );
    let less = builtin("lt8").unwrap().unwrap();
    assert!(write_chained(&less, 2, Format::Fashion, &mut Vec::new()).is_err());
    assert!(write_chained(&step, 0, Format::Fashion, &mut Vec::new()).is_err());
}

/// Windows read ahead on a thread of their own come in order with their positions, as read in
/// line ([`Streamed::next_window`]), and give the same outputs' positions; an error of the run
/// stops the reader and is the one returned, as is an error of the preparation.
#[test]
fn windows_read_ahead_come_in_order_and_stop_at_an_error() {
    let circuit = tessera_circuit::library::aes128().unwrap();
    let f = file_with(&write(&circuit, Format::Fashion).unwrap());
    let mut inline = Streamed::open(f.path(), 500).unwrap();
    let mut want = Vec::new();
    while let Some(w) = inline.next_window().unwrap() {
        want.push((
            w.circuit.gates.len(),
            w.inputs.to_vec(),
            w.outputs.to_vec(),
            w.positions,
        ));
    }
    let want_outputs = inline.output_positions().unwrap();
    let mut ahead = Streamed::open(f.path(), 500).unwrap();
    let mut got = Vec::new();
    let outputs = ahead
        .run_ahead(
            |c| Ok::<_, Error>(c.gates.len()),
            |w| {
                got.push((w.made, w.inputs, w.outputs, w.positions));
                Ok(())
            },
        )
        .unwrap();
    assert_eq!(got, want);
    assert_eq!(outputs, want_outputs);

    let mut ahead = Streamed::open(f.path(), 500).unwrap();
    let mut runs = 0;
    let stopped = ahead.run_ahead(
        |c| Ok::<_, Error>(c.gates.len()),
        |_| {
            runs += 1;
            match runs {
                3 => Err(Error::Input("stop here".into())),
                _ => Ok(()),
            }
        },
    );
    assert!(matches!(stopped, Err(Error::Input(m)) if m == "stop here"));
    assert_eq!(runs, 3);

    let mut ahead = Streamed::open(f.path(), 500).unwrap();
    let refused = ahead.run_ahead(
        |_| Err::<usize, _>(Error::Input("cannot prepare".into())),
        |_| Ok(()),
    );
    assert!(matches!(refused, Err(Error::Input(m)) if m == "cannot prepare"));
}

/// `text` (a Bristol file) compiled ([`Streamed::compile`]) to a file of its own.
fn compiled(text: &Path) -> tempfile::NamedTempFile {
    let mut out = tempfile::NamedTempFile::new().unwrap();
    Streamed::open(text, DEFAULT_WINDOW)
        .unwrap()
        .compile(out.as_file_mut())
        .unwrap();
    out
}

/// A compiled file's bytes with its checksum made anew, as an editor who knows the format
/// would leave them.
fn with_checksum(mut bytes: Vec<u8>) -> Vec<u8> {
    let end = bytes.len() - 32;
    let mut h = blake3::Hasher::new_derive_key(compiled::CHECKSUM_CONTEXT);
    h.update(&bytes[compiled::MAGIC.len()..end]);
    bytes[end..].copy_from_slice(h.finalize().as_bytes());
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A compiled file reads as its text does: the same digest (so a party reading one runs
    /// against a party reading the other), counts, format and shape, the same outputs in
    /// windows of any size, and the same circuit read whole.
    #[test]
    fn compiled_files_read_as_their_text(
        seed in any::<u64>(),
        inputs in 2u32..40,
        gates in 40u32..400,
        window in 1usize..100,
        old in any::<bool>(),
    ) {
        let c = random_circuit(seed, inputs, gates, 8, old);
        let format = if old { Format::Old } else { Format::Fashion };
        let text = file_with(&write(&c, format).unwrap());
        let bin = compiled(text.path());
        let (t, b) = (
            Streamed::open(text.path(), window).unwrap(),
            Streamed::open(bin.path(), window).unwrap(),
        );
        prop_assert_eq!(t.digest(), b.digest());
        prop_assert_eq!(
            (t.num_gates(), t.and_gates(), t.format(), t.inputs(), t.outputs()),
            (b.num_gates(), b.and_gates(), b.format(), b.inputs(), b.outputs())
        );
        let mut prg = Prg::from_seed_block(Block::new(u128::from(seed) << 64));
        let x = random_inputs(&c, &mut prg);
        prop_assert_eq!(b.evaluate(&x).unwrap(), evaluate(&c, &x).unwrap());
        let (whole, f) = read_file(bin.path()).unwrap();
        prop_assert_eq!((whole.gates, f), (c.gates, format));
    }
}

/// Every one-bit edit of a compiled file, anywhere in it, is refused, read in windows or read
/// whole, never run to outputs (the checksum, before the last window; the header's checks
/// before it), and for a file of no gates on opening.
#[test]
fn every_bit_flip_of_a_compiled_file_is_refused() {
    let c = random_circuit(5, 12, 60, 8, false);
    let text = file_with(&write(&c, Format::Fashion).unwrap());
    let good = std::fs::read(compiled(text.path()).path()).unwrap();
    let x = random_inputs(&c, &mut Prg::from_seed_block(Block::new(9)));
    let edited = tempfile::NamedTempFile::new().unwrap();
    for i in 0..good.len() * 8 {
        let mut bytes = good.clone();
        bytes[i / 8] ^= 1 << (i % 8);
        std::fs::write(edited.path(), &bytes).unwrap();
        let streamed = streamed(edited.path(), 7, &x);
        assert!(streamed.is_err(), "bit {i} of {}", good.len() * 8);
        assert!(read_file(edited.path()).is_err(), "bit {i}, read whole");
    }
    std::fs::write(edited.path(), &good).unwrap();
    assert_eq!(
        streamed(edited.path(), 7, &x).unwrap(),
        evaluate(&c, &x).unwrap()
    );
    // A file of no gates has no last record: its checksum is compared on opening.
    let empty = file_with("0 0\n0\n0\n");
    let good = std::fs::read(compiled(empty.path()).path()).unwrap();
    std::fs::write(edited.path(), &good).unwrap();
    assert!(Streamed::open(edited.path(), 7).is_ok());
    for i in 0..good.len() * 8 {
        let mut bytes = good.clone();
        bytes[i / 8] ^= 1 << (i % 8);
        std::fs::write(edited.path(), &bytes).unwrap();
        assert!(
            Streamed::open(edited.path(), 7).is_err(),
            "bit {i}, no gates"
        );
    }
}

/// An edit of a file's bytes: which gate it breaks and the words the fault must have.
type Edit<'a> = dyn Fn(&mut Vec<u8>) -> (usize, &'static str) + 'a;

/// A compiled file edited with its checksum made anew is judged as its text would be, the
/// fault naming the gate and its record's byte: a wire read before it is written, a record of
/// no gate, and a shape the gates cannot back. A text file with a fault does not compile, and
/// nothing is written.
#[test]
fn edited_compiled_files_name_the_gate() {
    let c = random_circuit(6, 12, 60, 8, false);
    let text = file_with(&write(&c, Format::Fashion).unwrap());
    let good = std::fs::read(compiled(text.path()).path()).unwrap();
    let records_at = good.len() - 32 - 60 * 13;
    let x = random_inputs(&c, &mut Prg::from_seed_block(Block::new(9)));
    let edited = tempfile::NamedTempFile::new().unwrap();
    // The first gate with two inputs reads the wire the last gate writes.
    let unwritten = |bytes: &mut Vec<u8>| {
        let k = c.gates.iter().position(|g| g.inputs().len() == 2).unwrap();
        let at = records_at + k * 13 + 1;
        bytes[at..at + 4].copy_from_slice(&c.gates[59].out.to_le_bytes());
        (k, "before any gate writes it")
    };
    let no_gate = |bytes: &mut Vec<u8>| {
        bytes[records_at + 30 * 13] |= 0xf;
        (30, "not a gate's record")
    };
    let edits: [&Edit<'_>; 2] = [&unwritten, &no_gate];
    for edit in edits {
        let mut bytes = good.clone();
        let (gate, what) = edit(&mut bytes);
        std::fs::write(edited.path(), with_checksum(bytes)).unwrap();
        for got in [
            streamed(edited.path(), 7, &x).map(|_| ()),
            read_file(edited.path()).map(|_| ()),
        ] {
            let Err(Error::Parse { line: 0, message }) = got else {
                panic!("gate {gate}: {got:?}");
            };
            let at = format!("gate {gate} (the record at byte {}", records_at + gate * 13);
            assert!(message.contains(&at) && message.contains(what), "{message}");
        }
    }
    let mut bytes = good.clone();
    // Wires (after the format byte and the gate count) beyond inputs plus gates.
    bytes[21..25].copy_from_slice(&1000u32.to_le_bytes());
    std::fs::write(edited.path(), with_checksum(bytes)).unwrap();
    let refused = Streamed::open(edited.path(), 7).err().unwrap().to_string();
    assert!(refused.contains("compiled circuit header"), "{refused}");

    let faulty = file_with("3 5\n2 1 1\n1 1\n2 1 0 1 2 XOR\n2 1 2 0 3 AND\n2 1 0 1 2 AND\n");
    let mut out = Vec::new();
    let refused = Streamed::open(faulty.path(), 2).unwrap().compile(&mut out);
    assert!(
        matches!(refused, Err(Error::Parse { line: 6, .. })),
        "{refused:?}"
    );
    assert!(out.is_empty());
}
