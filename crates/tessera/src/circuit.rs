//! `tessera circuit info|eval|write|compile`: what a circuit file holds, its plaintext
//! evaluation, Bristol files of circuits (chained copies of a step circuit included), and
//! compiled circuit files.

use crate::CliError;
use clap::Subcommand;
use serde_json::json;
use std::io::Read as _;
use tessera_circuit::Circuit;
use tessera_circuit::analysis::{and_depth, and_gates_per_layer, gate_counts, max_live_wires};
use tessera_circuit::bristol::stream::{DEFAULT_WINDOW, Streamed};
use tessera_circuit::bristol::{Format, WRITTEN_FILE, read_file, write_chained, write_to};
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::library::{NAMES, builtin};

/// Where a circuit came from.
pub enum Source {
    /// A built-in circuit of `tessera_circuit::library`.
    Builtin,
    /// A file in one of the Bristol formats.
    File(Format),
}

/// The circuit `spec` names: a built-in name (see `tessera_circuit::library`), else a file.
pub fn load(spec: &str) -> Result<(Circuit, Source), CliError> {
    if let Some(c) = builtin(spec) {
        return Ok((c?, Source::Builtin));
    }
    let path = std::path::Path::new(spec);
    if !path.exists() {
        return Err(CliError::Usage(format!(
            "{spec}: neither a built-in circuit ({NAMES}) nor a file"
        )));
    }
    let (c, f) = read_file(path)?;
    Ok((c, Source::File(f)))
}

/// The bits of a `width`-bit value given on the command line as hex, or as `@FILE`: the hex
/// read from FILE (for values too long for a command line), which may hold the digits and
/// whitespace only, no more than such a value needs plus 4 KiB.
pub fn hex_value(arg: &str, width: u32) -> Result<Vec<bool>, CliError> {
    let Some(path) = arg.strip_prefix('@') else {
        return Ok(bits_from_hex(arg, width)?);
    };
    let io = |e: std::io::Error| tessera_circuit::Error::Io {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let limit = 2 * u64::from(width.div_ceil(8)) + 4096;
    let mut text = String::new();
    tessera_core::files::open(std::path::Path::new(path))
        .and_then(|f| std::io::Read::take(f, limit + 1).read_to_string(&mut text))
        .map_err(io)?;
    if text.len() as u64 > limit {
        return Err(CliError::Usage(format!(
            "{path}: more than the {limit} bytes a {width}-bit value's hex digits take"
        )));
    }
    Ok(bits_from_hex(&text, width)?)
}

/// Circuit subcommands.
#[derive(Subcommand)]
pub enum CircuitCommand {
    /// Gate counts, AND-depth, wires, inputs and outputs.
    Info {
        /// A built-in circuit (aes128, sha256, sha1, add<n>, sub<n>, mul<n>, lt<n>, lts<n>,
        /// eq<n>) or a Bristol Fashion or old-format Bristol file.
        circuit: String,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Evaluates the circuit in plaintext and prints each output value as hex. Bit k of a value
    /// is bit (k mod 8) of byte (k div 8) of its hex string (least significant bit first).
    Eval {
        /// A built-in circuit (aes128, sha256, sha1, add<n>, sub<n>, mul<n>, lt<n>, lts<n>,
        /// eq<n>) or a Bristol Fashion or old-format Bristol file.
        circuit: String,
        /// One hex value per input value, in order (`@FILE`: the hex in FILE).
        #[arg(long = "input")]
        inputs: Vec<String>,
    },
    /// Writes the circuit as a Bristol file, line by line; with --chain N, N copies of a step
    /// circuit (inputs: fresh value, state; output: the next state) chained into one circuit
    /// whose value 0 is every step's fresh value and value 1 the first state (`sha256
    /// --chain N`: SHA-256 over N blocks, about 119 000 N gates).
    Write {
        /// A built-in circuit or a Bristol file.
        circuit: String,
        /// The file to write (replaced if it exists, once FILE.partial is complete).
        #[arg(long)]
        out: std::path::PathBuf,
        /// Bristol Fashion or the older Bristol format.
        #[arg(long, value_enum, default_value_t = FormatArg::Fashion)]
        format: FormatArg,
        /// Chain this many copies of the circuit.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        chain: Option<u32>,
    },
    /// Reads a Bristol file once (its liveness pass and every window, so a faulty file is
    /// refused) and writes it compiled: each gate as a 13-byte record with the wires it reads
    /// for the last time, and a checksum. Where a circuit file is read in windows (`ag run`,
    /// `run --stream-window`), a compiled file is read without the liveness pass; anywhere a
    /// file is named, a compiled one works. It keeps the text's digest, so it runs against a
    /// party that reads the text.
    Compile {
        /// The Bristol file.
        file: std::path::PathBuf,
        /// The compiled file to write (replaced if it exists, once FILE.partial is complete).
        #[arg(long)]
        out: std::path::PathBuf,
    },
}

/// A Bristol file format on the command line.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FormatArg {
    /// Bristol Fashion.
    Fashion,
    /// The older Bristol format (two input values, one output value, XOR/AND/INV).
    Old,
}

/// Runs a circuit subcommand.
pub fn run(cmd: CircuitCommand) -> Result<(), CliError> {
    match cmd {
        CircuitCommand::Info { circuit, json } => {
            let (c, source) = load(&circuit)?;
            let n = gate_counts(&c);
            let info = json!({
                "circuit": circuit,
                "format": match source {
                    Source::Builtin => "builtin",
                    Source::File(Format::Fashion) => "bristol-fashion",
                    Source::File(Format::Old) => "bristol",
                },
                "and_gates": n.and,
                "xor_gates": n.xor,
                "inv_gates": n.inv,
                "eq_gates": n.eq,
                "and_depth": and_depth(&c),
                "max_and_layer_width": and_gates_per_layer(&c).into_iter().max().unwrap_or(0),
                "wires": c.num_wires,
                "max_live_wires": max_live_wires(&c),
                "inputs": c.inputs,
                "outputs": c.outputs,
            });
            if json {
                println!("{info}");
            } else if let Some(map) = info.as_object() {
                for (k, v) in map {
                    println!("{k:<20} {v}");
                }
            }
            Ok(())
        }
        CircuitCommand::Eval { circuit, inputs } => {
            let (c, _) = load(&circuit)?;
            if inputs.len() != c.inputs.len() {
                return Err(tessera_circuit::Error::Input(format!(
                    "{} takes {} input values (widths {:?}), got {} --input",
                    circuit,
                    c.inputs.len(),
                    c.inputs,
                    inputs.len()
                ))
                .into());
            }
            let bits = inputs
                .iter()
                .zip(&c.inputs)
                .map(|(h, &w)| hex_value(h, w))
                .collect::<Result<Vec<_>, _>>()?;
            for out in evaluate(&c, &bits)? {
                println!("{}", bits_to_hex(&out));
            }
            Ok(())
        }
        CircuitCommand::Write {
            circuit,
            out,
            format,
            chain,
        } => {
            let (c, _) = load(&circuit)?;
            let format = match format {
                FormatArg::Fashion => Format::Fashion,
                FormatArg::Old => Format::Old,
            };
            write_replacing(&out, |w| match chain {
                Some(n) => write_chained(&c, n, format, w),
                None => write_to(&c, format, w),
            })
        }
        CircuitCommand::Compile { file, out } => {
            let streamed = Streamed::open(&file, DEFAULT_WINDOW)?;
            write_replacing(&out, |w| streamed.compile(w))
        }
    }
}

/// Writes a file at `out` with `write`: beside it first, renamed once complete, so a refused
/// circuit or a full disk leaves no partial file under the name asked for. The writer's I/O
/// errors (naming [`WRITTEN_FILE`]) name `out`.
fn write_replacing(
    out: &std::path::Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<(), tessera_circuit::Error>,
) -> Result<(), CliError> {
    let mut partial = out.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    let io = |e: std::io::Error| tessera_circuit::Error::Io {
        path: out.display().to_string(),
        message: e.to_string(),
    };
    let file = std::fs::File::create(&partial).map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = write(&mut w);
    drop(w);
    let renamed = written.and_then(|()| std::fs::rename(&partial, out).map_err(io));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    renamed.map_err(|e| match e {
        tessera_circuit::Error::Io { path, message } if path == WRITTEN_FILE => {
            tessera_circuit::Error::Io {
                path: out.display().to_string(),
                message,
            }
        }
        other => other,
    })?;
    Ok(())
}
