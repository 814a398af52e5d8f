//! A party's session: its network, its PRG, the AES backend, the OT providers per peer, the
//! message spaces protocol instances are given, the phases it timed, and the one place that
//! tells the peers when this party stops ([`Session::run`]).

use crate::Error;
use crate::lattice::LatticeKeys;
use crate::progress::{Observer, Position, Progress};
use tessera_core::{Backend, Block, Prg};
use tessera_net::{Network, PeerChannel, Phase, PhaseTimer, Space, Spaces};
use tessera_ot::Protocol;
use tessera_ot::triples::{Links, TripleGenerator};
pub use tessera_ot::{OtChoice, OtReceiving, OtSending};

/// What a session is set up with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// The OT the providers run.
    pub ot: OtChoice,
    /// `None`: randomness from the operating system. A seed: every party's randomness
    /// derived from it and the party's id, so a run can be replayed (tests print the seed of a
    /// run that failed). Never for real inputs: whoever knows the seed knows every mask.
    pub seed: Option<Block>,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig::with_ot(OtChoice::Extension(Protocol::IKNP))
    }
}

impl SessionConfig {
    /// Sessions running `ot`, with randomness from the operating system.
    pub fn with_ot(ot: OtChoice) -> Self {
        SessionConfig { ot, seed: None }
    }

    /// This configuration with every party's randomness derived from `seed`.
    pub fn seeded(self, seed: Block) -> Self {
        SessionConfig {
            seed: Some(seed),
            ..self
        }
    }
}

/// The OT providers with one peer and the triple generator on them, set up when first used.
#[derive(Default)]
struct PeerOt {
    sender: Option<Box<dyn OtSending>>,
    receiver: Option<Box<dyn OtReceiving>>,
    triples: Option<TripleGenerator>,
}

/// A part of a metered phase ([`Session::metered_part`]): the phase's bytes done before it,
/// its estimated total, whether the part ends it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeteredPart {
    /// Bytes of the phase done before this part.
    pub before: u64,
    /// The phase's estimated bytes in all.
    pub total: u64,
    /// Whether this part is the phase's last.
    pub ends: bool,
}

/// One party's session; see the module documentation.
pub struct Session {
    network: Network,
    prg: Prg,
    backend: Backend,
    config: SessionConfig,
    /// The global Δ every OT sender of this party takes, if fixed.
    ot_delta: Option<Block>,
    /// Spaces per link: both ends of a link hand them out in the same order.
    spaces: Vec<Spaces>,
    ot: Vec<PeerOt>,
    /// Per peer, the lattice keys of each plaintext ring used with it.
    lattice: Vec<Vec<LatticeKeys>>,
    phases: Vec<Phase>,
    observer: Option<Observer>,
    position: Position,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("network", &self.network)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session over `network`, with randomness from the operating system (or the
    /// configuration's seed) and the AES backend picked for this CPU.
    pub fn new(network: Network, config: SessionConfig) -> Result<Self, Error> {
        let n = network.parties();
        let prg = match config.seed {
            None => Prg::from_os()?,
            Some(seed) => {
                // Party i takes the (i + 1)-th block of the seed's stream as its own seed.
                let mut stream = Prg::from_seed_block(seed);
                let mut own = Block::ZERO;
                for _ in 0..=network.id() {
                    own = stream.random_block();
                }
                Prg::from_seed_block(own)
            }
        };
        Ok(Session {
            network,
            prg,
            backend: Backend::active(),
            config,
            ot_delta: None,
            spaces: (0..n).map(|_| Spaces::default()).collect(),
            ot: (0..n).map(|_| PeerOt::default()).collect(),
            lattice: (0..n).map(|_| Vec::new()).collect(),
            phases: Vec::new(),
            observer: None,
            position: Position::default(),
        })
    }

    /// Reports the progress of this session's long phases (a program's setup and online
    /// phase) to `observer`, or to nobody (`None`).
    pub fn observe(&mut self, observer: Option<Observer>) {
        self.observer = observer;
    }

    /// Where the metered phase running is: the protocol moves it from operation to operation
    /// ([`Position::at`]), the observer hears it with the progress.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// Whether an observer hears of this session's phases ([`Session::observe`]).
    pub fn observed(&self) -> bool {
        self.observer.is_some()
    }

    /// Runs `f` as the phase `phase` of an estimated `total()` bytes (sent and received by this
    /// party; asked only when observed), metered for the observer, if any: it hears of the
    /// phase at its start, as often as it asked while it runs, and at its end if it succeeds,
    /// done then.
    pub fn metered<T, E>(
        &mut self,
        phase: &'static str,
        total: impl FnOnce() -> u64,
        f: impl FnOnce(&mut Session) -> Result<T, E>,
    ) -> Result<T, E> {
        let part = match self.observer {
            Some(_) => MeteredPart {
                before: 0,
                total: total(),
                ends: true,
            },
            None => MeteredPart::default(),
        };
        self.metered_part(phase, part, f)
    }

    /// Runs `f` as a part of the phase `phase` ([`Session::metered`] for a phase run in
    /// parts, between which other phases run): the observer hears the phase's bytes done
    /// counting from `part.before`, and done at its end if it `ends` the phase.
    pub fn metered_part<T, E>(
        &mut self,
        phase: &'static str,
        part: MeteredPart,
        f: impl FnOnce(&mut Session) -> Result<T, E>,
    ) -> Result<T, E> {
        let Some(observer) = self.observer.clone() else {
            return f(self);
        };
        let MeteredPart {
            before,
            total,
            ends,
        } = part;
        let bytes = |s: tessera_net::Stats| s.bytes_sent + s.bytes_received;
        let start = bytes(self.network.stats()).wrapping_sub(before);
        let every = observer.every;
        self.position.clear();
        let position = self.position.clone();
        let tell = move |done: u64| {
            observer.tell(Progress {
                phase,
                done: done.min(total),
                total,
                op: position.get(),
            })
        };
        tell(before);
        let meter = tell.clone();
        self.network
            .meter(every, move |stats| meter(bytes(stats).wrapping_sub(start)));
        let out = f(self);
        self.network.unmeter();
        if out.is_ok() && ends {
            tell(total);
        }
        out
    }

    /// This party's id.
    pub fn id(&self) -> usize {
        self.network.id()
    }

    /// The number of parties.
    pub fn parties(&self) -> usize {
        self.network.parties()
    }

    /// The AES backend.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The network.
    pub fn network(&mut self) -> &mut Network {
        &mut self.network
    }

    /// The channel to peer `j`.
    pub fn channel(&mut self, j: usize) -> PeerChannel<'_> {
        self.network.peer(j)
    }

    /// A fresh random block from the session's PRG.
    pub fn random_block(&mut self) -> Block {
        self.prg.random_block()
    }

    /// The OT every provider of this session runs.
    pub fn ot_choice(&self) -> OtChoice {
        self.config.ot
    }

    /// A PRG seeded from the session's, for one protocol instance.
    pub fn fork_prg(&mut self) -> Prg {
        Prg::from_seed_block(self.prg.random_block())
    }

    /// A new protocol instance's space on the link to peer `j` (the peer must ask for one at
    /// the same point of the same protocol).
    pub fn space(&mut self, j: usize) -> Result<Space, Error> {
        self.link_spaces(j)?.allocate().map_err(Error::from)
    }

    fn link_spaces(&mut self, j: usize) -> Result<&mut Spaces, Error> {
        let me = self.id();
        self.spaces
            .get_mut(j)
            .filter(|_| j != me)
            .ok_or_else(|| Error::Input(format!("party {j} is not a peer of party {me}")))
    }

    /// Runs `f` with this party's OT sender to peer `j` (set up with the peer's
    /// [`Session::with_ot_receiver`] on first use) and the channel to `j`.
    pub fn with_ot_sender<T>(
        &mut self,
        j: usize,
        f: impl FnOnce(&mut dyn OtSending, &mut PeerChannel<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let delta = self.ot_delta;
        self.with_provider(
            j,
            |p| &mut p.sender,
            |ch, spaces, choice, prg| Ok(choice.sender_with_delta(ch, spaces, delta, prg)?),
            |p, ch| f(p, ch),
        )
    }

    /// Fixes the global Δ of every OT sender this party sets up from now on (its least
    /// significant bit taken as 1): what n-party authenticated garbling needs, where a party's
    /// bits are authenticated to every peer under one Δ. Refused once a sender is set up.
    pub fn fix_ot_delta(&mut self, delta: Block) -> Result<(), Error> {
        if self.ot.iter().any(|p| p.sender.is_some()) {
            return Err(Error::Input(
                "the OT Δ is fixed before any OT sender is set up".into(),
            ));
        }
        self.ot_delta = Some(delta.with_lsb(true));
        Ok(())
    }

    /// Runs `f` with this party's OT receiver from peer `j` (set up with the peer's
    /// [`Session::with_ot_sender`] on first use) and the channel to `j`.
    pub fn with_ot_receiver<T>(
        &mut self,
        j: usize,
        f: impl FnOnce(&mut dyn OtReceiving, &mut PeerChannel<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.with_provider(
            j,
            |p| &mut p.receiver,
            |ch, spaces, choice, prg| Ok(choice.receiver(ch, spaces, prg)?),
            |p, ch| f(p, ch),
        )
    }

    /// Runs `f` with this party's OT sender to peer `j` and receiver from it, both set up on
    /// first use in an order both ends agree on (the lower-numbered party's sender first), and
    /// the channel to `j`: what a protocol needs whose parties are OT sender and receiver to
    /// each other (GMW's and ABY2.0's triples, [`tessera_ot::triples`]).
    pub fn with_ot_pair<T>(
        &mut self,
        j: usize,
        f: impl FnOnce(
            &mut dyn OtSending,
            &mut dyn OtReceiving,
            &mut PeerChannel<'_>,
        ) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if self.id() < j {
            self.with_ot_sender(j, |_, _| Ok(()))?;
            self.with_ot_receiver(j, |_, _| Ok(()))?;
        } else {
            self.with_ot_receiver(j, |_, _| Ok(()))?;
            self.with_ot_sender(j, |_, _| Ok(()))?;
        }
        let mut channel = self.network.peer(j);
        match &mut self.ot[j] {
            PeerOt {
                sender: Some(s),
                receiver: Some(r),
                ..
            } => f(s.as_mut(), r.as_mut(), &mut channel),
            _ => Err(Error::Input(format!("no OT providers with party {j}"))),
        }
    }

    /// Runs `f` with the lattice keys with peer `j` for the ring 2^`plain_bits` (set up
    /// on first use, no key made yet), the link to `j` and this session's PRG.
    pub fn with_lattice<T>(
        &mut self,
        j: usize,
        plain_bits: u32,
        f: impl FnOnce(&mut LatticeKeys, &mut PeerChannel<'_>, &mut Prg) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let rings = self
            .lattice
            .get_mut(j)
            .ok_or_else(|| Error::Input(format!("no party {j}")))?;
        let at = match rings.iter().position(|k| k.plain_bits() == plain_bits) {
            Some(at) => at,
            None => {
                rings.push(LatticeKeys::new(plain_bits)?);
                rings.len() - 1
            }
        };
        let mut channel = self.network.peer(j);
        f(&mut rings[at], &mut channel, &mut self.prg)
    }

    /// Runs `f` with the multiplication-triple generator with peer `j` (set up on first use,
    /// on the OT providers of [`Session::with_ot_pair`]) and its links: what GMW's and ABY2.0's
    /// setup phases draw their triples from.
    pub fn with_triples<T>(
        &mut self,
        j: usize,
        f: impl FnOnce(&mut TripleGenerator, &mut Links<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.with_ot_pair(j, |_, _, _| Ok(()))?;
        if self.ot[j].triples.is_none() {
            let prg = self.fork_prg();
            let first = self.id() < j;
            self.ot[j].triples = Some(TripleGenerator::new(&mut self.spaces[j], first, prg)?);
        }
        let mut channel = self.network.peer(j);
        match &mut self.ot[j] {
            PeerOt {
                sender: Some(sender),
                receiver: Some(receiver),
                triples: Some(g),
            } => f(
                g,
                &mut Links {
                    channel: &mut channel,
                    sender: sender.as_mut(),
                    receiver: receiver.as_mut(),
                },
            ),
            _ => Err(Error::Input(format!("no triple generator with party {j}"))),
        }
    }

    /// Runs `f` with the provider in `slot` of peer `j`'s OT pair, made by `setup` (which
    /// takes its spaces from the link's allocator) on first use.
    fn with_provider<P: ?Sized, T>(
        &mut self,
        j: usize,
        slot: fn(&mut PeerOt) -> &mut Option<Box<P>>,
        setup: impl FnOnce(&mut PeerChannel<'_>, &mut Spaces, OtChoice, Prg) -> Result<Box<P>, Error>,
        f: impl FnOnce(&mut P, &mut PeerChannel<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let choice = self.config.ot;
        let prg = self.fork_prg();
        self.link_spaces(j)?;
        let (spaces, provider) = (&mut self.spaces[j], slot(&mut self.ot[j]));
        let mut channel = self.network.peer(j);
        if provider.is_none() {
            *provider = Some(setup(&mut channel, spaces, choice, prg)?);
        }
        match provider.as_deref_mut() {
            Some(p) => f(p, &mut channel),
            None => Err(Error::Input(format!("no OT provider with party {j}"))),
        }
    }

    /// Times `f` as the phase `name`, kept until [`Session::take_phases`].
    pub fn phase<T>(&mut self, name: &str, f: impl FnOnce(&mut Session) -> T) -> T {
        let timer = PhaseTimer::start(name, &self.network);
        let out = f(self);
        let phase = timer.stop(&self.network);
        self.phases.push(phase);
        out
    }

    /// The phases timed so far, and forgets them.
    pub fn take_phases(&mut self) -> Vec<Phase> {
        std::mem::take(&mut self.phases)
    }

    /// Folds the phases timed so far that share a name into one, in the order the names first
    /// came, times and traffic added: what a run of many steps calls after each, so the record
    /// stays one entry per phase however many steps there are.
    pub fn fold_phases(&mut self) {
        let mut folded: Vec<Phase> = Vec::new();
        for p in self.phases.drain(..) {
            match folded.iter_mut().find(|f| f.name == p.name) {
                Some(f) => {
                    f.ms += p.ms;
                    f.traffic = [f.traffic, p.traffic].into_iter().sum();
                }
                None => folded.push(p),
            }
        }
        self.phases = folded;
    }

    /// Runs `f`; if it fails, tells every peer why, once: the one place a session aborts. A
    /// failure that is itself a peer's abort is not echoed back.
    pub fn run<T>(&mut self, f: impl FnOnce(&mut Session) -> Result<T, Error>) -> Result<T, Error> {
        self.run_with(f)
    }

    /// [`Session::run`] for a protocol with an error type of its own (authenticated garbling):
    /// the peers are told the code of its kind ([`tessera_net::Abort`]).
    pub fn run_with<T, E: tessera_net::Abort>(
        &mut self,
        f: impl FnOnce(&mut Session) -> Result<T, E>,
    ) -> Result<T, E> {
        f(self).inspect_err(|e| {
            if let Some(code) = e.abort_code() {
                self.network.abort(code);
            }
        })
    }
}
