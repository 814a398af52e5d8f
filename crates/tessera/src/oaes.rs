//! `tessera oaes prep|run|bench` and `tessera demo oaes`: oblivious AES for n parties
//! (`tessera-aes`; Damgård and Zakarias, "Fast Oblivious AES"). A trusted dealer
//! writes one pre-processing file per party; every party runs with its file and its key share,
//! all know the plaintexts and all print the ciphertexts.

use crate::CliError;
use crate::bench::{CommonArgs, Exchange, NetCondition, SampleStats, cpu_model, loopback_mesh};
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::Instant;
use tessera_aes::{
    Encryption, Key, Material, Party, Protocol, Shape, claim, deal, deal_buffers, links,
};
use tessera_core::Prg;
use tessera_net::{NetConfig, Network};

/// `tessera oaes ...`.
#[derive(Subcommand)]
pub enum OaesCommand {
    /// The trusted dealer: one pre-processing file per party (DIR/party-I.oaes).
    Prep(PrepArgs),
    /// One party of an oblivious AES encryption over TCP or TLS; prints the ciphertexts.
    Run(Box<RunArgs>),
    /// Latency and amortised time per block for several party counts, protocols and batch
    /// sizes, all parties in this process over loopback TCP.
    Bench(BenchArgs),
}

/// Options of `tessera oaes prep`.
#[derive(Args)]
pub struct PrepArgs {
    /// The number of parties.
    #[arg(long)]
    parties: usize,
    /// The online protocol the material is for (1, 2 or 3).
    #[arg(long, default_value = "2", value_parser = parse_protocol)]
    protocol: Protocol,
    /// AES blocks the material serves (one key, these many blocks).
    #[arg(long, default_value_t = 1)]
    blocks: usize,
    /// The directory to write party-0.oaes, party-1.oaes, ... into (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Options of `tessera oaes run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    mesh: crate::parties::MeshArgs,
    /// This party's pre-processing file (from `tessera oaes prep`); used once.
    #[arg(long)]
    prep: PathBuf,
    /// This party's share of the AES-128 key, 32 hex digits (the key is the XOR of all shares).
    #[arg(long)]
    key_share: String,
    /// The plaintext blocks, 32 hex digits each, comma-separated; every party names the same.
    #[arg(long, value_delimiter = ',', required = true)]
    plaintext: Vec<String>,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Options of `tessera oaes bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Party counts.
    #[arg(long, value_delimiter = ',', default_value = "2,3,5")]
    parties: Vec<usize>,
    /// Protocols.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3", value_parser = parse_protocol)]
    protocol: Vec<Protocol>,
    /// Blocks per encryption.
    #[arg(long, value_delimiter = ',', default_value = "1,15,150")]
    blocks: Vec<usize>,
    /// Only time the Reed-Solomon codes: encoding (constant-time and public) and decoding per
    /// codeword, systematic against coefficient encoding, for each protocol's dimension.
    #[arg(long)]
    codes: bool,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    net: NetCondition,
}

/// Options of `tessera demo oaes`.
#[derive(Args)]
pub struct DemoArgs {
    /// The online protocol (1, 2 or 3).
    #[arg(long, default_value = "2", value_parser = parse_protocol)]
    protocol: Protocol,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_protocol(s: &str) -> Result<Protocol, String> {
    s.parse::<u8>()
        .ok()
        .and_then(Protocol::from_number)
        .ok_or_else(|| {
            let names: Vec<String> = Protocol::ALL.iter().map(|p| p.to_string()).collect();
            format!("no protocol '{s}'; there are {}", names.join(", "))
        })
}

/// 16 bytes from 32 hex digits, in FIPS-197 byte order.
fn block_hex(s: &str, what: &str) -> Result<[u8; 16], CliError> {
    let bad = || {
        CliError::Usage(format!(
            "{what}: want 32 hex digits, got '{}'",
            tessera_net::escape(s.as_bytes(), 80)
        ))
    };
    if s.len() != 32 {
        return Err(bad());
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2).ok_or_else(bad)?, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Runs `tessera oaes ...`.
pub fn run(cmd: OaesCommand) -> Result<(), CliError> {
    match cmd {
        OaesCommand::Prep(args) => prep(&args),
        OaesCommand::Run(args) => run_party(&args),
        OaesCommand::Bench(args) => bench(&args),
    }
}

/// The file of party `p` in `dir`.
fn prep_path(dir: &Path, p: usize) -> PathBuf {
    dir.join(format!("party-{p}.oaes"))
}

fn prep(args: &PrepArgs) -> Result<(), CliError> {
    let shape = Shape::new(args.protocol, args.parties, args.blocks)?;
    std::fs::create_dir_all(&args.out)?;
    let paths: Vec<PathBuf> = (0..shape.parties)
        .map(|p| prep_path(&args.out, p))
        .collect();
    let t = Instant::now();
    // Secrets: new files of mode 0600, never over an existing file or through a link.
    let mut files = paths
        .iter()
        .map(|p| {
            tessera_core::files::create_secret(p)
                .map(std::io::BufWriter::new)
                .map_err(|e| CliError::Usage(format!("{}: {e}", p.display())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let session = {
        let mut sinks: Vec<&mut dyn std::io::Write> = files
            .iter_mut()
            .map(|f| f as &mut dyn std::io::Write)
            .collect();
        deal(shape, &mut Prg::from_os()?, &mut sinks)?
    };
    for f in &mut files {
        std::io::Write::flush(f)?;
    }
    let secs = t.elapsed().as_secs_f64();
    let sizes: Vec<u64> = (0..shape.parties).map(|p| shape.file_bytes(p)).collect();
    if args.json {
        println!(
            "{}",
            json!({
                "protocol": args.protocol.number(), "parties": shape.parties, "blocks": shape.blocks,
                "session": hex(&session), "files": paths, "bytes": sizes, "seconds": secs,
            })
        );
    } else {
        for (p, s) in paths.iter().zip(&sizes) {
            println!("{} {s} bytes", p.display());
        }
        eprintln!(
            "tessera: session {} dealt in {secs:.2} s; the dealer is trusted and keeps nothing",
            hex(&session)
        );
    }
    Ok(())
}

fn run_party(args: &RunArgs) -> Result<(), CliError> {
    let n = args.mesh.parties()?;
    let key = block_hex(&args.key_share, "--key-share")?;
    let plain = args
        .plaintext
        .iter()
        .map(|p| block_hex(p, "--plaintext"))
        .collect::<Result<Vec<_>, _>>()?;
    let t = Instant::now();
    let mat = Material::load(&args.prep, args.mesh.party).map_err(tessera_aes::Error::from)?;
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    claim(&args.prep, &mat.header().session).map_err(tessera_aes::Error::from)?;
    let mut net = args.mesh.open()?;
    let t = Instant::now();
    let e = {
        let mut x = links(&mut net);
        let mut party = Party::new(&mat, &mut x)?;
        party.encrypt(&mut x, Key::Share(key), &plain)?
    };
    let online_ms = t.elapsed().as_secs_f64() * 1e3;
    let cts: Vec<String> = e.ciphertexts.iter().map(|c| hex(c)).collect();
    if args.json {
        let s = net.stats();
        println!(
            "{}",
            json!({
                "party": args.mesh.party, "parties": n, "protocol": mat.header().shape.protocol.number(),
                "ciphertexts": cts, "load_ms": load_ms, "online_ms": online_ms,
                "bytes_sent": s.bytes_sent, "bytes_received": s.bytes_received, "rounds": s.rounds,
            })
        );
    } else {
        cts.iter().for_each(|c| println!("{c}"));
    }
    Ok(())
}

/// The parties' addresses and certificates, from `--parties-file` or from `--parties` and
/// `--peer-certs`.
/// Every party's material dealt in memory, and the time parsing and checking the largest
/// file's bytes took.
fn deal_loaded(shape: Shape) -> Result<(Vec<Material>, f64, f64), CliError> {
    let t = Instant::now();
    let buffers = deal_buffers(shape, &mut Prg::from_os()?)?;
    let deal_s = t.elapsed().as_secs_f64();
    let mut load_ms = 0f64;
    let mats = buffers
        .into_iter()
        .enumerate()
        .map(|(p, b)| {
            let t = Instant::now();
            let m = Material::from_bytes(b, &format!("party {p}"));
            load_ms = load_ms.max(t.elapsed().as_secs_f64() * 1e3);
            m.map_err(|e| CliError::from(tessera_aes::Error::from(e)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((mats, deal_s, load_ms))
}

/// One timed encryption: the slowest party's milliseconds, party 0's bytes sent, the most
/// rounds and bytes sent any party counted, and the ciphertexts.
struct Timed {
    ms: f64,
    bytes: u64,
    rounds: u64,
    most_bytes: u64,
    ciphertexts: Vec<[u8; 16]>,
}

/// One timed encryption on every party of `nets` (threads started together once all are
/// ready, as the seed's monitor does).
fn timed(
    mats: &[Material],
    nets: &mut [Network],
    shares: &[[u8; 16]],
    plain: &[[u8; 16]],
    expand_first: bool,
) -> Result<Timed, CliError> {
    let barrier = Barrier::new(nets.len());
    let results: Vec<Result<(f64, u64, u64, Encryption), tessera_aes::Error>> =
        std::thread::scope(|s| {
            let handles: Vec<_> = nets
                .iter_mut()
                .enumerate()
                .map(|(i, net)| {
                    let (mat, share, barrier) = (&mats[i], shares[i], &barrier);
                    s.spawn(move || {
                        let mut party = Party::new(mat, &mut links(net))?;
                        let keys = match expand_first {
                            true => Some(party.expand_key(&mut links(net), &share)?),
                            false => None,
                        };
                        let before = net.stats();
                        barrier.wait();
                        let t = Instant::now();
                        let key = keys.as_ref().map_or(Key::Share(share), Key::Expanded);
                        let e = party.encrypt(&mut links(net), key, plain)?;
                        let ms = t.elapsed().as_secs_f64() * 1e3;
                        let after = net.stats();
                        Ok((
                            ms,
                            after.bytes_sent - before.bytes_sent,
                            after.rounds - before.rounds,
                            e,
                        ))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(tessera_aes::Error::Usage("a party panicked".into()))
                    })
                })
                .collect()
        });
    let mut out = Timed {
        ms: 0.0,
        bytes: 0,
        rounds: 0,
        most_bytes: 0,
        ciphertexts: Vec::new(),
    };
    for (i, r) in results.into_iter().enumerate() {
        let (ms, bytes, rounds, e) = r?;
        out.ms = out.ms.max(ms);
        out.rounds = out.rounds.max(rounds);
        out.most_bytes = out.most_bytes.max(bytes);
        if i == 0 {
            (out.bytes, out.ciphertexts) = (bytes, e.ciphertexts);
        }
    }
    Ok(out)
}

fn random_shares(n: usize, prg: &mut Prg) -> (Vec<[u8; 16]>, [u8; 16]) {
    let shares: Vec<[u8; 16]> = (0..n).map(|_| prg.random_block().into()).collect();
    let key = shares.iter().fold([0u8; 16], |mut k, s| {
        k.iter_mut().zip(s).for_each(|(a, b)| *a ^= b);
        k
    });
    (shares, key)
}

fn aes128(key: &[u8; 16], p: &[u8; 16]) -> [u8; 16] {
    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    let mut b = (*p).into();
    aes::Aes128::new(&(*key).into()).encrypt_block(&mut b);
    b.into()
}

/// `--codes`: nanoseconds per codeword for each dimension and encoding.
fn bench_codes(args: &BenchArgs) -> Result<(), CliError> {
    use tessera_aes::code::{Encoding, N, ReedSolomon};
    let mut dims: Vec<usize> = args.protocol.iter().map(|p| p.data_len()).collect();
    dims.dedup();
    let mut prg = Prg::from_os()?;
    for k in dims {
        for encoding in [Encoding::Systematic, Encoding::Coefficients] {
            let code = ReedSolomon::get(k, encoding);
            let mut data = vec![0u8; k];
            rand_core::RngCore::fill_bytes(&mut prg, &mut data);
            let mut word = [0u8; N];
            let ns = |rate: crate::bench::Samples| rate.stats_of(|r| 1e9 / r);
            let encode = ns(crate::bench::measure(&args.common, 1.0, || {
                code.encode(std::hint::black_box(&data), &mut word)
            }));
            let public = ns(crate::bench::measure(&args.common, 1.0, || {
                code.encode_public(std::hint::black_box(&data), &mut word)
            }));
            let mut back = vec![0u8; k];
            let decode = ns(crate::bench::measure(&args.common, 1.0, || {
                std::hint::black_box(code.decode(std::hint::black_box(&word), &mut back));
            }));
            let name = match encoding {
                Encoding::Systematic => "systematic",
                Encoding::Coefficients => "coefficients",
            };
            let v = json!({
                "bench": "oaes-code", "k": k, "n": N, "encoding": name,
                "encode_ns": encode.median, "encode_public_ns": public.median,
                "decode_ns": decode.median, "encode_ns_stats": encode,
                "encode_public_ns_stats": public, "decode_ns_stats": decode,
                "gf256": tessera_core::gf256::Gf256Kernel::active().name(), "cpu": cpu_model(),
            });
            let (encode, public, decode) = (encode.median, public.median, decode.median);
            if args.common.json {
                crate::bench::emit(v);
            } else {
                println!(
                    "RS(255, {k}) {name:>12}: encode {encode:.0} ns (public data {public:.0} ns), decode and check {decode:.0} ns"
                );
            }
        }
    }
    Ok(())
}

fn bench(args: &BenchArgs) -> Result<(), CliError> {
    if args.codes {
        return bench_codes(args);
    }
    let mut prg = Prg::from_os()?;
    for &protocol in &args.protocol {
        for &n in &args.parties {
            for &blocks in &args.blocks {
                let shape = Shape::new(protocol, n, blocks)?;
                let (mats, deal_s, load_ms) = deal_loaded(shape)?;
                let (mut nets, wire) = loopback_mesh(n, None, args.net)?;
                let mut with_key = Vec::new();
                let mut without_key = Vec::new();
                let (mut bytes, mut rounds) = ([0u64; 2], [0u64; 2]);
                let mut exchange = [Exchange::default(); 2];
                for sample in 0..args.common.samples + 1 {
                    for (expand_first, times) in [(false, &mut with_key), (true, &mut without_key)]
                    {
                        // Fresh key and plaintexts every time, so the tables are read where a
                        // fresh run would read them.
                        let (shares, key) = random_shares(n, &mut prg);
                        let plain: Vec<[u8; 16]> =
                            (0..blocks).map(|_| prg.random_block().into()).collect();
                        let t = timed(&mats, &mut nets, &shares, &plain, expand_first)?;
                        let want: Vec<[u8; 16]> = plain.iter().map(|p| aes128(&key, p)).collect();
                        if t.ciphertexts != want {
                            return Err(CliError::Usage(format!(
                                "protocol {protocol}, {n} parties: wrong ciphertexts"
                            )));
                        }
                        if sample > 0 {
                            times.push(t.ms);
                        }
                        let k = usize::from(expand_first);
                        (bytes[k], rounds[k]) = (t.bytes, t.rounds);
                        // A party sends alike to every peer: its bytes over n - 1 per link.
                        exchange[k] = Exchange {
                            rounds: t.rounds as f64,
                            busier_bytes: t.most_bytes as f64 / (n - 1) as f64,
                        };
                    }
                }
                let stats = [SampleStats::of(with_key), SampleStats::of(without_key)];
                let (lat_key, lat) = (stats[0].median, stats[1].median);
                let biggest = shape.file_bytes(n - 1);
                let mut v = json!({
                    "bench": "oaes", "protocol": protocol.number(), "parties": n, "blocks": blocks,
                    "latency_ms_with_key_expansion": lat_key,
                    "latency_ms_without_key_expansion": lat,
                    "latency_ms_with_key_expansion_stats": stats[0],
                    "latency_ms_without_key_expansion_stats": stats[1],
                    "us_per_block": lat * 1e3 / blocks as f64,
                    "us_per_block_with_key_expansion": lat_key * 1e3 / blocks as f64,
                    "bytes_sent_per_party": bytes[0], "bytes_sent_per_party_without_key_expansion": bytes[1],
                    "rounds": rounds[0], "rounds_without_key_expansion": rounds[1],
                    "prep_bytes_largest_party": biggest, "prep_bytes_other_parties": shape.file_bytes(0),
                    "prep_bytes_per_block_largest_party": biggest as f64 / blocks as f64,
                    "load_ms_largest_party": load_ms, "deal_seconds": deal_s,
                    "samples": args.common.samples, "backend": tessera_core::Backend::active().name(),
                    "gf256": tessera_core::gf256::Gf256Kernel::active().name(), "cpu": cpu_model(),
                });
                wire.describe(&mut v);
                let judged = [
                    ("with_key_expansion", lat_key, 0),
                    ("without_key_expansion", lat, 1),
                ]
                .map(|(name, ms, k)| wire.judge(&mut v, name, ms, exchange[k]))
                .concat();
                if args.common.json {
                    crate::bench::emit(v);
                } else {
                    println!(
                        "protocol {} {n} parties {blocks:>4} blocks: latency {lat_key:.3} ms with key expansion, {lat:.3} ms without; {:.1} µs/block; {} B sent/party; {} rounds; prep {:.1} MB/block (largest file), load {load_ms:.0} ms{judged}",
                        protocol.number(),
                        lat * 1e3 / blocks as f64,
                        bytes[0],
                        rounds[0],
                        biggest as f64 / blocks as f64 / 1e6
                    );
                }
            }
        }
    }
    Ok(())
}

/// `tessera demo oaes`: three parties in this process, the FIPS-197 key split among them.
pub fn demo(args: &DemoArgs) -> Result<(), CliError> {
    let key: [u8; 16] = core::array::from_fn(|i| i as u8);
    let plain: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
    let want = block_hex("69c4e0d86a7b0430d8cdb78070b4c55a", "FIPS-197 C.1")?;
    let mut prg = Prg::from_os()?;
    let (mut shares, _) = random_shares(2, &mut prg);
    let last = shares.iter().fold(key, |mut k, s| {
        k.iter_mut().zip(s).for_each(|(a, b)| *a ^= b);
        k
    });
    shares.push(last);
    let shape = Shape::new(args.protocol, 3, 1)?;
    let (mats, deal_s, _) = deal_loaded(shape)?;
    let mut nets = tessera_net::memory::mesh(3, NetConfig::default())?;
    let Timed {
        ms,
        bytes,
        rounds,
        ciphertexts,
        ..
    } = timed(&mats, &mut nets, &shares, &[plain], false)?;
    let got = ciphertexts.first().copied().unwrap_or_default();
    let ok = got == want;
    if args.json {
        println!(
            "{}",
            json!({
                "protocol": args.protocol.number(), "parties": 3,
                "key_shares": shares.iter().map(|s| hex(s)).collect::<Vec<_>>(),
                "plaintext": hex(&plain), "ciphertext": hex(&got), "fips_197": ok,
                "latency_ms": ms, "bytes_sent_per_party": bytes, "rounds": rounds,
                "deal_seconds": deal_s,
            })
        );
    } else {
        println!(
            "oblivious AES-128, protocol {}, 3 parties in one process",
            args.protocol
        );
        for (i, s) in shares.iter().enumerate() {
            println!("  party {i} key share {}", hex(s));
        }
        println!("  plaintext  {}", hex(&plain));
        println!(
            "  ciphertext {} ({})",
            hex(&got),
            if ok { "FIPS-197 C.1: correct" } else { "WRONG" }
        );
        println!(
            "  {ms:.2} ms from a fresh shared key, {bytes} bytes sent per party, {rounds} rounds; dealing took {deal_s:.2} s"
        );
    }
    if ok {
        Ok(())
    } else {
        Err(CliError::Usage("the ciphertext is not FIPS-197's".into()))
    }
}
