//! A party that adds a non-zero error to any share, MAC, commitment or opened check value it
//! sends is caught: 1000 random trials per protocol. Errors sent to every peer are caught by
//! every honest party; errors sent to some peers are caught by at least one, and no honest
//! party ever outputs a wrong ciphertext. Also the pre-processing checks: reused, foreign,
//! truncated and corrupt files are refused by name.

use rand_core::RngCore;
use tessera_aes::code::N;
use tessera_aes::protocol::Tables;
use tessera_aes::{Error, Key, Material, Party, PrepError, Protocol, Shape, deal};
use tessera_aes::{deal_in_memory, links};
use tessera_core::{Block, Prg};
use tessera_net::exchange::{Editor, Exchange};
use tessera_net::{NetConfig, memory};

/// What the cheating party does ([`Editor::xor_at`]).
#[derive(Clone)]
struct Attack {
    cheater: usize,
    at: usize,
    offset: usize,
    error: Vec<u8>,
    to: Vec<usize>,
    consistent: bool,
}

/// No attack.
const HONEST: Attack = Attack {
    cheater: 0,
    at: usize::MAX,
    offset: 0,
    error: vec![],
    to: vec![],
    consistent: false,
};

/// One run with `attack`; every party's result.
fn run_once(
    mats: &[Material],
    attack: &Attack,
    plain: &[[u8; 16]],
) -> Vec<Result<Vec<[u8; 16]>, Error>> {
    let n = mats.len();
    let nets = memory::mesh(n, NetConfig::default()).unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .enumerate()
            .map(|(i, mut net)| {
                let mat = &mats[i];
                let a = attack.clone();
                s.spawn(move || {
                    let share = [i as u8; 16];
                    if i == a.cheater {
                        let mut editor =
                            Editor::xor_at(a.at, a.offset, a.error, a.to, a.consistent);
                        encrypt(mat, &mut editor.over(&mut links(&mut net)), share, plain)
                    } else {
                        encrypt(mat, &mut links(&mut net), share, plain)
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn encrypt<X: Exchange>(
    mat: &Material,
    x: &mut X,
    share: [u8; 16],
    plain: &[[u8; 16]],
) -> Result<Vec<[u8; 16]>, Error> {
    let mut p = Party::new(mat, x)?;
    Ok(p.encrypt(x, Key::Share(share), plain)?.ciphertexts)
}

/// The lengths of the messages of exchanges 0.. of a fresh-key encryption of `words`
/// codewords, and whether each is an opening of codeword shares.
fn lengths(protocol: Protocol, words: usize) -> Vec<(usize, bool)> {
    let mut l = vec![(34, false), (16, false)];
    for _ in 0..10 {
        l.push((N * (words + 1), true));
        if protocol.tables() == Tables::Bytes {
            l.push(((4 + words * 16 * protocol.blocks_per_word()) * 9, false));
        }
    }
    l.extend(
        [
            32,
            32 + protocol.combinations() * N + 16,
            N * words + 32,
            N + N * words + 16,
        ]
        .map(|len| (len, false)),
    );
    l
}

fn names_a_check(e: &Error) -> bool {
    match e {
        Error::Cheat(_) => true,
        Error::Net(tessera_net::Error::PeerAborted { code, .. }) => {
            *code == tessera_net::AbortCode::CheatDetected
        }
        _ => false,
    }
}

#[test]
fn every_error_is_caught_in_1000_trials_per_protocol() {
    let mut prg = Prg::from_seed_block(Block::from(1000u128));
    for protocol in Protocol::ALL {
        let code = protocol.code();
        let blocks = protocol.blocks_per_word() + 1;
        let words = 2;
        let plain: Vec<[u8; 16]> = (0..blocks).map(|_| prg.random_block().into()).collect();
        let mut honest_run = None;
        for n in [2, 3] {
            let mats = deal_in_memory(Shape::new(protocol, n, blocks).unwrap(), &mut prg).unwrap();
            let want = run_once(&mats, &HONEST, &plain);
            let want = want[0].as_ref().unwrap().clone();
            honest_run.get_or_insert(want.clone());
            let lens = lengths(protocol, words);
            let trials = if n == 2 { 600 } else { 400 };
            for trial in 0..trials {
                let cheater = (prg.next_u32() as usize) % n;
                // Exchanges 2.. carry shares, MACs, commitments and check values (0 is the
                // hello, 1 the key input, which a party may choose freely).
                let at = 2 + (prg.next_u32() as usize) % (lens.len() - 2);
                let (len, opening) = lens[at];
                let codeword_error = opening && prg.next_u32().is_multiple_of(2);
                let (offset, error) = if codeword_error {
                    // A non-zero codeword passes the codeword check: the MAC check must catch it.
                    let mut d = vec![0u8; code.k()];
                    prg.fill_bytes(&mut d);
                    d[0] |= 1;
                    let mut c = [0u8; N];
                    code.encode(&d, &mut c);
                    (N * ((prg.next_u32() as usize) % (len / N)), c.to_vec())
                } else {
                    let e = 1 + (prg.next_u32() % 255) as u8;
                    ((prg.next_u32() as usize) % len, vec![e])
                };
                let everyone = n == 2 || prg.next_u32().is_multiple_of(2);
                let to = if everyone {
                    vec![]
                } else {
                    vec![(cheater + 1 + (prg.next_u32() as usize) % (n - 1)) % n]
                };
                // A codeword error the cheater follows itself is the attack the MAC check is for.
                let consistent = codeword_error || prg.next_u32().is_multiple_of(2);
                let attack = Attack {
                    cheater,
                    at,
                    offset,
                    error,
                    to,
                    consistent,
                };
                let results = run_once(&mats, &attack, &plain);
                let mut caught = 0;
                for (i, r) in results.iter().enumerate().filter(|&(i, _)| i != cheater) {
                    match r {
                        // With three parties, an honest party may see the cheater hang up (after
                        // the other honest party's abort reached it) before that abort reaches
                        // it: it stops all the same, reporting the hang-up.
                        Err(e) if n > 2 && matches!(e, Error::Net(_)) && !names_a_check(e) => {}
                        Err(e) => {
                            assert!(
                                names_a_check(e),
                                "trial {trial}: party {i}: {e} (cheater {cheater}, exchange {at})"
                            );
                            caught += 1;
                        }
                        Ok(c) => {
                            assert!(!everyone, "trial {trial}: party {i} missed exchange {at}");
                            assert_eq!(
                                c, &want,
                                "trial {trial}: party {i} accepted a wrong result"
                            );
                        }
                    }
                }
                assert!(caught > 0, "trial {trial}: nobody caught exchange {at}");
            }
        }
    }
}

/// Every party's file of a dealing from a seeded PRG, in `dir`.
fn write_files(dir: &std::path::Path, shape: Shape, seed: u128) -> Vec<std::path::PathBuf> {
    let paths: Vec<_> = (0..shape.parties)
        .map(|p| dir.join(format!("p{p}.oaes")))
        .collect();
    let mut files: Vec<std::fs::File> = paths
        .iter()
        .map(|p| std::fs::File::create(p).unwrap())
        .collect();
    let mut sinks: Vec<&mut dyn std::io::Write> = files
        .iter_mut()
        .map(|f| f as &mut dyn std::io::Write)
        .collect();
    deal(
        shape,
        &mut Prg::from_seed_block(Block::from(seed)),
        &mut sinks,
    )
    .unwrap();
    paths
}

#[test]
fn reused_foreign_truncated_and_corrupt_files_are_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("tessera-oaes-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shape = Shape::new(Protocol::One, 2, 1).unwrap();
    let paths = write_files(&dir, shape, 5);
    for (p, path) in paths.iter().enumerate() {
        let m = Material::load(path, p).unwrap();
        assert_eq!(m.header().party, p);
        // Another party's file.
        let e = Material::load(path, 1 - p).unwrap_err();
        assert!(matches!(e, PrepError::OtherParty { .. }), "{e}");
        assert!(e.to_string().contains(&path.display().to_string()));
        // Used once only.
        tessera_aes::claim(path, &m.header().session).unwrap();
        let e = tessera_aes::claim(path, &m.header().session).unwrap_err();
        assert!(matches!(e, PrepError::Reused { .. }) && e.to_string().contains("already used"));
        // Truncated.
        let bytes = std::fs::read(path).unwrap();
        let cut = dir.join(format!("cut{p}"));
        std::fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
        let e = Material::load(&cut, p).unwrap_err();
        assert!(matches!(e, PrepError::Truncated { .. }), "{e}");
        std::fs::write(&cut, &bytes[..20]).unwrap();
        assert!(matches!(
            Material::load(&cut, p).unwrap_err(),
            PrepError::Format { .. }
        ));
        // Corrupt: a flipped byte anywhere in the body, or a byte too many.
        let mut bad = bytes.clone();
        let i = 48 + (bytes.len() - 80) / 3;
        bad[i] ^= 4;
        std::fs::write(&cut, &bad).unwrap();
        let e = Material::load(&cut, p).unwrap_err();
        assert!(
            matches!(e, PrepError::Corrupt { .. }) && e.to_string().contains("digest"),
            "{e}"
        );
        let mut long = bytes.clone();
        long.push(0);
        std::fs::write(&cut, &long).unwrap();
        assert!(matches!(
            Material::load(&cut, p).unwrap_err(),
            PrepError::Corrupt { .. }
        ));
        // A header field that does not fit.
        let mut bad = bytes.clone();
        bad[10] = 9;
        std::fs::write(&cut, &bad).unwrap();
        let e = Material::load(&cut, p).unwrap_err();
        assert!(e.to_string().contains("protocol 9"), "{e}");
    }
    // Another dealing's file: the peers notice at the start of the run.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let others = write_files(&other, shape, 6);
    let mats = [
        Material::load(&paths[0], 0).unwrap(),
        Material::load(&others[1], 1).unwrap(),
    ];
    let r = run_once(&mats, &HONEST, &[[0; 16]]);
    for (i, r) in r.iter().enumerate() {
        let e = r.as_ref().unwrap_err();
        assert!(
            matches!(e, Error::Prep(PrepError::OtherSession { party }) if *party == 1 - i),
            "{e}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
