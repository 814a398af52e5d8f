//! Authenticated garbling among n parties: Wang-Ranellucci-Katz, "Global-scale secure
//! multiparty computation" (CCS 2017, eprint 2017/189; WRK17b). Party 0 evaluates, parties 1
//! to n − 1 garble, and every party learns the outputs; a coalition of up to n − 1 parties that
//! deviates makes every honest party stop with an error naming the check that failed.
//!
//! - [`share`]: authenticated shares among n parties, their openings, coins and the check that
//!   a party authenticated the same bits to every peer (WRK17b §3).
//! - [`triples`]: authenticated AND triples: pairwise half-authenticated ANDs, WRK17b's check of
//!   the leaky triples, and bucketing (WRK17b §3, Fig. 8).
//! - [`garbling`]: the distributed garbled circuit (WRK17b §4, Fig. 9): each garbler's four
//!   rows per AND gate carry its share of the row's output mask with its MACs under every
//!   other party's Δ and its part of the output label; the evaluator checks the MACs under its
//!   own Δ as it evaluates, and each garbler checks the output labels under its own.
//!
//! Phases: `setup` (base OTs on every link), `function-independent` (masks and triples),
//! `function-dependent` (Beaver's openings for the AND masks and the garbled rows) and `online`
//! (inputs, evaluation, outputs). Every exchange is one round of messages between all pairs
//! ([`Exchange::round`]), each of exactly the length the protocol fixes.
//!
//! A circuit file runs window by window ([`run_file`]), the live wires carried between
//! windows. Left out so far: threads, and YWZ20's cheaper triples.

pub mod garbling;
pub mod share;
pub mod triples;

use crate::Error;
use garbling::{Carry, Ended, Ending, Start};
use sha2::Digest;
use share::Party;
use tessera_circuit::bristol::stream::Streamed;
use tessera_circuit::{Circuit, GateKind};
use tessera_net::exchange::{Editor, Exchange as _, Expect, Links, Out};
use tessera_net::{Kind, Space};
use tessera_protocols::Session;

/// One round: a message of one kind to some peers, and the lengths expected back.
#[derive(Debug)]
pub struct Round {
    kind: Kind,
    out: Vec<Option<Vec<u8>>>,
    expect: Vec<Option<usize>>,
}

impl Round {
    /// Sends `out[j]` to each party `j` that has one and waits for exactly `expect[j]` bytes
    /// from each that has one.
    pub fn new(kind: Kind, out: Vec<Option<Vec<u8>>>, expect: Vec<Option<usize>>) -> Self {
        Round { kind, out, expect }
    }
}

/// The links of one n-party run: a message space on each and, in cheating tests, the editor
/// this party's messages pass through. Rounds go through the network's shared exchange
/// ([`tessera_net::exchange`]), as oblivious AES's do.
#[derive(Debug)]
pub struct Exchange<'e> {
    spaces: Vec<Option<Space>>,
    editor: Option<Editor<'e>>,
}

impl<'e> Exchange<'e> {
    /// A space on every link of `s` (every party makes its exchange at the same point).
    pub fn new(s: &mut Session, editor: Option<Editor<'e>>) -> Result<Self, Error> {
        let me = s.id();
        let spaces = (0..s.parties())
            .map(|j| {
                if j == me {
                    Ok(None)
                } else {
                    s.space(j).map(Some)
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Exchange { spaces, editor })
    }

    /// Runs `round`: every message goes out, then every expected one is read, each of exactly
    /// its length. Returns the messages by sender.
    pub fn round(&mut self, s: &mut Session, round: Round) -> Result<Vec<Option<Vec<u8>>>, Error> {
        let mut links = Links::per_link(s.network(), &self.spaces);
        let mut received = vec![Vec::new(); round.expect.len()];
        let (out, expect) = (Out::Some(&round.out), Expect::Some(&round.expect));
        match self.editor.as_mut() {
            Some(e) => e
                .over(&mut links)
                .round(round.kind, out, expect, &mut received)?,
            None => links.round(round.kind, out, expect, &mut received)?,
        }
        let got = round.expect.iter().zip(received);
        Ok(got.map(|(len, r)| len.map(|_| r)).collect())
    }
}

/// The inputs each party gives: input value i of the circuit is party i's; parties past the
/// circuit's values give none.
pub fn check_inputs(circuit: &Circuit, n: usize, me: usize, inputs: &[bool]) -> Result<(), Error> {
    if n < 2 {
        return Err(Error::Usage(format!("{n} parties: at least 2 are needed")));
    }
    if circuit.inputs.len() > n {
        return Err(Error::Usage(format!(
            "the circuit has {} input values, one per party, but there are {n} parties",
            circuit.inputs.len()
        )));
    }
    let want = circuit.inputs.get(me).copied().unwrap_or(0) as usize;
    if inputs.len() != want {
        return Err(Error::Usage(format!(
            "party {me} gives {} input bits; the circuit's input value {me} has {want}",
            inputs.len()
        )));
    }
    Ok(())
}

/// Runs `circuit` among the parties of `session` (party 0 evaluating) on this party's
/// `inputs`; every party learns every output. See the module documentation.
///
/// ```
/// use tessera_ag::multi;
/// use tessera_circuit::{Circuit, Gate, GateKind};
/// use tessera_net::{NetConfig, memory};
/// use tessera_ot::OtChoice;
/// use tessera_ot::extension::{Protocol, Security};
/// use tessera_protocols::{Session, SessionConfig};
///
/// // Three parties' bits, ANDed: party 2 gives a bit too.
/// let circuit = Circuit {
///     num_wires: 5,
///     inputs: vec![1, 1, 1],
///     outputs: vec![1],
///     gates: vec![
///         Gate { kind: GateKind::And, a: 0, b: 1, out: 3 },
///         Gate { kind: GateKind::And, a: 3, b: 2, out: 4 },
///     ],
/// };
/// let ot = OtChoice::Extension(Protocol::softspoken(8, Security::Malicious)?);
/// let parties: Vec<_> = memory::mesh(3, NetConfig::default())?
///     .into_iter()
///     .map(|network| {
///         let circuit = circuit.clone();
///         std::thread::spawn(move || {
///             let mut s = Session::new(network, SessionConfig::with_ot(ot)).unwrap();
///             multi::run(&mut s, &circuit, &[true])
///         })
///     })
///     .collect();
/// for p in parties {
///     assert_eq!(p.join().unwrap()?, vec![true]);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(session: &mut Session, circuit: &Circuit, inputs: &[bool]) -> Result<Vec<bool>, Error> {
    run_edited(session, circuit, inputs, None)
}

/// [`run`], with this party's messages passed through `editor`: what the cheating tests use to
/// play a party that deviates.
pub fn run_edited(
    session: &mut Session,
    circuit: &Circuit,
    inputs: &[bool],
    editor: Option<Editor<'_>>,
) -> Result<Vec<bool>, Error> {
    session.run_with(|s| {
        check_inputs(circuit, s.parties(), s.id(), inputs)?;
        circuit.check()?;
        let mut runner = Runner::start(s, editor, |h| {
            h.update(b"circuit");
            h.update(circuit.digest());
        })?;
        match runner.program(s, circuit, Start::Fresh(inputs), Ending::Decode)? {
            Ended::Outputs(z) => Ok(z),
            Ended::Carried(_) => Err(Error::Usage("a decoded run carried its outputs".into())),
        }
    })
}

/// Runs a circuit file among the parties of `session`, window by window as `file` gives them
/// ([`tessera_circuit::bristol::stream`]): the inputs go in as a program of their own (input
/// value i is party i's), each window is then a program whose input wires are carried by
/// position from the ones before (masks, labels and masked values in a store that grows with
/// the live wires, not the file), and the outputs come out as a last program, opened to every
/// party. Memory follows one window and the live wires; each window's triples are made as it
/// comes.
pub fn run_file(
    session: &mut Session,
    file: &mut Streamed,
    inputs: &[bool],
) -> Result<Vec<bool>, Error> {
    session.run_with(|s| {
        let widths = file.inputs().to_vec();
        let entry = crate::twopc::copies(&widths);
        check_inputs(&entry, s.parties(), s.id(), inputs)?;
        let mut runner = Runner::start(s, None, |h| {
            h.update(b"file");
            h.update(file.digest());
            h.update((file.window() as u64).to_le_bytes());
        })?;
        let mut store = Carry::empty(runner.party);
        if let Ended::Carried(c) = runner.program(s, &entry, Start::Fresh(inputs), Ending::Carry)? {
            store = c;
        }
        // Each window is read up to READ_AHEAD windows ahead of the protocol, on a thread of its own.
        let positions = file.run_ahead(
            |c| Ok::<_, Error>(c.clone()),
            |w| {
                let start = Start::Carried(store.select(&w.inputs));
                if let Ended::Carried(c) = runner.program(s, &w.made, start, Ending::Carry)? {
                    store.place(&w.outputs, c, w.positions);
                }
                s.fold_phases();
                Ok(())
            },
        )?;
        let exit = crate::twopc::copies(&[positions.len() as u32]);
        let start = Start::Carried(store.select(&positions));
        match runner.program(s, &exit, start, Ending::Decode)? {
            Ended::Outputs(z) => Ok(z),
            Ended::Carried(_) => Err(Error::Usage("a decoded run carried its outputs".into())),
        }
    })
}

/// One party's side of a run: set up once, then any number of programs.
struct Runner<'e> {
    party: Party,
    ex: Exchange<'e>,
    /// Programs run so far.
    programs: u64,
}

impl<'e> Runner<'e> {
    /// The hello (every party must agree on the OT and on what `agree` hashes: the job), the
    /// setup phase and the run's exchange.
    fn start(
        s: &mut Session,
        editor: Option<Editor<'e>>,
        agree: impl FnOnce(&mut sha2::Sha256),
    ) -> Result<Self, Error> {
        crate::abit::check_provider(s.ot_choice())?;
        crate::hello::greet(s, crate::hello::Variant::Wrk17b, agree)?;
        let party = s.phase("setup", setup)?;
        let ex = Exchange::new(s, editor)?;
        Ok(Runner {
            party,
            ex,
            programs: 0,
        })
    }

    /// One program: its masks and triples, its garbled circuit, and its online phase.
    fn program(
        &mut self,
        s: &mut Session,
        circuit: &Circuit,
        start: Start<'_>,
        ending: Ending,
    ) -> Result<Ended, Error> {
        let program = self.programs;
        if program >= 1 << 24 {
            return Err(Error::Usage(
                "more than 2^24 programs in one run: use larger windows".into(),
            ));
        }
        self.programs += 1;
        let (party, ex) = (self.party, &mut self.ex);
        let ands = circuit
            .gates
            .iter()
            .filter(|g| g.kind == GateKind::And)
            .count();
        let fresh = match &start {
            Start::Fresh(_) => circuit.num_input_wires() as usize,
            Start::Carried(_) => 0,
        };
        let pre = s.phase("function-independent", |s| {
            triples::generate(s, ex, party, ands, fresh + ands)
        })?;
        let carried = match &start {
            Start::Carried(c) => Some(c),
            Start::Fresh(_) => None,
        };
        let garbled = s.phase("function-dependent", |s| {
            garbling::garble(s, ex, party, circuit, pre, (program, carried))
        })?;
        s.phase("online", |s| garbled.evaluate(s, ex, start, ending))
    }
}

/// Fixes this party's Δ for its OT senders and sets up the OT with every peer, in the order of
/// [`Party::meetings`] (so no two parties wait on each other, and pairs run side by side).
fn setup(s: &mut Session) -> Result<Party, Error> {
    let delta = s.random_block().with_lsb(true);
    s.fix_ot_delta(delta)?;
    let party = Party {
        me: s.id(),
        n: s.parties(),
        delta,
    };
    for j in party.meetings() {
        s.with_ot_pair(j, |_, _, _| Ok(()))?;
    }
    Ok(party)
}
