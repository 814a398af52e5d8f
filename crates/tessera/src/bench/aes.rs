//! `tessera bench aes`: throughput of the AES core on every backend, each line with its
//! `efficiency`, the ratio to the backend's roofline (independent register-only `aesenc` chains,
//! 10 rounds counted as one block) measured in the same run. Targets (issue 2, `aesni`, batch
//! ≥ 64): `fixed_key_ecb` ≥ 0.9, `prp_hash` and `ccr` ≥ 0.85, `tccr` ≥ 0.43.

use super::{CommonArgs, Samples, cpu_model, measure, with_host};
use crate::CliError;
use clap::Args;
use rand_core::RngCore;
use serde_json::{Value, json};
use std::hint::black_box;
use std::io::Write;
use tessera_core::transpose::{TransposeBackend, transpose_squares_with, transpose_with};
use tessera_core::{Aes, Backend, Block, FixedKeyAes, FixedKeyHash, Prg};

/// Options of `tessera bench aes`.
#[derive(Args)]
pub struct AesArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Only this backend (default: every backend the CPU has).
    #[arg(long)]
    backend: Option<Backend>,
    /// Columns of the 128-row matrix in the transposition benchmark.
    #[arg(long, default_value_t = 1 << 16)]
    transpose_cols: usize,
}

/// Prints one measurement as a table row or a JSON line.
struct Report {
    json: bool,
    out: std::io::StdoutLock<'static>,
}

impl Report {
    fn line(&mut self, v: Value) -> Result<(), CliError> {
        if self.json {
            writeln!(self.out, "{}", with_host(v))?;
        } else {
            let rate = v
                .get("blocks_per_sec")
                .or_else(|| v.get("bits_per_sec"))
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            let unit = if v.get("bits_per_sec").is_some() {
                "Gbit/s"
            } else {
                "Mblock/s"
            };
            let scaled = if unit == "Gbit/s" {
                rate / 1e9
            } else {
                rate / 1e6
            };
            writeln!(
                self.out,
                "{:<14} {:<10} {:>6} {:>10.1} {:<8} {:>6.3}",
                v["bench"].as_str().unwrap_or(""),
                v["backend"].as_str().unwrap_or(""),
                v["batch"],
                scaled,
                unit,
                v["efficiency"].as_f64().unwrap_or(f64::NAN)
            )?;
        }
        Ok(())
    }
}

fn random_blocks(n: usize) -> Vec<Block> {
    Prg::from_seed_block(Block::new(0x5eed)).random_blocks(n)
}

/// Runs the benchmark.
pub fn run(args: &AesArgs) -> Result<(), CliError> {
    let c = &args.common;
    let mut report = Report {
        json: c.json,
        out: std::io::stdout().lock(),
    };
    if !c.json {
        writeln!(report.out, "cpu: {}", cpu_model())?;
        writeln!(
            report.out,
            "{:<14} {:<10} {:>6} {:>10} {:<8} {:>6}",
            "bench", "backend", "batch", "rate", "unit", "eff"
        )?;
    }
    let backends = match args.backend {
        Some(b) => {
            Aes::with_backend(b)?;
            vec![b]
        }
        None => Backend::available(),
    };
    for backend in backends {
        bench_backend(c, backend, &mut report)?;
    }
    bench_transpose(c, args.transpose_cols, &mut report)
}

fn bench_backend(c: &CommonArgs, backend: Backend, report: &mut Report) -> Result<(), CliError> {
    let iters = if backend == Backend::Portable {
        1_000
    } else {
        100_000
    };
    let (blocks_per_call, _) = backend.roofline(iters)?;
    let roofline_samples = measure(c, blocks_per_call as f64, || {
        black_box(backend.roofline(iters).map(|(_, b)| b).unwrap_or_default());
    });
    let roofline = roofline_samples.median();
    let name = backend.name();
    let line = |bench: &str, batch: usize, rate: Samples| {
        let median = rate.median();
        json!({
            "bench": bench, "backend": name, "batch": batch, "blocks_per_sec": median.round(),
            "blocks_per_sec_stats": rate.stats(), "efficiency": median / roofline,
        })
    };
    report.line(line(
        "roofline",
        backend.blocks_in_flight(),
        roofline_samples,
    ))?;

    let key = Block::new(0x2b7e_1516_28ae_d2a6_abf7_1588_09cf_4f3c);
    let aes = FixedKeyAes::with_backend(key, backend)?;
    for batch in [1, 8, 16, 32, 64, 256, 1024] {
        let mut data = random_blocks(batch);
        let rate = measure(c, batch as f64, || aes.encrypt_blocks(black_box(&mut data)));
        report.line(line("fixed_key_ecb", batch, rate))?;
    }
    if backend == Backend::Aesni {
        // The RustCrypto `aes` crate on the same data, for comparison with our kernel.
        use aes::cipher::{BlockCipherEncrypt, KeyInit};
        let crate_aes = aes::Aes128::new(&key.to_bytes().into());
        for batch in [64, 1024] {
            let mut data: Vec<aes::Block> = random_blocks(batch)
                .iter()
                .map(|b| b.to_bytes().into())
                .collect();
            let rate = measure(c, batch as f64, || {
                crate_aes.encrypt_blocks(black_box(&mut data))
            });
            let mut v = line("fixed_key_ecb", batch, rate);
            v["backend"] = json!("aes-crate");
            report.line(v)?;
        }
    }

    let multi = Aes::with_backend(backend)?;
    for (keys, per_key) in [(64, 1), (1024, 1), (64, 2), (1024, 2)] {
        let key_blocks = random_blocks(keys);
        let mut data = random_blocks(keys * per_key);
        let rate = measure(c, (keys * per_key) as f64, || {
            multi.encrypt_multi_key(black_box(&key_blocks), &mut data)
        });
        let mut v = line("multi_key", keys * per_key, rate);
        v["blocks_per_key"] = json!(per_key);
        report.line(v)?;
    }

    let hash = FixedKeyHash::with_backend(key, backend)?;
    for batch in [8, 64, 1024] {
        let x = random_blocks(batch);
        let t = random_blocks(batch);
        let mut out = vec![Block::ZERO; batch];
        let n = batch as f64;
        report.line(line(
            "prp_hash",
            batch,
            measure(c, n, || hash.tweakable(black_box(&x), &t, &mut out)),
        ))?;
        report.line(line(
            "ccr",
            batch,
            measure(c, n, || hash.ccr(black_box(&x), &mut out)),
        ))?;
        report.line(line(
            "tccr",
            batch,
            measure(c, n, || hash.tccr(black_box(&x), &t, &mut out)),
        ))?;
    }

    let mut prg = Prg::with_backend(Block::new(7), backend)?;
    for batch in [64, 1024] {
        let mut out = vec![Block::ZERO; batch];
        report.line(line(
            "prg",
            batch,
            measure(c, batch as f64, || prg.fill_blocks(black_box(&mut out))),
        ))?;
    }
    Ok(())
}

/// Transposition of a 128 × `cols` bit matrix and back, against the copy bandwidth of the same
/// buffer (the bound: a transposition reads and writes each byte once, like a copy).
fn bench_transpose(c: &CommonArgs, cols: usize, report: &mut Report) -> Result<(), CliError> {
    let cols = cols.max(128) / 128 * 128;
    let bits = (128 * cols) as f64;
    let mut prg = Prg::from_seed_block(Block::new(1));
    let mut input = vec![0u8; 16 * cols];
    prg.fill_bytes(&mut input);
    let mut out = vec![0u8; input.len()];
    let copy = measure(c, bits, || out.copy_from_slice(black_box(&input))).median();
    for backend in TransposeBackend::available() {
        for (rows, cols_now, dir) in [(128, cols, "128xm"), (cols, 128, "mx128")] {
            transpose_with(backend, &input, rows, cols_now, &mut out)?;
            let rate = measure(c, bits, || {
                // The shape was checked just above, so this cannot fail.
                let _ = transpose_with(backend, black_box(&input), rows, cols_now, &mut out);
            });
            report.line(json!({
                "bench": "transpose", "backend": backend.name(), "batch": cols, "direction": dir,
                "bits_per_sec": rate.median().round(), "bits_per_sec_stats": rate.stats(),
                "efficiency": rate.median() / copy, "bound": "memcpy"
            }))?;
        }
        // The same bits as 128 × 128 squares, each transposed in place (OT extension's layout).
        let mut squares = vec![Block::ZERO; cols];
        prg.fill_blocks(&mut squares);
        let rate = measure(c, bits, || {
            // A whole number of squares on a supported backend: this cannot fail.
            let _ = transpose_squares_with(backend, black_box(&mut squares));
        });
        report.line(json!({
            "bench": "transpose", "backend": backend.name(), "batch": cols, "direction": "squares",
            "bits_per_sec": rate.median().round(), "bits_per_sec_stats": rate.stats(),
            "efficiency": rate.median() / copy, "bound": "memcpy"
        }))?;
    }
    Ok(())
}
