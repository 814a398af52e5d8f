//! Authenticated bits: drawn between two sessions over actively secure OT, every MAC is its
//! key plus its bit times the peer's Δ; an honest opening shows the bits; every edit of an
//! opening (a flipped bit, a flipped digest byte, a cut, a replay of another opening) is caught.

mod common;

use common::two_parties;
use tessera_ag::Error;
use tessera_ag::abit::{self, AuthBits, AuthKeys};
use tessera_core::{Block, Prg};

use tessera_ot::OtChoice;
use tessera_ot::extension::Protocol;

#[test]
fn drawn_bits_are_authenticated_both_ways_and_open() {
    const N: usize = 1000;
    let [a, b] = two_parties(OtChoice::Extension(Protocol::KOS), |s| {
        let peer = 1 - s.id();
        let (mine, keys) = abit::random(s, peer, N)?;
        // Each opens its bits 3..700 to the other.
        let tag = s.space(peer)?.tag(tessera_net::Kind::new(1, "opening"));
        let msg = abit::opening(&mine, 3..700)?;
        let mut theirs = vec![0u8; msg.len()];
        let mut ch = s.channel(peer);
        tessera_net::Channel::send(&mut ch, tag, &msg)?;
        tessera_net::Channel::flush(&mut ch)?;
        tessera_net::Channel::recv_into(&mut ch, tag, &mut theirs)?;
        let shown = abit::check_opening(&keys, 3..700, &theirs)?;
        Ok((mine, keys, shown))
    });
    let (a_bits, a_keys, a_saw) = a.unwrap();
    let (b_bits, b_keys, b_saw) = b.unwrap();
    for (bits, keys) in [(&a_bits, &b_keys), (&b_bits, &a_keys)] {
        assert_eq!(bits.len(), N);
        assert!(keys.delta().lsb());
        for i in 0..N {
            assert_eq!(bits.macs()[i], keys.mac_for(i, bits.bit(i)), "bit {i}");
            assert!(!keys.keys()[i].lsb());
        }
        let ones = (0..N).filter(|&i| bits.bit(i)).count();
        assert!((350..650).contains(&ones), "{ones} ones of {N}");
    }
    assert_ne!(a_keys.delta(), b_keys.delta());
    let bits = |held: &AuthBits| (3..700).map(|i| held.bit(i)).collect::<Vec<_>>();
    assert_eq!(a_saw, bits(&b_bits));
    assert_eq!(b_saw, bits(&a_bits));
}

#[test]
fn a_semi_honest_ot_is_refused() {
    let [a, b] = two_parties(OtChoice::Extension(Protocol::IKNP), |s| {
        let peer = 1 - s.id();
        abit::random(s, peer, 10).map(drop)
    });
    for r in [a, b] {
        assert!(matches!(r, Err(Error::Usage(m)) if m.contains("semi-honest")));
    }
}

/// `n` bits authenticated under a random Δ, made directly.
fn dealt(n: usize, prg: &mut Prg) -> (AuthBits, AuthKeys) {
    let delta = prg.random_block().with_lsb(true);
    let keys: Vec<Block> = (0..n).map(|_| prg.random_block().with_lsb(false)).collect();
    let macs = keys
        .iter()
        .map(|&k| k ^ (delta & Block::mask(prg.random_block().lsb())))
        .collect();
    (AuthBits::from_macs(macs), AuthKeys::new(delta, keys))
}

fn caught(r: Result<Vec<bool>, Error>) -> bool {
    matches!(
        r,
        Err(Error::CheckFailed {
            check: tessera_ag::checks::Check::OpenedMacs
        } | Error::Malformed { .. })
    )
}

#[test]
fn every_edit_of_an_opening_is_caught() {
    let mut prg = Prg::from_seed_block(Block::new(43));
    for n in [1usize, 7, 8, 9, 130, 1000] {
        let (held, keys) = dealt(n + 5, &mut prg);
        let range = 5..n + 5;
        let msg = abit::opening(&held, range.clone()).unwrap();
        let honest = abit::check_opening(&keys, range.clone(), &msg).unwrap();
        assert_eq!(
            honest,
            range.clone().map(|i| held.bit(i)).collect::<Vec<_>>()
        );
        // Every single bit flipped, in the bits and in the digest.
        for byte in 0..msg.len() {
            for bit in 0..8 {
                let mut edited = msg.clone();
                edited[byte] ^= 1 << bit;
                assert!(
                    caught(abit::check_opening(&keys, range.clone(), &edited)),
                    "n {n}: byte {byte} bit {bit}"
                );
            }
        }
        // Cut and lengthened.
        assert!(caught(abit::check_opening(
            &keys,
            range.clone(),
            &msg[..msg.len() - 1]
        )));
        let mut longer = msg.clone();
        longer.push(0);
        assert!(caught(abit::check_opening(&keys, range.clone(), &longer)));
        // An opening of other bits of the same length, replayed here.
        let other = abit::opening(&held, 4..n + 4).unwrap();
        if other != msg {
            assert!(caught(abit::check_opening(&keys, range.clone(), &other)));
        }
    }
}

#[test]
fn a_holder_without_delta_cannot_open_a_flipped_bit() {
    // The holder flips a bit and forges its MAC as best it can without Δ (flipping the MAC's
    // least significant bit): caught.
    let mut prg = Prg::from_seed_block(Block::new(44));
    let (held, keys) = dealt(64, &mut prg);
    for i in 0..64 {
        let mut macs = held.macs().to_vec();
        macs[i] ^= Block::new(1);
        let forged = AuthBits::from_macs(macs);
        let msg = abit::opening(&forged, 0..64).unwrap();
        assert!(caught(abit::check_opening(&keys, 0..64, &msg)), "bit {i}");
    }
}

/// With its OT Δ fixed, a party's bits are authenticated under one Δ toward every peer (what
/// n parties need), over SoftSpoken and over Ferret; fixing it after a sender exists is refused.
#[test]
fn a_fixed_delta_is_the_same_toward_every_peer() {
    use tessera_core::Block;
    use tessera_ot::extension::Security;
    use tessera_ot::ferret::Params;
    let fixed = Block::new(0x1234_5678_9abc_def0_0fed_cba9_8765_4321);
    for ot in [
        OtChoice::Extension(Protocol::softspoken(8, Security::Malicious).unwrap()),
        OtChoice::Ferret(Params::EMP_B10, Security::Malicious),
    ] {
        let nets = tessera_net::memory::mesh(3, tessera_net::NetConfig::default()).unwrap();
        let deltas: Vec<Vec<Block>> = std::thread::scope(|s| {
            let handles: Vec<_> = nets
                .into_iter()
                .map(|net| {
                    s.spawn(move || {
                        let mut session = tessera_protocols::Session::new(
                            net,
                            tessera_protocols::SessionConfig::with_ot(ot),
                        )
                        .unwrap();
                        let me = session.id();
                        if me == 0 {
                            session.fix_ot_delta(fixed).unwrap();
                        }
                        let mut seen = Vec::new();
                        for peer in (0..3).filter(|&p| p != me) {
                            let (_, keys) = abit::random(&mut session, peer, 100).unwrap();
                            seen.push(keys.delta());
                        }
                        if me == 0 {
                            assert!(session.fix_ot_delta(fixed).is_err());
                        }
                        seen
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(deltas[0], vec![fixed.with_lsb(true); 2], "{}", ot.name());
        assert_ne!(
            deltas[1][0],
            deltas[1][1],
            "{}: party 1 draws a Δ per peer",
            ot.name()
        );
    }
}
