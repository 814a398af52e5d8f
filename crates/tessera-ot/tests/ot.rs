//! Every OT flavour against its definition, through the traits, for IKNP, KOS, SoftSpoken with
//! several k and Ferret (across many bootstrapping iterations), several sizes and several calls
//! on one setup, over the in-memory and the TCP network.

use std::thread;
use std::time::Duration;
use tessera_core::{Block, Prg};
use tessera_net::{Channel, NetConfig, Network, Spaces, memory};
use tessera_ot::ferret::Params;
use tessera_ot::{ChoiceBits, OtChoice, OtReceiving, OtSending, Protocol, Security};

/// Ferret with iterations of 2^14 OTs, so that the tests cross many of them.
const FERRET_SMALL: Params = Params::INSECURE_SMALL;

/// IKNP, KOS and SoftSpoken with a k that divides 127 columns unevenly, semi-honest and
/// malicious, and the largest k; Ferret semi-honest and malicious.
fn protocols() -> Vec<OtChoice> {
    vec![
        OtChoice::Extension(Protocol::IKNP),
        OtChoice::Extension(Protocol::KOS),
        OtChoice::Extension(Protocol::softspoken(3, Security::SemiHonest).unwrap()),
        OtChoice::Extension(Protocol::softspoken(4, Security::Malicious).unwrap()),
        OtChoice::Extension(Protocol::softspoken(8, Security::SemiHonest).unwrap()),
        OtChoice::Ferret(FERRET_SMALL, Security::SemiHonest),
        OtChoice::Ferret(FERRET_SMALL, Security::Malicious),
        OtChoice::InsecureIdeal,
    ]
}

fn choices(seed: u128, n: usize) -> Vec<bool> {
    let mut prg = Prg::from_seed_block(Block::new(seed));
    (0..n).map(|_| prg.random_block().lsb()).collect()
}

fn messages(seed: u128, n: usize) -> Vec<(Block, Block)> {
    let mut prg = Prg::from_seed_block(Block::new(seed));
    (0..n)
        .map(|_| (prg.random_block(), prg.random_block()))
        .collect()
}

/// Sizes around the 128-row tiles and the 16384-row chunks (whole chunks go straight into the
/// caller's buffer).
const SIZES: [usize; 7] = [1, 127, 128, 1000, 16384 + 5, 32768, 40000];

type Received = Vec<(Vec<Block>, Vec<Block>, Vec<Block>, Vec<Block>)>;
type Sent = Vec<(
    Vec<Block>,
    Vec<(Block, Block)>,
    Vec<(Block, Block)>,
    Vec<Block>,
)>;

fn send_all(s: &mut dyn OtSending, ch: &mut dyn Channel) -> Sent {
    SIZES
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let mut cot = vec![Block::ZERO; n];
            s.send_correlated(ch, &mut cot).unwrap();
            let mut rot = vec![(Block::ZERO, Block::ZERO); n];
            s.send_random(ch, &mut rot).unwrap();
            let m = messages(100 + k as u128, n);
            s.send_chosen(ch, &m).unwrap();
            let mut rcot = vec![Block::ZERO; n];
            s.send_random_correlated(ch, &mut rcot).unwrap();
            (cot, rot, m, rcot)
        })
        .collect()
}

fn receive_all(r: &mut dyn OtReceiving, ch: &mut dyn Channel) -> Received {
    SIZES
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let bits = ChoiceBits::from_bools(&choices(k as u128, n));
            let c = bits.as_choices();
            let mut cot = vec![Block::ZERO; n];
            r.receive_correlated(ch, c, &mut cot).unwrap();
            let mut rot = vec![Block::ZERO; n];
            r.receive_random(ch, c, &mut rot).unwrap();
            let mut ot = vec![Block::ZERO; n];
            r.receive_chosen(ch, c, &mut ot).unwrap();
            let mut rcot = vec![Block::ZERO; n];
            r.receive_random_correlated(ch, &mut rcot).unwrap();
            (cot, rot, ot, rcot)
        })
        .collect()
}

/// Sets up `protocol` between party 0 of `a` (sender) and party 1 of `b` (receiver, on its own
/// thread), then runs `send` and `receive` on them; gives back both results and Δ.
fn exchange<S, R: Send + 'static>(
    protocol: OtChoice,
    (mut a, mut b): (Network, Network),
    send: impl FnOnce(&mut dyn OtSending, &mut dyn Channel) -> S,
    receive: impl FnOnce(&mut dyn OtReceiving, &mut dyn Channel) -> R + Send + 'static,
) -> (S, R, Block) {
    let receiver = thread::spawn(move || {
        let ch = &mut b.peer(0);
        let mut r = protocol
            .receiver(ch, &mut Spaces::default(), Prg::from_os().unwrap())
            .unwrap();
        receive(r.as_mut(), ch)
    });
    let ch = &mut a.peer(1);
    let mut s = protocol
        .sender(ch, &mut Spaces::default(), Prg::from_os().unwrap())
        .unwrap();
    let sent = send(s.as_mut(), ch);
    (sent, receiver.join().unwrap(), s.delta())
}

fn run_all(protocol: OtChoice, nets: (Network, Network)) {
    let (sent, got, delta) = exchange(protocol, nets, send_all, receive_all);
    assert!(delta.lsb());
    for (k, ((cot_s, rot_s, m, rcot_s), (cot_r, rot_r, ot_r, rcot_r))) in
        sent.iter().zip(&got).enumerate()
    {
        let c = choices(k as u128, SIZES[k]);
        for j in 0..SIZES[k] {
            let ctx = format!("{protocol:?} n={} j={j}", SIZES[k]);
            let (q, t) = (rcot_s[j], rcot_r[j]);
            assert!(!q.lsb(), "rcot {ctx}");
            assert_eq!(t, q ^ (Block::mask(t.lsb()) & delta), "rcot {ctx}");
            assert_eq!(
                cot_r[j],
                cot_s[j] ^ (Block::mask(c[j]) & delta),
                "cot {ctx}"
            );
            let (x0, x1) = rot_s[j];
            assert_eq!(rot_r[j], if c[j] { x1 } else { x0 }, "rot {ctx}");
            assert_ne!(rot_r[j], if c[j] { x0 } else { x1 }, "rot other {ctx}");
            assert_eq!(ot_r[j], if c[j] { m[j].1 } else { m[j].0 }, "ot {ctx}");
        }
        // Random OT outputs are hashed: not the correlated ones.
        assert!(rot_s.iter().zip(cot_s).all(|(&(x0, _), &q)| x0 != q));
    }
}

#[test]
fn every_provider_over_memory() {
    for protocol in protocols() {
        run_all(protocol, memory::pair().unwrap());
    }
}

#[test]
fn kos_softspoken_and_ferret_over_tcp() {
    for protocol in [
        OtChoice::Extension(Protocol::KOS),
        OtChoice::Extension(Protocol::softspoken(4, Security::SemiHonest).unwrap()),
        OtChoice::Ferret(FERRET_SMALL, Security::Malicious),
    ] {
        let mut nets =
            tessera_net::tcp::loopback(2, None, Duration::from_secs(10), NetConfig::default())
                .unwrap();
        let (b, a) = (nets.pop().unwrap(), nets.pop().unwrap());
        run_all(protocol, (a, b));
    }
}

/// What the sender sees of the receiver is the tree message and the corrections, one-time
/// padded: their bits are balanced whatever the choices (all zero or all one here), so the
/// sender has nothing to tell the choices by.
#[test]
fn the_senders_view_does_not_show_the_choices() {
    use tessera_net::role::{Next, Outbox, Recorder, Role};
    for (bit, k) in [(false, 1), (true, 1), (false, 4), (true, 8)] {
        let keys: Vec<(Block, Block)> = {
            let mut p = Prg::from_os().unwrap();
            (0..127)
                .map(|_| (p.random_block(), p.random_block()))
                .collect()
        };
        let protocol = Protocol::softspoken(k, Security::SemiHonest).unwrap();
        let (mut core, _) =
            tessera_ot::extension::ReceiverCore::new(protocol, &keys, Prg::from_os().unwrap())
                .unwrap();
        let choices = ChoiceBits::from_bools(&vec![bit; 8192 * k]);
        let mut out = Recorder::default();
        let next = core
            .extend(choices.as_choices())
            .step(None, &mut out)
            .unwrap();
        assert!(matches!(next, Next::Done(_)));
        out.flush().unwrap();
        let (_, u) = out.take().unwrap();
        let ones: u32 = u.iter().map(|b| b.count_ones()).sum();
        let fraction = f64::from(ones) / (u.len() * 8) as f64;
        // 2^20 bits: the standard deviation of the fraction is 0.0005.
        assert!((fraction - 0.5).abs() < 0.005, "choices {bit}: {fraction}");
    }
}

/// OTs made ahead of use: draws of any size take them first (adjusted to the choices by flip
/// bits), then fresh ones; a second `prepare` after part of the stock is used keeps the rest.
#[test]
fn correlated_ots_made_ahead_serve_later_draws() {
    const DRAWS: [usize; 5] = [1, 127, 3000, 4000, 500];
    for protocol in protocols() {
        let draw = |k: usize, prepare: &mut dyn FnMut(usize)| {
            if k == 0 {
                prepare(5000);
            } else if k == 3 {
                prepare(1000);
            }
        };
        let (sent, got, delta) = exchange(
            protocol,
            memory::pair().unwrap(),
            |s, ch| {
                let mut sent = Vec::new();
                for (k, &n) in DRAWS.iter().enumerate() {
                    draw(k, &mut |m| s.prepare(ch, m).unwrap());
                    let mut out = vec![Block::ZERO; n];
                    s.send_correlated(ch, &mut out).unwrap();
                    sent.push(out);
                }
                sent
            },
            move |r, ch| {
                let mut got = Vec::new();
                for (k, &n) in DRAWS.iter().enumerate() {
                    draw(k, &mut |m| r.prepare(ch, m).unwrap());
                    let mut out = vec![Block::ZERO; n];
                    let c = ChoiceBits::from_bools(&choices(k as u128 + 50, n));
                    r.receive_correlated(ch, c.as_choices(), &mut out).unwrap();
                    got.push(out);
                }
                got
            },
        );
        for (k, (q, t)) in sent.iter().zip(&got).enumerate() {
            let c = choices(k as u128 + 50, DRAWS[k]);
            for j in 0..DRAWS[k] {
                assert_eq!(
                    t[j],
                    q[j] ^ (Block::mask(c[j]) & delta),
                    "{protocol:?} draw {k} j={j}"
                );
            }
        }
    }
}

/// Ferret with the paper's parameters: the set-up iteration and two main ones (10.8 million
/// OTs each), random correlated OTs checked against their definition.
#[test]
fn ferret_with_the_papers_parameters() {
    let security = Security::SemiHonest;
    let params = Params::PAPER;
    let n = params.setup.n() - params.main.reserve(security)
        + params.yield_per_iteration(security)
        + 1000;
    let (sent, got, delta) = exchange(
        OtChoice::Ferret(params, security),
        memory::pair().unwrap(),
        move |s, ch| {
            let mut out = vec![Block::ZERO; n];
            s.send_random_correlated(ch, &mut out).unwrap();
            out
        },
        move |r, ch| {
            let mut out = vec![Block::ZERO; n];
            r.receive_random_correlated(ch, &mut out).unwrap();
            out
        },
    );
    let mut ones = 0usize;
    for (j, (&q, &t)) in sent.iter().zip(&got).enumerate() {
        assert!(!q.lsb() && t == q ^ (Block::mask(t.lsb()) & delta), "j={j}");
        ones += usize::from(t.lsb());
    }
    let fraction = ones as f64 / n as f64;
    assert!((fraction - 0.5).abs() < 0.001, "choices: {fraction}");
}

/// Ferret's random COTs, in one call that takes whole iterations straight into the caller's
/// buffer and in small calls that all pass through the iteration buffer, are the same OTs for
/// the same seeds: the direct path hands out exactly the new OTs of each iteration, never the
/// reserve rows after them.
#[test]
fn ferret_gives_the_same_ots_straight_or_buffered() {
    let total = 5 * FERRET_SMALL.main.n() + 77;
    let draw = |pieces: usize| {
        let protocol = OtChoice::Ferret(FERRET_SMALL, Security::SemiHonest);
        let (mut a, mut b) = memory::pair().unwrap();
        let receiver = thread::spawn(move || {
            let ch = &mut b.peer(0);
            let prg = Prg::from_seed_block(Block::new(1));
            let mut r = protocol.receiver(ch, &mut Spaces::default(), prg).unwrap();
            let mut t = vec![Block::ZERO; total];
            for part in t.chunks_mut(total.div_ceil(pieces)) {
                r.receive_random_correlated(ch, part).unwrap();
            }
            t
        });
        let ch = &mut a.peer(1);
        let prg = Prg::from_seed_block(Block::new(2));
        let mut s = protocol.sender(ch, &mut Spaces::default(), prg).unwrap();
        let mut q = vec![Block::ZERO; total];
        for part in q.chunks_mut(total.div_ceil(pieces)) {
            s.send_random_correlated(ch, part).unwrap();
        }
        (q, receiver.join().unwrap())
    };
    let (q, t) = draw(1);
    assert_eq!(draw(997), (q.clone(), t));
    // The iterations' outputs are distinct, as pseudo-random blocks are.
    let mut sorted = q;
    sorted.sort_by_key(|b| b.as_u128());
    sorted.dedup();
    assert_eq!(sorted.len(), total);
}
