//! Oblivious AES between 2, 3 and 5 parties against AES-128 itself: FIPS-197 with the key
//! split among the parties, random keys and plaintexts against the core's AES, with and
//! without key expansion.

use tessera_aes::{Key, Material, Party, Protocol, Shape, deal_in_memory, links};
use tessera_core::{Block, FixedKeyAes, Prg};
use tessera_net::{NetConfig, Network, memory};

/// The core's AES-128.
fn aes128(key: &[u8; 16], p: &[u8; 16]) -> [u8; 16] {
    FixedKeyAes::new(Block::from(*key))
        .encrypt_block(Block::from(*p))
        .into()
}

/// Key shares whose XOR is `key`.
fn split(key: &[u8; 16], n: usize, prg: &mut Prg) -> Vec<[u8; 16]> {
    let mut shares: Vec<[u8; 16]> = (1..n).map(|_| prg.random_block().into()).collect();
    let mut last = *key;
    for s in &shares {
        for (a, b) in last.iter_mut().zip(s) {
            *a ^= b;
        }
    }
    shares.push(last);
    shares
}

/// Every party on its own thread: `expand` first expands the key, then encrypts with it.
fn run(
    mats: &[Material],
    nets: Vec<Network>,
    shares: &[[u8; 16]],
    plain: &[[u8; 16]],
    expand: bool,
) -> Vec<Result<Vec<[u8; 16]>, tessera_aes::Error>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .enumerate()
            .map(|(i, mut net)| {
                let (mat, share) = (&mats[i], shares[i]);
                s.spawn(move || {
                    let mut x = links(&mut net);
                    let mut p = Party::new(mat, &mut x)?;
                    if expand {
                        let keys = p.expand_key(&mut x, &share)?;
                        Ok(p.encrypt(&mut x, Key::Expanded(&keys), plain)?.ciphertexts)
                    } else {
                        let e = p.encrypt(&mut x, Key::Share(share), plain)?;
                        assert!(e.round_keys.is_some());
                        Ok(e.ciphertexts)
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn mesh(n: usize) -> Vec<Network> {
    memory::mesh(n, NetConfig::default()).unwrap()
}

#[test]
fn fips_197_with_the_key_split_among_2_3_and_5_parties() {
    let key: [u8; 16] = core::array::from_fn(|i| i as u8);
    let plain: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
    let want = [
        0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5,
        0x5a,
    ];
    let mut prg = Prg::from_seed_block(Block::from(197u128));
    for protocol in Protocol::ALL {
        for n in [2, 3, 5] {
            let mats = deal_in_memory(Shape::new(protocol, n, 1).unwrap(), &mut prg).unwrap();
            let shares = split(&key, n, &mut prg);
            for r in run(&mats, mesh(n), &shares, &[plain], false) {
                assert_eq!(r.unwrap(), vec![want], "protocol {protocol}, {n} parties");
            }
        }
    }
}

#[test]
fn random_keys_and_plaintexts_with_and_without_key_expansion() {
    let mut prg = Prg::from_seed_block(Block::from(2024u128));
    for protocol in Protocol::ALL {
        for (n, blocks) in [(2, 7), (3, 16)] {
            for expand in [false, true] {
                let key: [u8; 16] = prg.random_block().into();
                let plain: Vec<[u8; 16]> = (0..blocks).map(|_| prg.random_block().into()).collect();
                let mats =
                    deal_in_memory(Shape::new(protocol, n, blocks).unwrap(), &mut prg).unwrap();
                let shares = split(&key, n, &mut prg);
                let want: Vec<[u8; 16]> = plain.iter().map(|p| aes128(&key, p)).collect();
                for r in run(&mats, mesh(n), &shares, &plain, expand) {
                    assert_eq!(
                        r.unwrap(),
                        want,
                        "protocol {protocol}, {n} parties, expand {expand}"
                    );
                }
            }
        }
    }
}

#[test]
fn over_tcp_and_tls_meshes() {
    use std::time::Duration;
    use tessera_net::tls::{TlsConfig, keygen};
    let dir = std::env::temp_dir().join(format!("tessera-oaes-tls-{}", std::process::id()));
    let n = 3;
    let certs: Vec<std::path::PathBuf> = (0..n)
        .map(|i| keygen(&dir.join(i.to_string()), false).unwrap())
        .collect();
    let tls: Vec<TlsConfig> = (0..n)
        .map(|i| {
            let peers: Vec<(usize, &std::path::Path)> = (0..n)
                .filter(|&j| j != i)
                .map(|j| (j, certs[j].as_path()))
                .collect();
            TlsConfig::load(&dir.join(i.to_string()), &peers).unwrap()
        })
        .collect();
    let mut prg = Prg::from_seed_block(Block::from(443u128));
    let key: [u8; 16] = prg.random_block().into();
    let plain: Vec<[u8; 16]> = (0..3).map(|_| prg.random_block().into()).collect();
    let want: Vec<[u8; 16]> = plain.iter().map(|p| aes128(&key, p)).collect();
    for (protocol, with_tls) in Protocol::ALL
        .into_iter()
        .flat_map(|p| [(p, false), (p, true)])
    {
        let nets = tessera_net::tcp::loopback(
            n,
            with_tls.then_some(&tls[..]),
            Duration::from_secs(10),
            NetConfig::default(),
        )
        .unwrap();
        let mats = deal_in_memory(Shape::new(protocol, n, 3).unwrap(), &mut prg).unwrap();
        let shares = split(&key, n, &mut prg);
        for r in run(&mats, nets, &shares, &plain, with_tls) {
            assert_eq!(r.unwrap(), want, "protocol {protocol}, tls {with_tls}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
