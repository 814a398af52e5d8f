//! What the authenticated-garbling test files share: sessions over memory, dealt and drawn
//! material, stepped runs with messages edited on the way, and the cheating tests as functions
//! that return what went uncaught (so a test can also show that switching a check off makes
//! them fail).

#![allow(dead_code)]

use tessera_ag::share::{Keyring, Shares};
use tessera_ag::triples::{TripleBatch, Triples};
use tessera_ag::twopc::{Ended, Ending, Material, Outputs, Program, evaluator, garbler};
use tessera_ag::{Error, multi, wire};
use tessera_circuit::{Circuit, Gate, GateKind, eval};
use tessera_core::{Block, Prg};
use tessera_net::Kind;
use tessera_net::exchange::{Editor, Message};
use tessera_net::role::{self, Side};
use tessera_ot::OtChoice;
use tessera_ot::extension::{Protocol, Security};
use tessera_protocols::{Session, SessionConfig};

/// SoftSpoken (k = 8) with its consistency check.
pub fn softspoken() -> OtChoice {
    OtChoice::Extension(Protocol::softspoken(8, Security::Malicious).unwrap())
}

/// Runs `f` as both parties of a two-party session over memory with `ot`, seeded
/// ([`tessera_testkit::seed`]: a failing run can be replayed).
pub fn two_parties<T: Send>(
    ot: OtChoice,
    f: impl Fn(&mut Session) -> Result<T, Error> + Sync,
) -> [Result<T, Error>; 2] {
    tessera_testkit::two_parties(
        SessionConfig::with_ot(ot).seeded(tessera_testkit::seed()),
        f,
    )
}

/// Runs `f` as each party of an `n`-party session over memory with `ot`, seeded.
pub fn n_parties<T: Send>(
    n: usize,
    ot: OtChoice,
    f: impl Fn(&mut Session) -> Result<T, Error> + Sync,
) -> Vec<Result<T, Error>> {
    tessera_testkit::parties(
        n,
        SessionConfig::with_ot(ot).seeded(tessera_testkit::seed()),
        f,
    )
}

/// How a test tampers with one message.
#[derive(Clone, Copy, Debug)]
pub enum Tamper {
    /// Flips one bit (at this position, modulo the message's bits).
    Flip(usize),
    /// Replaces the payload with random bytes.
    Random,
    /// Replaces it with the same kind's message of another run.
    Replay,
    /// Cuts its last byte.
    Cut,
}

/// Every message of a run, as each party sent it.
pub type Transcript = Vec<(Side, Kind, Vec<u8>)>;

impl Tamper {
    /// The four ways, the flip at a position drawn from `prg`.
    pub fn all(prg: &mut Prg) -> [Tamper; 4] {
        let at = (prg.random_block().low() % (1 << 24)) as usize;
        [
            Tamper::Flip(at),
            Tamper::Random,
            Tamper::Replay,
            Tamper::Cut,
        ]
    }

    /// Applies this to `bytes`, party `side`'s message of kind `kind`; a replay takes the
    /// message from `earlier`, random bytes come from `seed`. Returns the bit flipped.
    pub fn apply(
        self,
        bytes: &mut Vec<u8>,
        (side, kind): (Side, Kind),
        earlier: &Transcript,
        seed: u128,
    ) -> Option<usize> {
        match self {
            Tamper::Flip(at) => {
                let bit = at % (bytes.len() * 8).max(1);
                let byte = bytes.get_mut(bit / 8)?;
                *byte ^= 1 << (bit % 8);
                Some(bit)
            }
            Tamper::Random => {
                let mut prg = Prg::from_seed_block(Block::new(seed + 7));
                for x in bytes.iter_mut() {
                    *x = prg.random_block().low() as u8;
                }
                None
            }
            Tamper::Replay => {
                if let Some((_, _, old)) = earlier.iter().find(|(s, k, _)| *s == side && *k == kind)
                {
                    *bytes = old.clone();
                }
                None
            }
            Tamper::Cut => {
                bytes.pop();
                None
            }
        }
    }
}

/// Whether some party of `outcome` stopped with an error that names a check or the message.
fn names_a_check<T>(outcome: &[Option<Result<T, Error>>], kind: Kind) -> bool {
    outcome.iter().any(|r| match r {
        Some(Err(e)) => {
            let t = e.to_string();
            t.contains("check") || t.contains(kind.name) || t.contains("labels")
        }
        _ => false,
    })
}

// ---- Triples ----

/// Checks that both parties' triples are correct and authenticated under each other's Δ.
pub fn triples_are_right(t: [&Triples; 2], rings: [Keyring; 2]) -> Result<(), String> {
    if t[0].len() != t[1].len() {
        return Err("the parties hold different numbers of triples".into());
    }
    for (name, s0, s1) in [
        ("x", &t[0].x, &t[1].x),
        ("y", &t[0].y, &t[1].y),
        ("z", &t[0].z, &t[1].z),
    ] {
        authentic(name, [s0, s1], rings)?;
    }
    let value = |s: [&Shares; 2], i: usize| s[0].bit(i) ^ s[1].bit(i);
    for i in 0..t[0].len() {
        let x = value([&t[0].x, &t[1].x], i);
        let y = value([&t[0].y, &t[1].y], i);
        if value([&t[0].z, &t[1].z], i) != x & y {
            return Err(format!("triple {i}: z is not x ∧ y"));
        }
    }
    Ok(())
}

/// Checks every share's MAC against the peer's key and Δ.
pub fn authentic(name: &str, s: [&Shares; 2], rings: [Keyring; 2]) -> Result<(), String> {
    for (holder, peer) in [(0, 1), (1, 0)] {
        for i in 0..s[holder].len() {
            let key = s[peer].keys()[i];
            let expect = key ^ (rings[peer].delta & Block::mask(s[holder].bit(i)));
            if key.lsb() || s[holder].macs()[i] != expect {
                return Err(format!("{name} {i}: party {holder}'s MAC or key is wrong"));
            }
        }
    }
    Ok(())
}

/// Both parties' random authenticated shares of x, y and r for `n` leaky triples (3n shares,
/// x first), dealt locally.
pub fn dealt(n: usize, prg: &mut Prg) -> ([Shares; 2], [Keyring; 2]) {
    let rings = [true, false].map(|first| Keyring {
        delta: prg.random_block().with_lsb(true),
        first,
    });
    let (mut s0, mut s1) = (Shares::default(), Shares::default());
    for _ in 0..3 * n {
        let r = prg.random_block();
        let (b0, b1) = (r.lsb(), r.high() & 1 == 1);
        let (k1, k0) = (
            prg.random_block().with_lsb(false),
            prg.random_block().with_lsb(false),
        );
        s0.push((k1 ^ (rings[1].delta & Block::mask(b0)), k0));
        s1.push((k0 ^ (rings[0].delta & Block::mask(b1)), k1));
    }
    ([s0, s1], rings)
}

/// What two stepped triple roles ended with, from which inputs.
pub type SteppedBatch = (
    [Option<Result<Triples, Error>>; 2],
    [Shares; 2],
    [Keyring; 2],
);

/// One batch of `l` triples in buckets of `b` stepped between two roles on dealt shares, with
/// `edit` applied to each message on the way.
pub fn stepped_batch(
    seed: u128,
    batch: u64,
    (l, b): (usize, usize),
    edit: impl FnMut(Side, Kind, &mut Vec<u8>),
) -> SteppedBatch {
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let (inputs, rings) = dealt(l * b, &mut prg);
    let mut roles = [0, 1].map(|p| {
        TripleBatch::new(
            rings[p],
            batch,
            b,
            inputs[p].clone(),
            Prg::from_seed_block(prg.random_block()),
        )
    });
    let [r0, r1] = &mut roles;
    let (a, c) = role::run_pair(r0, r1, edit);
    ([a, c], inputs, rings)
}

/// The triple batch's message kinds.
pub const TRIPLE_KINDS: [Kind; 6] = [
    wire::GARBLED,
    wire::SHARES,
    wire::COMMIT,
    wire::REVEAL,
    wire::OPEN,
    wire::BUCKETS,
];

/// Every message kind of a triple batch from each party tampered in the four ways, `trials`
/// times each: what was not caught. Caught means the party it was sent to never finishes and
/// some party names a check, except that a flipped garbled row the receiver's x-share ignores
/// must leave correct triples.
pub fn uncaught_in_triples(trials: u128) -> Vec<String> {
    let (l, b) = (120, 4);
    let mut earlier = Transcript::new();
    stepped_batch(7, 3, (l, b), |side, kind, bytes| {
        earlier.push((side, kind, bytes.clone()))
    });
    let mut prg = Prg::from_seed_block(Block::new(5));
    let mut missed = Vec::new();
    let senders: Vec<(Side, Kind)> = earlier.iter().map(|(s, k, _)| (*s, *k)).collect();
    for (from, kind) in senders {
        for trial in 0..trials {
            for tamper in Tamper::all(&mut prg) {
                let mut flipped = None;
                let (outcome, inputs, rings) = stepped_batch(100 + trial, 9, (l, b), |s, k, m| {
                    if s == from && k == kind {
                        flipped = tamper.apply(m, (s, k), &earlier, trial);
                    }
                });
                let victim = usize::from(from == Side::First);
                let what = format!("{} from {from:?}, {tamper:?}", kind.name);
                let ignored = kind == wire::GARBLED
                    && flipped.is_some_and(|bit| !inputs[victim].bit(bit / 128));
                let verdict = if ignored {
                    match &outcome {
                        [Some(Ok(t0)), Some(Ok(t1))] => triples_are_right([t0, t1], rings),
                        _ => Err("an ignored row stopped the batch".into()),
                    }
                } else if matches!(outcome[victim], Some(Ok(_))) {
                    Err(format!("party {victim} finished"))
                } else if !names_a_check(&outcome, kind) {
                    Err("no error names a check".into())
                } else {
                    Ok(())
                };
                if let Err(why) = verdict {
                    missed.push(format!("{what}: {why}"));
                }
            }
        }
    }
    missed
}

// ---- Two-party garbling ----

/// Both parties' function-independent material for `program`, drawn over SoftSpoken.
pub fn materials(program: &Program) -> [Material; 2] {
    let [g, e] = two_parties(softspoken(), |s| {
        let peer = 1 - s.id();
        Material::generate(s, peer, program)
    });
    [g.unwrap(), e.unwrap()]
}

/// What each party of a stepped two-party run ended with.
pub type Outcome = [Option<Result<Option<Vec<bool>>, Error>>; 2];

/// An online phase's end as the run's outputs.
fn ended(r: Option<Result<Ended, Error>>) -> Option<Result<Option<Vec<bool>>, Error>> {
    r.map(|r| r.map(Ended::outputs))
}

/// A prep phase's end as the run's: an error, or left waiting (no output either way).
fn stopped<T>(r: Option<Result<T, Error>>) -> Option<Result<Option<Vec<bool>>, Error>> {
    r.map(|r| r.map(|_| None))
}

/// One run of `program` between the two parties' roles on `values`, outputs to both, `edit`
/// applied to every message on the way.
pub fn stepped_2pc(
    program: &Program,
    [g, e]: &[Material; 2],
    values: &[Vec<bool>; 2],
    seed: u128,
    mut edit: impl FnMut(Side, Kind, &mut Vec<u8>),
) -> Outcome {
    let prg = Prg::from_seed_block(Block::new(seed));
    let mut g_prep = garbler::Prep::new(program, g.clone(), prg, None);
    let mut e_prep = evaluator::Prep::new(program, e.clone(), None);
    let (gp, ep) = role::run_pair(&mut g_prep, &mut e_prep, &mut edit);
    let (gp, ep) = match (gp, ep) {
        (Some(Ok(gp)), Some(Ok(ep))) => (gp, ep),
        (gp, ep) => return [stopped(gp), stopped(ep)],
    };
    let all = Ending::Decode(Outputs::All);
    let mut g_on = garbler::Online::new(program, gp, &values[0], all).unwrap();
    let prg = Prg::from_seed_block(Block::new(seed + 1));
    let mut e_on = evaluator::Online::new(program, ep, &values[1], all, prg).unwrap();
    let (a, b) = role::run_pair(&mut g_on, &mut e_on, &mut edit);
    [ended(a), ended(b)]
}

/// Every message kind of a two-party run of `circuit` from each party tampered in the four
/// ways, `trials` times each: what was not caught. Caught means no party learns an output
/// other than plaintext's and, unless both learn the right outputs (which only a garbled row
/// the evaluator does not select may allow), the party the message was sent to learns none and
/// some party names a check.
pub fn uncaught_in_2pc(circuit: &Circuit, trials: u128) -> Vec<String> {
    let program = Program::new(circuit).unwrap();
    let (mine, other) = (materials(&program), materials(&program));
    let mut prg = Prg::from_seed_block(Block::new(3));
    let values: [Vec<bool>; 2] = [0, 1].map(|v| {
        (0..circuit.inputs.get(v).copied().unwrap_or(0))
            .map(|_| prg.random_block().lsb())
            .collect()
    });
    let expect = eval::evaluate(circuit, &values).unwrap().concat();
    let mut earlier = Transcript::new();
    stepped_2pc(&program, &other, &values, 1, |side, kind, bytes| {
        earlier.push((side, kind, bytes.clone()))
    });
    let senders: Vec<(Side, Kind)> = earlier.iter().map(|(s, k, _)| (*s, *k)).collect();
    let mut missed = Vec::new();
    for (from, kind) in senders {
        for trial in 0..trials {
            for tamper in Tamper::all(&mut prg) {
                let outcome = stepped_2pc(&program, &mine, &values, 100 + trial, |s, k, m| {
                    if s == from && k == kind {
                        tamper.apply(m, (s, k), &earlier, trial);
                    }
                });
                if let Err(why) = verdict_2pc(&outcome, from, kind, &expect) {
                    missed.push(format!("{} from {from:?}, {tamper:?}: {why}", kind.name));
                }
            }
        }
    }
    missed
}

/// Whether a tampered run was caught (see [`uncaught_in_2pc`]).
fn verdict_2pc(outcome: &Outcome, from: Side, kind: Kind, expect: &[bool]) -> Result<(), String> {
    let victim = usize::from(from == Side::First);
    for (p, r) in outcome.iter().enumerate() {
        if matches!(r, Some(Ok(Some(z))) if z != expect) {
            return Err(format!("party {p} learned a wrong output"));
        }
    }
    let all_right = outcome
        .iter()
        .all(|r| matches!(r, Some(Ok(Some(z))) if z == expect));
    if all_right {
        return if kind == wire::TABLES {
            Ok(())
        } else {
            Err("not caught".into())
        };
    }
    if matches!(outcome[victim], Some(Ok(_))) {
        return Err(format!("party {victim} finished"));
    }
    if names_a_check(outcome, kind) {
        Ok(())
    } else {
        Err("no error names a check".into())
    }
}

/// The first party flips a bit of its garbled row of leaky triple 0 (the first of bucket 0) in
/// `runs` batches. The flip is unseen exactly when the second party's x-share of that leaky
/// triple is 0; in the batches that pass, the cheater guesses that the second party's x-share
/// of folded triple 0 is 0 too. Returns (batches passed, guesses right): bucketing hides the
/// leaked share, so only about half the guesses are right.
pub fn leak_through_buckets(runs: u128) -> (usize, usize) {
    let (mut passed, mut right) = (0, 0);
    for run in 0..runs {
        let (outcome, _, _) = stepped_batch(500 + run, 1, (120, 4), |side, kind, bytes| {
            if side == Side::First && kind == wire::GARBLED {
                bytes[0] ^= 1 << 5;
            }
        });
        if let [Some(Ok(_)), Some(Ok(t1))] = &outcome {
            passed += 1;
            right += usize::from(!t1.x.bit(0));
        }
    }
    (passed, right)
}

/// A random circuit of `gates` gates on input values of `widths`, each gate reading any
/// earlier wire or, with `window`, one of the latest (deep circuits).
pub fn random_circuit(prg: &mut Prg, widths: &[u32], gates: u32, window: Option<u32>) -> Circuit {
    let inputs: u32 = widths.iter().sum();
    let mut draw = || prg.random_block().low();
    let mut list = Vec::new();
    for i in 0..gates {
        let out = inputs + i;
        let read = |v: u64| match window {
            Some(w) => out - 1 - (v % u64::from(out.min(w))) as u32,
            None => (v % u64::from(out)) as u32,
        };
        let kind = match draw() % 10 {
            0..=3 => GateKind::And,
            4..=6 => GateKind::Xor,
            7 => GateKind::Inv,
            8 => GateKind::Eqw,
            _ => GateKind::Eq,
        };
        let (x, y) = (draw(), draw());
        let a = if kind == GateKind::Eq {
            (x & 1) as u32
        } else {
            read(x)
        };
        let b = if matches!(kind, GateKind::And | GateKind::Xor) {
            read(y)
        } else {
            0
        };
        list.push(Gate { kind, a, b, out });
    }
    let outs = gates.min(24);
    Circuit {
        num_wires: inputs + gates,
        inputs: widths.to_vec(),
        outputs: vec![outs],
        gates: list,
    }
}

/// Random input values for `c`.
pub fn random_values(prg: &mut Prg, c: &Circuit) -> Vec<Vec<bool>> {
    c.inputs
        .iter()
        .map(|&w| (0..w).map(|_| prg.random_block().lsb()).collect())
        .collect()
}

/// Every message kind each party sends in an `n`-party run of `circuit`, tampered in the four
/// ways toward one recipient (each trial the next), `trials` times each: what was not caught.
/// Caught means no honest party learns an output other than plaintext's and, unless every
/// honest party learns the right outputs (which only a garbled row the evaluator does not
/// select, a half-authenticated AND or check row that the recipient's share multiplies by 0, or
/// a garbler's own label of an input that reaches no AND gate may allow), the recipient learns
/// none and some honest party names a check or the message.
pub fn uncaught_in_multi(circuit: &Circuit, n: usize, trials: u128) -> Vec<String> {
    let mut prg = Prg::from_seed_block(Block::new(5));
    let values = random_values(&mut prg, circuit);
    let expect = eval::evaluate(circuit, &values).unwrap().concat();
    let sent = std::sync::Mutex::new(Vec::<(usize, usize, Kind, Vec<u8>)>::new());
    n_parties(n, softspoken(), |s| {
        let me = s.id();
        let record = Editor::new(|m: &Message, bytes: &mut Vec<u8>| {
            if !m.received {
                sent.lock()
                    .unwrap()
                    .push((me, m.peer, m.kind, bytes.clone()));
            }
        });
        multi::run_edited(s, circuit, &mine(&values, me), Some(record))
    });
    let sent = sent.into_inner().unwrap();
    let mut kinds: Vec<(usize, Kind)> = sent.iter().map(|(f, _, k, _)| (*f, *k)).collect();
    kinds.dedup();
    kinds.sort_by_key(|(f, k)| (*f, k.id));
    kinds.dedup();
    let mut jobs = Vec::new();
    for (from, kind) in kinds {
        let recipients: Vec<usize> = sent
            .iter()
            .filter(|(f, _, k, _)| *f == from && *k == kind)
            .map(|(_, t, _, _)| *t)
            .collect();
        for trial in 0..trials {
            let to = recipients[trial as usize % recipients.len()];
            let tampers = Tamper::all(&mut prg);
            jobs.push((from, kind, to, trial, tampers));
        }
    }
    // The trials run on every core (each run's parties on threads of their own).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let missed = std::sync::Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, |c| c.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(from, kind, to, trial, tampers)) = jobs.get(j) else {
                        break;
                    };
                    if j.is_multiple_of((jobs.len() / 20).max(1)) {
                        eprintln!("tampering trials: {j} of {} started", jobs.len());
                    }
                    let earlier: Transcript = sent
                        .iter()
                        .filter(|(f, t, k, _)| *f == from && *t == to && *k == kind)
                        .map(|(_, _, k, m)| (Side::First, *k, m.clone()))
                        .collect();
                    for tamper in tampers {
                        // A replay (or random bytes) that happens to equal the message sent is
                        // no tampering: such a run is not judged.
                        let changed = std::sync::atomic::AtomicBool::new(false);
                        let outcome = n_parties(n, softspoken(), |s| {
                            let me = s.id();
                            let edit = |msg: &Message, m: &mut Vec<u8>| {
                                let k = msg.kind;
                                if !msg.received && k == kind && msg.peer == to {
                                    let before = m.clone();
                                    tamper.apply(m, (Side::First, k), &earlier, trial);
                                    if *m != before {
                                        changed.store(true, std::sync::atomic::Ordering::Relaxed);
                                    }
                                }
                            };
                            let edit = (me == from).then(|| Editor::new(edit));
                            multi::run_edited(s, circuit, &mine(&values, me), edit)
                        });
                        if !changed.into_inner() {
                            continue;
                        }
                        if let Err(why) = verdict_multi(&outcome, from, to, kind, &expect) {
                            let line =
                                format!("{} from {from} to {to}, {tamper:?}: {why}", kind.name);
                            eprintln!("missed: {line}");
                            missed.lock().unwrap().push(line);
                        }
                    }
                }
            });
        }
    });
    missed.into_inner().unwrap()
}

/// Party `me`'s input value.
fn mine(values: &[Vec<bool>], me: usize) -> Vec<bool> {
    values.get(me).cloned().unwrap_or_default()
}

/// Whether a tampered n-party run was caught (see [`uncaught_in_multi`]).
fn verdict_multi(
    outcome: &[Result<Vec<bool>, Error>],
    from: usize,
    to: usize,
    kind: Kind,
    expect: &[bool],
) -> Result<(), String> {
    let honest = || outcome.iter().enumerate().filter(|(p, _)| *p != from);
    for (p, r) in honest() {
        if matches!(r, Ok(z) if z != expect) {
            return Err(format!("party {p} learned a wrong output"));
        }
    }
    if honest().all(|(_, r)| r.is_ok()) {
        return if [wire::N_TABLES, wire::N_LEAKY, wire::N_INPUT_LABELS].contains(&kind) {
            Ok(())
        } else {
            Err("not caught".into())
        };
    }
    if outcome[to].is_ok() {
        return Err(format!("party {to} finished"));
    }
    let named = honest().any(|(_, r)| match r {
        Err(e) => {
            let t = e.to_string();
            t.contains("check") || t.contains(kind.name)
        }
        Ok(_) => false,
    });
    if named {
        Ok(())
    } else {
        Err(format!(
            "no error names a check: {:?}",
            outcome
                .iter()
                .map(|r| r.as_ref().err().map(ToString::to_string))
                .collect::<Vec<_>>()
        ))
    }
}

/// SHA-256's compression function on the padded block of "abc" (value 0) and the initial
/// state (value 1), checked in plaintext against FIPS 180-4's digest.
pub fn sha256_abc() -> (Circuit, Vec<Vec<bool>>) {
    use tessera_circuit::library as sha;
    let c = sha::sha256_compress().unwrap();
    let block = sha::sha256_final_blocks(b"abc", 3);
    let values = vec![
        eval::bits_from_bytes(&block[0]),
        eval::bits_from_bytes(&sha::SHA256_IV),
    ];
    let digest = eval::evaluate(&c, &values).unwrap().concat();
    assert_eq!(
        eval::bits_to_hex(&digest),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    (c, values)
}

/// AES-128 on FIPS-197's key (value 0) and plaintext (value 1), checked in plaintext against
/// its ciphertext.
pub fn aes_fips197() -> (Circuit, Vec<Vec<bool>>) {
    let c = tessera_circuit::library::aes128().unwrap();
    let key = eval::bits_from_hex("000102030405060708090a0b0c0d0e0f", 128).unwrap();
    let pt = eval::bits_from_hex("00112233445566778899aabbccddeeff", 128).unwrap();
    let values = vec![key, pt];
    let ct = eval::evaluate(&c, &values).unwrap().concat();
    assert_eq!(eval::bits_to_hex(&ct), "69c4e0d86a7b0430d8cdb78070b4c55a");
    (c, values)
}

/// z = x ∧ y on input values of one bit each (party 0's x, party 1's y).
pub fn and_circuit() -> Circuit {
    Circuit {
        num_wires: 3,
        inputs: vec![1, 1],
        outputs: vec![1],
        gates: vec![Gate {
            kind: GateKind::And,
            a: 0,
            b: 1,
            out: 2,
        }],
    }
}

/// That whether a run stops does not depend on an input bit: `aborts` counts the aborts of
/// `runs` runs with the bit 0 and with it 1, each Binomial(runs, p) when the abort depends only
/// on masked values. Their difference has standard deviation √(2·runs·p(1−p)) and the test
/// allows four (a false alarm below 10^-4); each count must be within 5 standard deviations
/// √(runs·p(1−p)) of runs·p.
pub fn assert_aborts_independent([a0, a1]: [usize; 2], runs: usize, p: f64, what: &str) {
    let var = runs as f64 * p * (1.0 - p);
    assert!(
        (a0.abs_diff(a1) as f64) <= 4.0 * (2.0 * var).sqrt(),
        "{what}: aborts with the bit 0: {a0}, with 1: {a1}, of {runs} each"
    );
    for a in [a0, a1] {
        let off = (a as f64 - runs as f64 * p).abs();
        assert!(
            off <= 5.0 * var.sqrt(),
            "{what}: {a} aborts of {runs}, not about {p} of them"
        );
    }
    eprintln!("{what}: aborts with the bit 0: {a0}, with 1: {a1}, of {runs} each");
}
