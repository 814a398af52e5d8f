//! Every OT flavour against its definition, for both extensions, several sizes and several
//! calls on one setup, over memory and TCP.

use std::thread;
use tessera_core::{Block, Prg};
use tessera_net::{Channel, memory_pair, tcp};
use tessera_ot::{OtReceiver, OtSender, Security, base};

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

/// Sizes around the 128-row tiles and the 16384-row chunks.
const SIZES: [usize; 6] = [1, 127, 128, 1000, 16384 + 5, 40000];

fn run_all<C: Channel + Send + 'static>(security: Security, mut a: C, mut b: C) {
    let receiver = thread::spawn(move || {
        let mut r = OtReceiver::setup(&mut b, security, Prg::from_os().unwrap()).unwrap();
        let mut results = Vec::new();
        for (k, &n) in SIZES.iter().enumerate() {
            let c = choices(k as u128, n);
            let mut cot = vec![Block::ZERO; n];
            r.correlated(&mut b, &c, &mut cot).unwrap();
            let mut rot = vec![Block::ZERO; n];
            r.random(&mut b, &c, &mut rot).unwrap();
            let mut ot = vec![Block::ZERO; n];
            r.receive(&mut b, &c, &mut ot).unwrap();
            results.push((cot, rot, ot));
        }
        results
    });
    let mut s = OtSender::setup(&mut a, security, Prg::from_os().unwrap()).unwrap();
    let delta = s.delta();
    assert!(delta.lsb());
    let mut sent = Vec::new();
    for (k, &n) in SIZES.iter().enumerate() {
        let mut cot = vec![Block::ZERO; n];
        s.correlated(&mut a, &mut cot).unwrap();
        let mut rot = vec![(Block::ZERO, Block::ZERO); n];
        s.random(&mut a, &mut rot).unwrap();
        let m = messages(100 + k as u128, n);
        s.send(&mut a, &m).unwrap();
        sent.push((cot, rot, m));
    }
    let got = receiver.join().unwrap();
    for (k, ((cot_s, rot_s, m), (cot_r, rot_r, ot_r))) in sent.iter().zip(&got).enumerate() {
        let c = choices(k as u128, SIZES[k]);
        for j in 0..SIZES[k] {
            let ctx = format!("{} n={} j={j}", security.name(), SIZES[k]);
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
        // Random OT outputs are hashed: not the correlated ones, and no two alike.
        assert!(rot_s.iter().zip(cot_s).all(|(&(x0, _), &q)| x0 != q));
    }
}

#[test]
fn iknp_over_memory() {
    let (a, b) = memory_pair(None);
    run_all(Security::SemiHonest, a, b);
}

#[test]
fn kos_over_memory() {
    let (a, b) = memory_pair(None);
    run_all(Security::Malicious, a, b);
}

#[test]
fn iknp_and_kos_over_tcp() {
    for security in [Security::SemiHonest, Security::Malicious] {
        let listener = tcp::listen("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let server =
            thread::spawn(move || tcp::accept(&listener, tessera_net::DEFAULT_TIMEOUT).unwrap());
        let client = tcp::connect(&addr, tessera_net::DEFAULT_TIMEOUT).unwrap();
        run_all(security, client, server.join().unwrap());
    }
}

#[test]
fn base_ot_delivers_the_chosen_message_only() {
    let (mut a, mut b) = memory_pair(None);
    let c = choices(7, 200);
    let c2 = c.clone();
    let m = messages(8, 200);
    let receiver = thread::spawn(move || {
        let mut prg = Prg::from_os().unwrap();
        let random = base::receive_random(&mut b, &c2, &mut prg).unwrap();
        let chosen = base::receive(&mut b, &c2, &mut prg).unwrap();
        (random, chosen)
    });
    let mut prg = Prg::from_os().unwrap();
    let keys = base::send_random(&mut a, 200, &mut prg).unwrap();
    base::send(&mut a, &m, &mut prg).unwrap();
    let (random, chosen) = receiver.join().unwrap();
    for j in 0..200 {
        let (k0, k1) = keys[j];
        assert_ne!(k0, k1);
        assert_eq!(random[j], if c[j] { k1 } else { k0 });
        assert_eq!(chosen[j], if c[j] { m[j].1 } else { m[j].0 });
    }
}

/// What the sender sees of the receiver is the matrix u, one-time padded column by column:
/// its bits are balanced whatever the choices (all zero or all one here), so the sender has
/// nothing to tell the choices by.
#[test]
fn the_senders_view_does_not_show_the_choices() {
    for bit in [false, true] {
        let (mut a, mut b) = memory_pair(None);
        let receiver = thread::spawn(move || {
            let mut r =
                OtReceiver::setup(&mut b, Security::SemiHonest, Prg::from_os().unwrap()).unwrap();
            let mut out = vec![Block::ZERO; 8192];
            r.correlated(&mut b, &vec![bit; 8192], &mut out).unwrap();
        });
        // Play the sender by hand: run the base OTs, then read the raw matrix.
        let mut prg = Prg::from_os().unwrap();
        base::receive_random(&mut a, &[false; 128], &mut prg).unwrap();
        let mut u = vec![Block::ZERO; 8192];
        a.recv_blocks(tessera_net::Tag::new(0x20, "ot-extension matrix u"), &mut u)
            .unwrap();
        receiver.join().unwrap();
        let ones: u32 = u.iter().map(|b| b.as_u128().count_ones()).sum();
        let total = 8192.0 * 128.0;
        let fraction = f64::from(ones) / total;
        // 2^20 bits: the standard deviation of the fraction is 0.0005.
        assert!((fraction - 0.5).abs() < 0.005, "choices {bit}: {fraction}");
    }
}

/// Malformed base-OT points are refused with the index, and the peer is told.
#[test]
fn invalid_points_are_refused() {
    let (mut a, mut b) = memory_pair(None);
    let peer = thread::spawn(move || {
        let mut point = [0u8; 32];
        b.recv_into(tessera_net::Tag::new(0x10, "A"), &mut point)
            .unwrap();
        let mut session = [0u8; 16];
        b.recv_into(tessera_net::Tag::new(0x12, "sid"), &mut session)
            .unwrap();
        // Two valid points (A itself), then garbage.
        let mut points = [point, point, [0xee; 32]].concat();
        points.extend_from_slice(&[0u8; 32 * 5]);
        b.send(tessera_net::Tag::new(0x11, "B"), &points).unwrap();
        b.recv_bounded(tessera_net::Tag::new(0x13, "x"), 0)
            .unwrap_err()
    });
    let e = base::send_random(&mut a, 8, &mut Prg::from_os().unwrap()).unwrap_err();
    assert_eq!(
        e,
        tessera_ot::Error::BadPoint {
            what: "receiver point B",
            index: 2
        }
    );
    assert!(
        matches!(peer.join().unwrap(), tessera_net::Error::PeerAborted(m) if m.contains("index") || m.contains("point"))
    );
}
