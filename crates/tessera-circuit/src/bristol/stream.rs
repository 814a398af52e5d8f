//! Bristol files too large to hold as one gate list, read in two passes: a backward pass over
//! the gate lines finds where each wire is read for the last time (liveness), then a forward
//! pass cuts the gates into windows of consecutive gates, each a [`Circuit`] of its own whose
//! inputs are the live wires it reads and whose outputs are the wires it writes that are read
//! later (or are outputs of the file's circuit).
//!
//! A wire that lives across windows has a *position*: an index into a store the caller keeps
//! (labels in garbling, bits in plaintext). A position is freed once its wire is read for the
//! last time and reused, so the store, like everything else here, grows with the live wires,
//! not with the file: the backward pass holds the set of wires read later, the forward pass
//! the live wires' positions, one window, and the written wires as ranges (one range for a
//! file that writes its wires in order). The text is parsed once: the backward pass writes
//! every gate, with its liveness marks, as a record of [`RECORD_BYTES`] bytes to a temporary
//! file, which the forward pass reads (in perf profiles of `ag run` of a 382 MB file on a
//! 2-core Xeon, the line parser went from 9 % of a party's samples to 4–5 %).
//!
//! The forward pass checks everything [`super::parse_reader`] checks, with the same messages
//! and line numbers, but only as it reaches each gate: an error may come after some windows
//! are out. The backward pass reads the lines without judging them (a line it cannot read is
//! recorded as unreadable and has no effect on liveness; the forward pass reads it again to
//! word the fault); it refuses only a gate count that differs from the header's and a line
//! longer than [`MAX_LINE_BYTES`]. A fault's line is found by counting the file's lines again,
//! which only a faulty file pays for.
//!
//! A compiled file ([`compiled`], written by [`Streamed::compile`]) holds those records, so it
//! is read by the forward pass alone, which judges its gates as it judges a text's (a fault
//! names the gate and its record's byte instead of a line).

use super::{
    Format, Lines, MAX_LINE_BYTES, err, fewer_gates, gate_line, header, in_file, io_error,
    more_gates,
};
use crate::circuit::GateFault;
use crate::eval::{check_values, split_values};
use crate::{Circuit, Error, Gate, GateKind, Wire};
use foldhash::fast::RandomState;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

pub mod compiled;

/// Maps keyed by wires, hashed fast (the keys are the file's: the hasher is seeded at random).
type HashMap<K, V> = std::collections::HashMap<K, V, RandomState>;

/// Gates per window by default: 2^16, as many as [`crate::layered`] levels at once.
pub const DEFAULT_WINDOW: usize = 1 << 16;

/// Windows [`Streamed::run_ahead`] prepares ahead of the run at most: a reader that gets a core
/// while the run waits on its peer banks that time for later windows (a 2^16-gate window's
/// two-party program is about 1 MB; on `ag run` of a SHA-256 chain file on two shared cores,
/// 2.50–2.54 s against 2.54–2.65 s with one window ahead, three runs each, alternated).
pub const READ_AHEAD: usize = 8;

/// The most gates per window (window-local wire names keep a tag bit).
pub const MAX_WINDOW: usize = 1 << 24;

/// Liveness mark bits of a gate: input `a` is read for the last time here (input `k`: this
/// bit shifted left by `k`, so `b`'s is 2).
const LAST_A: u8 = 1;
/// The output is never read and is not an output of the circuit.
const DEAD: u8 = 4;

/// The context string of the file digest (BLAKE3's key derivation mode).
pub const DIGEST_CONTEXT: &str = "tessera 2026-12 bristol-stream digest v2";

/// Bytes read at once by the backward pass.
const CHUNK_BYTES: usize = 1 << 20;
/// Gates whose records the backward pass collects before writing them.
const RECORD_GATES: u64 = 1 << 16;

/// Bytes of a gate's record in the temporary file: its kind (low four bits) and liveness
/// marks (high four bits), then its wires `a`, `b` and `out`, little-endian.
pub const RECORD_BYTES: usize = 13;
/// The kind of a record whose line the backward pass could not read as a gate.
const UNREADABLE: u8 = 0xf;

/// What a [`Streamed`] reads: a Bristol text file, whose records the liveness pass wrote to a
/// temporary file, or a compiled file ([`compiled`]) holding the records itself.
enum Origin {
    Text {
        /// The line of the header's counts.
        header_line: usize,
        /// The line before the first gate line and the byte it starts at.
        gates_after: (usize, u64),
    },
    Compiled {
        /// The byte of the file where the first record starts.
        records_at: u64,
        /// The checksum of the header and the records read so far.
        checksum: Box<blake3::Hasher>,
        /// The checksum the file ends with.
        expected: [u8; 32],
    },
}

/// What opening a file of either kind finds, from which [`Streamed::new`] builds the reader.
struct Opened {
    path: String,
    digest: [u8; 32],
    num_gates: u32,
    and_gates: u64,
    num_wires: u32,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    format: Format,
    origin: Origin,
    /// The gate records, from the first.
    records: File,
}

/// A window-local wire before renumbering: an input (its index) or, with this tag, a wire
/// written in the window (the index of its gate in the window).
const WRITTEN: u32 = 1 << 31;

/// A Bristol file read window by window; see the module documentation.
pub struct Streamed {
    path: String,
    digest: [u8; 32],
    num_gates: u32,
    /// AND gates among the gate lines the backward pass could read.
    and_gates: u64,
    num_wires: u32,
    /// The first output wire: outputs are never freed.
    output_start: Wire,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    format: Format,
    origin: Origin,
    window: usize,
    /// The gate records the backward pass wrote, read in order.
    records: BufReader<File>,
    /// One window's records.
    record_bytes: Vec<u8>,
    gates_read: u32,
    windows: u64,
    /// Live wires written before this window (or inputs), with their positions.
    live: HashMap<Wire, u32>,
    free: Vec<u32>,
    positions: u32,
    written: WireRanges,
    // One window, kept across windows.
    local: LocalNames,
    /// Wires written in the window, and whether they outlive it.
    writes: Vec<(Wire, bool)>,
    reads: Vec<u32>,
    keeps: Vec<u32>,
    renumber: Vec<u32>,
    circuit: Circuit,
}

/// One window of gates, numbered as a circuit of its own: inputs first (one value), then the
/// wires it writes, the ones that outlive it last (one output value).
pub struct Window<'s> {
    /// The window's gates as a valid circuit.
    pub circuit: &'s Circuit,
    /// The positions of the circuit's input wires, in order.
    pub inputs: &'s [u32],
    /// The positions its output wires go to, in order. A position may be one an input of the
    /// same window is read from: read the inputs before writing the outputs.
    pub outputs: &'s [u32],
    /// Its index among the file's windows.
    pub index: u64,
    /// The size of a store that holds every position so far.
    pub positions: usize,
}

/// A window read ahead ([`Streamed::run_ahead`]): what the caller made of its circuit, and
/// the positions as in [`Window`].
pub struct Prepared<T> {
    /// What the caller's `prepare` made of the window's circuit.
    pub made: T,
    /// The positions of the circuit's input wires, in order.
    pub inputs: Vec<u32>,
    /// The positions its output wires go to, in order.
    pub outputs: Vec<u32>,
    /// The size of a store that holds every position so far.
    pub positions: usize,
}

impl Streamed {
    /// Opens the circuit file at `path` to be read in windows of `window` gates (1 to
    /// [`MAX_WINDOW`]), running the liveness pass. Input wire `i` of the circuit is at position
    /// `i`.
    pub fn open(path: &Path, window: usize) -> Result<Streamed, Error> {
        let name = path.display().to_string();
        let io = io_error(&name);
        if !(1..=MAX_WINDOW).contains(&window) {
            return Err(Error::Input(format!(
                "a window holds 1 to {MAX_WINDOW} gates, not {window}"
            )));
        }
        let mut file = tessera_core::files::open(path).map_err(io)?;
        if compiled::is_compiled(&mut file).map_err(io)? {
            return Streamed::open_compiled(file, name, window);
        }
        let size = file.metadata().map_err(io)?.len();
        let mut lines = Lines::at(BufReader::new(file), 0, 0, u64::MAX);
        let h = header(&mut lines).map_err(|e| in_file(e, &name))?;
        let (after_line, gates_at) = h.gates_after;
        let output_start = h.num_wires - h.outputs.iter().sum::<u32>();
        let mut records = tempfile::tempfile().map_err(io_error(RECORDS_FILE))?;
        let mut digest = blake3::Hasher::new_derive_key(DIGEST_CONTEXT);
        for n in [h.num_gates, h.num_wires] {
            digest.update(&n.to_le_bytes());
        }
        for list in [&h.inputs, &h.outputs] {
            digest.update(&(list.len() as u64).to_le_bytes());
            for w in list.iter() {
                digest.update(&w.to_le_bytes());
            }
        }
        let scan = Backward {
            file: tessera_core::files::open(path).map_err(io)?,
            range: (gates_at, size),
            num_gates: h.num_gates,
            output_start,
            digest,
        };
        let Liveness {
            read_inputs,
            digest,
            and_gates,
        } = scan.run(&mut records).map_err(|e| match e {
            Scan::Read(e) => io(e),
            Scan::Write(e) => io_error(RECORDS_FILE)(e),
            Scan::Bad(e) => in_file(e, &name),
        })?;
        records
            .seek(SeekFrom::Start(0))
            .map_err(io_error(RECORDS_FILE))?;
        let opened = Opened {
            path: name,
            digest,
            num_gates: h.num_gates,
            and_gates,
            num_wires: h.num_wires,
            inputs: h.inputs,
            outputs: h.outputs,
            format: h.format,
            origin: Origin::Text {
                header_line: h.line,
                gates_after: (after_line, gates_at),
            },
            records,
        };
        Ok(Streamed::new(opened, window, |w| read_inputs.contains(w)))
    }

    /// [`Streamed::open`] of a compiled file ([`compiled`]) called `name`, `file` at its start.
    pub(crate) fn open_compiled(
        mut file: File,
        name: String,
        window: usize,
    ) -> Result<Streamed, Error> {
        let io = io_error(&name);
        let size = file.metadata().map_err(io)?.len();
        file.seek(SeekFrom::Start(compiled::MAGIC.len() as u64))
            .map_err(io)?;
        let mut head_bytes = BufReader::new(&mut file);
        let (head, raw) =
            compiled::Head::read(&mut head_bytes, size).map_err(|e| in_file(e, &name))?;
        let records_at = (compiled::MAGIC.len() + raw.len()) as u64;
        let mut expected = [0; 32];
        file.seek(SeekFrom::Start(size - compiled::CHECKSUM_BYTES))
            .and_then(|_| file.read_exact(&mut expected))
            .and_then(|()| file.seek(SeekFrom::Start(records_at)))
            .map_err(io)?;
        let mut checksum = blake3::Hasher::new_derive_key(compiled::CHECKSUM_CONTEXT);
        checksum.update(&raw);
        let read_inputs = head.read_inputs;
        let opened = Opened {
            path: name,
            digest: head.digest,
            num_gates: head.num_gates,
            and_gates: head.and_gates,
            num_wires: head.num_wires,
            inputs: head.inputs,
            outputs: head.outputs,
            format: head.format,
            origin: Origin::Compiled {
                records_at,
                checksum: Box::new(checksum),
                expected,
            },
            records: file,
        };
        let mut streamed = Streamed::new(opened, window, |w| compiled::bit(&read_inputs, w));
        // No records read yet: this compares the checksum only for a file of no gates, which
        // has no last record to compare it at.
        streamed
            .check_records(&[], 0)
            .map_err(|e| in_file(e, &streamed.path))?;
        Ok(streamed)
    }

    /// The reader of what `opened` found, in windows of `window` gates; `reads_input(w)`:
    /// some gate reads input wire `w`.
    fn new(opened: Opened, window: usize, reads_input: impl Fn(Wire) -> bool) -> Streamed {
        let num_inputs: u32 = opened.inputs.iter().sum();
        let mut live = HashMap::default();
        let mut free = Vec::new();
        for w in 0..num_inputs {
            if reads_input(w) {
                live.insert(w, w);
            } else {
                free.push(w);
            }
        }
        let mut written = WireRanges::default();
        written.insert_range(0, num_inputs);
        Streamed {
            path: opened.path,
            digest: opened.digest,
            num_gates: opened.num_gates,
            and_gates: opened.and_gates,
            num_wires: opened.num_wires,
            output_start: opened.num_wires - opened.outputs.iter().sum::<u32>(),
            inputs: opened.inputs,
            outputs: opened.outputs,
            format: opened.format,
            origin: opened.origin,
            window,
            records: BufReader::new(opened.records),
            record_bytes: Vec::new(),
            gates_read: 0,
            windows: 0,
            live,
            free,
            positions: num_inputs,
            written,
            local: LocalNames::default(),
            writes: Vec::new(),
            reads: Vec::new(),
            keeps: Vec::new(),
            renumber: Vec::new(),
            circuit: Circuit {
                num_wires: 0,
                inputs: vec![0],
                outputs: vec![0],
                gates: Vec::new(),
            },
        }
    }

    /// Width of each input value.
    pub fn inputs(&self) -> &[u32] {
        &self.inputs
    }

    /// Width of each output value.
    pub fn outputs(&self) -> &[u32] {
        &self.outputs
    }

    /// BLAKE3 (keyed by [`DIGEST_CONTEXT`]) of the header's numbers and the bytes of the gate
    /// lines, read from the end in chunks of 1 MiB: two parties that stream one file agree on
    /// it. (BLAKE3 rather than SHA-256: in perf profiles of `ag run` of a 382 MB file on a 2-core
    /// Xeon, the file's SHA-256 took about 6 % of a party's samples, BLAKE3 1.2–1.6 %.)
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    /// Gates per window.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Gates in the file.
    pub fn num_gates(&self) -> u32 {
        self.num_gates
    }

    /// AND gates in the file, counted by the backward pass (exact for a file whose every gate
    /// line is valid; a file with a line that is not fails in [`Streamed::next_window`]).
    pub fn and_gates(&self) -> u64 {
        self.and_gates
    }

    /// The file's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The next window, or `None` after the last one.
    pub fn next_window(&mut self) -> Result<Option<Window<'_>>, Error> {
        if self.gates_read == self.num_gates {
            return Ok(None);
        }
        self.read_window()
            .map_err(|e| in_file(e, &self.path))
            .map(|()| self.windows += 1)?;
        Ok(Some(Window {
            circuit: &self.circuit,
            inputs: &self.reads,
            outputs: &self.keeps,
            index: self.windows - 1,
            positions: self.positions as usize,
        }))
    }

    /// Runs every window: a thread of its own reads each window and makes of its circuit what
    /// the caller runs (`prepare`: a compiled program, say), up to [`READ_AHEAD`] windows
    /// ahead of `run`, which gets them in order on the calling thread; so reading the file
    /// overlaps the run where a core is free. Stops at the first error of either (at `run`'s,
    /// the reader stops at its next window). Returns the positions of the circuit's outputs.
    pub fn run_ahead<T: Send, E: From<Error> + Send>(
        &mut self,
        prepare: impl Fn(&Circuit) -> Result<T, E> + Send,
        mut run: impl FnMut(Prepared<T>) -> Result<(), E>,
    ) -> Result<Vec<u32>, E> {
        std::thread::scope(|scope| {
            let (ready, prepared) = std::sync::mpsc::sync_channel(READ_AHEAD);
            let reader = scope.spawn(move || -> Result<Vec<u32>, E> {
                while let Some(w) = self.next_window()? {
                    let next = Prepared {
                        made: prepare(w.circuit)?,
                        inputs: w.inputs.to_vec(),
                        outputs: w.outputs.to_vec(),
                        positions: w.positions,
                    };
                    if ready.send(next).is_err() {
                        // The run stopped; its error is the one returned.
                        return Ok(Vec::new());
                    }
                }
                Ok(self.output_positions()?)
            });
            prepared.into_iter().try_for_each(&mut run)?;
            reader
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// The positions of the circuit's output wires, in order, once every window is read.
    pub fn output_positions(&self) -> Result<Vec<u32>, Error> {
        if self.gates_read != self.num_gates {
            return Err(Error::Input(format!(
                "the outputs are known after the last window: {} of {} gates read",
                self.gates_read, self.num_gates
            )));
        }
        (self.output_start..self.num_wires)
            .map(|w| {
                self.live.get(&w).copied().ok_or_else(|| {
                    let message = format!("output wire {w} is never written");
                    let line = match self.origin {
                        Origin::Text { header_line, .. } => header_line,
                        Origin::Compiled { .. } => 0,
                    };
                    in_file(err(line, message), &self.path)
                })
            })
            .collect()
    }

    /// Writes the file as a compiled circuit file ([`compiled`]) to `out` (errors writing it
    /// name [`super::WRITTEN_FILE`]). Every window is read first, so a file with a fault
    /// anywhere is refused before anything is written. The file must be Bristol text, not yet
    /// read.
    pub fn compile(mut self, out: &mut impl Write) -> Result<(), Error> {
        if !matches!(self.origin, Origin::Text { .. }) || self.gates_read != 0 {
            let message = "only a Bristol text file not yet read compiles".to_string();
            return Err(Error::Input(message));
        }
        let num_inputs: u32 = self.inputs.iter().sum();
        let mut read_inputs = vec![0u8; num_inputs.div_ceil(8) as usize];
        for w in (0..num_inputs).filter(|w| self.live.contains_key(w)) {
            read_inputs[w as usize / 8] |= 1 << (w % 8);
        }
        let head = compiled::Head {
            format: self.format,
            num_gates: self.num_gates,
            num_wires: self.num_wires,
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
            and_gates: self.and_gates,
            digest: self.digest,
            read_inputs,
        }
        .encode();
        while self.next_window()?.is_some() {}
        self.output_positions()?;
        let out_io = io_error(super::WRITTEN_FILE);
        let mut checksum = blake3::Hasher::new_derive_key(compiled::CHECKSUM_CONTEXT);
        checksum.update(&head);
        out.write_all(compiled::MAGIC)
            .and_then(|()| out.write_all(&head))
            .map_err(out_io)?;
        self.records
            .seek(SeekFrom::Start(0))
            .map_err(io_error(RECORDS_FILE))?;
        let mut chunk = Vec::new();
        for first in (0..self.num_gates).step_by(RECORD_GATES as usize) {
            self.read_records(
                RECORD_GATES.min(u64::from(self.num_gates - first)),
                &mut chunk,
            )?;
            checksum.update(&chunk);
            out.write_all(&chunk).map_err(out_io)?;
        }
        out.write_all(checksum.finalize().as_bytes())
            .and_then(|()| out.flush())
            .map_err(out_io)
    }

    /// The file's circuit whole, gate by gate from its records, checked (what
    /// [`super::read_file`] makes of a compiled file).
    pub(crate) fn into_circuit(mut self) -> Result<Circuit, Error> {
        let mut gates = Vec::with_capacity(self.num_gates as usize);
        let mut bytes = Vec::new();
        while self.gates_read < self.num_gates {
            let first = self.gates_read;
            let end = self
                .num_gates
                .min(first.saturating_add(RECORD_GATES as u32));
            self.read_records(u64::from(end - first), &mut bytes)?;
            for (index, record) in (first..end).zip(bytes.as_chunks().0) {
                let (gate, _) = decode(record).ok_or_else(|| self.unreadable(index))?;
                gates.push(gate);
            }
            self.check_records(&bytes, end)?;
            self.gates_read = end;
        }
        let circuit = Circuit {
            num_wires: self.num_wires,
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
            gates,
        };
        circuit.validate().map_err(|(gate, message)| match gate {
            Some(index) => self.fault(index as u32, message),
            None => err(0, message),
        })?;
        Ok(circuit)
    }

    /// Evaluates the file in plaintext on one bit vector per input value, window by window;
    /// returns one bit vector per output value.
    pub fn evaluate(mut self, inputs: &[Vec<bool>]) -> Result<Vec<Vec<bool>>, Error> {
        check_values(&self.inputs, inputs)?;
        let mut store: Vec<bool> = inputs.concat();
        while let Some(w) = self.next_window()? {
            let bits: Vec<bool> = w.inputs.iter().map(|&p| store[p as usize]).collect();
            let out = crate::eval::evaluate(w.circuit, &[bits])?;
            store.resize(w.positions, false);
            for (&p, &b) in w.outputs.iter().zip(&out[0]) {
                store[p as usize] = b;
            }
        }
        let positions = self.output_positions()?;
        let bits: Vec<bool> = positions.iter().map(|&p| store[p as usize]).collect();
        Ok(split_values(&self.outputs, &bits))
    }

    /// Reads the next window's gates into the window's circuit, positions and store size.
    fn read_window(&mut self) -> Result<(), Error> {
        self.writes.clear();
        self.reads.clear();
        self.keeps.clear();
        self.circuit.gates.clear();
        let first = self.gates_read;
        let end = self.num_gates.min(first.saturating_add(self.window as u32));
        self.local.clear((end - first) as usize);
        let mut records = std::mem::take(&mut self.record_bytes);
        let placed = self
            .read_records(u64::from(end - first), &mut records)
            .and_then(|()| {
                (first..end)
                    .zip(records.as_chunks().0)
                    .try_for_each(|(index, record)| self.add_gate(index, record))
            });
        let checked = placed.and_then(|()| self.check_records(&records, end));
        self.record_bytes = records;
        checked?;
        self.gates_read = end;
        self.place_window();
        Ok(())
    }

    /// Reads the next `gates` records into `into`, resized to hold them; an I/O error names the
    /// file they are in (the temporary one for a text, else the compiled file).
    fn read_records(&mut self, gates: u64, into: &mut Vec<u8>) -> Result<(), Error> {
        into.resize(gates as usize * RECORD_BYTES, 0);
        let path = match self.origin {
            Origin::Text { .. } => RECORDS_FILE,
            Origin::Compiled { .. } => &self.path,
        };
        self.records.read_exact(into).map_err(io_error(path))
    }

    /// Adds a compiled file's `records` ending at gate `end` to its checksum and, at the last
    /// gate, compares it with the one the file ends with.
    fn check_records(&mut self, records: &[u8], end: u32) -> Result<(), Error> {
        let Origin::Compiled {
            checksum, expected, ..
        } = &mut self.origin
        else {
            return Ok(());
        };
        checksum.update(records);
        if end == self.num_gates && checksum.finalize().as_bytes() != expected {
            let message = "the header and gate records do not match the checksum the file ends \
                           with: the compiled file is damaged or was edited";
            return Err(err(0, message));
        }
        Ok(())
    }

    /// Adds gate `index` of the file, read from its record, to the window.
    fn add_gate(&mut self, index: u32, record: &[u8; RECORD_BYTES]) -> Result<(), Error> {
        let Some((gate, mark)) = decode(record) else {
            return Err(self.unreadable(index));
        };
        let output_start = self.output_start;
        let mut local = gate;
        for &k in gate.inputs() {
            let last = mark & (LAST_A << k) != 0 && gate.input(k) < output_start;
            let w = self.read(gate.input(k), last, index)?;
            if k == 0 {
                local.a = w;
            } else {
                local.b = w;
            }
        }
        let o = gate.out;
        let wires = self.num_wires;
        let fault = if gate.kind == GateKind::Eq && gate.a > 1 {
            Some(GateFault::EqConstant(gate.a))
        } else if o >= wires {
            Some(GateFault::WritesBeyond { wire: o, wires })
        } else if !self.written.insert(o) {
            Some(GateFault::WritesAgain(o))
        } else {
            None
        };
        if let Some(f) = fault {
            return Err(self.fault(index, f.message()));
        }
        let kept = mark & DEAD == 0 || o >= output_start;
        let name = self.writes.len() as u32 | WRITTEN;
        self.writes.push((o, kept));
        if kept {
            self.local.insert(o, name, true);
        }
        local.out = name;
        self.circuit.gates.push(local);
        Ok(())
    }

    /// The window-local name of wire `w` read by gate `index`, read for the last time if
    /// `last`.
    fn read(&mut self, w: Wire, last: bool, index: u32) -> Result<u32, Error> {
        let wires = self.num_wires;
        if w >= wires {
            return Err(self.fault(index, GateFault::ReadsBeyond { wire: w, wires }.message()));
        }
        let name = match self.local.get(w) {
            Some(name) => name,
            None => {
                let Some(&pos) = self.live.get(&w) else {
                    return Err(self.fault(index, GateFault::ReadsUnwritten(w).message()));
                };
                let name = self.reads.len() as u32;
                self.reads.push(pos);
                self.local.insert(w, name, false);
                name
            }
        };
        if last {
            self.local.remove(w);
            if name & WRITTEN != 0 {
                self.writes[(name & !WRITTEN) as usize].1 = false;
            } else if let Some(pos) = self.live.remove(&w) {
                self.free.push(pos);
            }
        }
        Ok(name)
    }

    /// The line of gate `index` (counting the file's lines again) and its text.
    fn gate_text(
        &self,
        index: u32,
        (after_line, gates_at): (usize, u64),
    ) -> Result<(usize, Vec<u8>), Error> {
        let io = io_error(&self.path);
        let mut file = tessera_core::files::open(Path::new(&self.path)).map_err(io)?;
        file.seek(SeekFrom::Start(gates_at)).map_err(io)?;
        let mut lines = Lines::at(BufReader::new(file), after_line, gates_at, u64::MAX);
        for _ in 0..index {
            lines.next_raw()?;
        }
        let changed = || {
            let message = format!("gate {index} is gone: the file changed while it was read");
            err(0, message)
        };
        let (line, text) = lines.next_raw()?.ok_or_else(changed)?;
        Ok((line, text.to_vec()))
    }

    /// `message`, a fault of gate `index`, at its line (in a compiled file, at its record).
    fn fault(&self, index: u32, message: String) -> Error {
        match self.origin {
            Origin::Text { gates_after, .. } => match self.gate_text(index, gates_after) {
                Ok((line, _)) => err(line, message),
                Err(e) => e,
            },
            Origin::Compiled { records_at, .. } => {
                let at = records_at + u64::from(index) * RECORD_BYTES as u64;
                err(
                    0,
                    format!("gate {index} (the record at byte {at}): {message}"),
                )
            }
        }
    }

    /// The fault of gate `index`, whose line the backward pass could not read (in a compiled
    /// file: whose record is no gate's).
    fn unreadable(&self, index: u32) -> Error {
        let Origin::Text { gates_after, .. } = self.origin else {
            return self.fault(index, "not a gate's record".to_string());
        };
        match self.gate_text(index, gates_after) {
            Ok((line, text)) => gate_line(&text, line).err().unwrap_or_else(|| {
                err(line, "the line changed while the file was read".to_string())
            }),
            Err(e) => e,
        }
    }

    /// Numbers the window's wires (inputs, wires read only inside, wires kept) and gives each
    /// kept wire a position.
    fn place_window(&mut self) {
        let inputs = self.reads.len() as u32;
        let kept = self.writes.iter().filter(|&&(_, k)| k).count() as u32;
        let total = inputs + self.writes.len() as u32;
        let (mut inner, mut outer) = (inputs, total - kept);
        self.renumber.clear();
        for &(wire, k) in &self.writes {
            let id = if k {
                let pos = self.free.pop().unwrap_or_else(|| {
                    self.positions += 1;
                    self.positions - 1
                });
                self.live.insert(wire, pos);
                self.keeps.push(pos);
                outer += 1;
                outer - 1
            } else {
                inner += 1;
                inner - 1
            };
            self.renumber.push(id);
        }
        let renumber = |w: u32| {
            if w & WRITTEN != 0 {
                self.renumber[(w & !WRITTEN) as usize]
            } else {
                w
            }
        };
        for g in &mut self.circuit.gates {
            match g.kind {
                GateKind::Xor | GateKind::And => (g.a, g.b) = (renumber(g.a), renumber(g.b)),
                GateKind::Inv | GateKind::Eqw => g.a = renumber(g.a),
                GateKind::Eq => {}
            }
            g.out = renumber(g.out);
        }
        self.circuit.num_wires = total;
        self.circuit.inputs = vec![inputs];
        self.circuit.outputs = vec![kept];
    }
}

/// A set of wires as disjoint ranges: one range for wires written in order. The range last
/// written to is kept out of the map with the start of the next range, so writing the wire
/// after it (the common case) touches no tree.
#[derive(Default)]
struct WireRanges {
    /// Start to end (exclusive), no two ranges touching.
    ranges: BTreeMap<u32, u64>,
    /// The range last written to (start, end), not in `ranges`, and where the next range in
    /// `ranges` starts (beyond `u32::MAX` if none).
    hot: Option<(u32, u64, u64)>,
}

impl WireRanges {
    fn insert_range(&mut self, start: u32, end: u32) {
        if start < end {
            self.cool();
            self.ranges.insert(start, u64::from(end));
        }
    }

    /// Puts the hot range back into the map.
    fn cool(&mut self) {
        if let Some((s, e, _)) = self.hot.take() {
            self.ranges.insert(s, e);
        }
    }

    /// Adds `w`; false if it was in.
    fn insert(&mut self, w: Wire) -> bool {
        let w64 = u64::from(w);
        if let Some((s, e, next)) = &mut self.hot {
            if u64::from(*s) <= w64 && w64 < *e {
                return false;
            }
            // Right after the hot range and not touching the next: in no range yet.
            if w64 == *e && w64 + 1 < *next {
                *e += 1;
                return true;
            }
        }
        self.cool();
        let before = self.ranges.range(..=w).next_back().map(|(&s, &e)| (s, e));
        if let Some((_, e)) = before
            && w64 < e
        {
            return false;
        }
        let after = u32::try_from(w64 + 1)
            .ok()
            .and_then(|n| self.ranges.remove(&n));
        let end = after.unwrap_or(w64 + 1);
        let start = match before {
            Some((s, e)) if e == w64 => s,
            _ => w,
        };
        self.ranges.remove(&start);
        let next = self
            .ranges
            .range((std::ops::Bound::Excluded(start), std::ops::Bound::Unbounded))
            .next()
            .map_or(u64::MAX, |(&k, _)| u64::from(k));
        self.hot = Some((start, end, next));
        true
    }
}

/// What stops the backward pass.
enum Scan {
    /// Reading the circuit file failed.
    Read(std::io::Error),
    /// Writing the temporary records file failed.
    Write(std::io::Error),
    /// The file, at line 0: a gate count other than the header's, or an over-long line.
    Bad(Error),
}

/// What the backward pass finds besides the marks.
struct Liveness {
    /// The input wires some gate reads (and others still read after the first gate, which
    /// only a faulty file has).
    read_inputs: WireSet,
    /// BLAKE3 of the header's numbers and the gate lines.
    digest: [u8; 32],
    /// AND gates among the lines it could read.
    and_gates: u64,
}

/// The backward pass over the gate lines `range` (bytes) of a file.
struct Backward {
    file: File,
    range: (u64, u64),
    num_gates: u32,
    output_start: Wire,
    /// Takes every byte read.
    digest: blake3::Hasher,
}

impl Backward {
    /// Writes every gate's record to `records` (gate g at byte g · [`RECORD_BYTES`]) and
    /// returns the input wires that some gate reads, the digest and the AND gates.
    fn run(mut self, records: &mut File) -> Result<Liveness, Scan> {
        let (lo, mut pos) = self.range;
        // buf[..end] is the file from `pos` on, less the lines already taken; the next chunk
        // is read into `chunk`, the two then swapped.
        let (mut buf, mut chunk): (Vec<u8>, Vec<u8>) = (Vec::new(), Vec::new());
        let mut end = 0;
        let mut later = WireSet::default();
        let mut batch = RecordBatch::new(u64::from(self.num_gates));
        let (mut seen, mut and_gates) = (0u64, 0u64);
        loop {
            // The last line of buf[..end], reading further back as needed.
            let line = loop {
                if let Some(i) = memchr::memrchr(b'\n', &buf[..end]) {
                    let line = i + 1..end;
                    end = i;
                    break Some(line);
                }
                if pos == lo {
                    let line = 0..end;
                    end = 0;
                    break (!line.is_empty()).then_some(line);
                }
                if end > MAX_LINE_BYTES + 1 {
                    return Err(Scan::Bad(err(
                        0,
                        format!(
                            "the line ending at byte {} is longer than the limit of {MAX_LINE_BYTES} bytes",
                            pos + end as u64
                        ),
                    )));
                }
                let from = pos.saturating_sub(CHUNK_BYTES as u64).max(lo);
                let n = (pos - from) as usize;
                chunk.resize(n, 0);
                self.file
                    .seek(SeekFrom::Start(from))
                    .and_then(|_| self.file.read_exact(&mut chunk))
                    .map_err(Scan::Read)?;
                self.digest.update(&chunk);
                chunk.extend_from_slice(&buf[..end]);
                std::mem::swap(&mut buf, &mut chunk);
                end += n;
                pos = from;
            };
            let Some(line) = line else { break };
            let text = &buf[line];
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if seen == u64::from(self.num_gates) {
                return Err(Scan::Bad(more_gates(0, self.num_gates)));
            }
            seen += 1;
            let gate = gate_line(text, 0).ok();
            and_gates += u64::from(gate.is_some_and(|g| g.kind == GateKind::And));
            let record = gate.map_or([UNREADABLE; RECORD_BYTES], |g| {
                encode(&g, self.mark(&g, &mut later))
            });
            batch.push(&record, records).map_err(Scan::Write)?;
        }
        if seen != u64::from(self.num_gates) {
            return Err(Scan::Bad(fewer_gates(self.num_gates, seen)));
        }
        batch.flush(records).map_err(Scan::Write)?;
        Ok(Liveness {
            read_inputs: later,
            digest: self.digest.finalize().into(),
            and_gates,
        })
    }

    /// The marks of `g`, met going backward with `later` the wires read after it.
    fn mark(&self, g: &Gate, later: &mut WireSet) -> u8 {
        let mut mark = 0;
        if !later.remove(g.out) && g.out < self.output_start {
            mark |= DEAD;
        }
        for &k in g.inputs().iter().rev() {
            if later.insert(g.input(k)) {
                mark |= LAST_A << k;
            }
        }
        mark
    }
}

/// Records of up to [`RECORD_GATES`] gates, collected from the last gate down and written
/// where they belong in the records file.
struct RecordBatch {
    /// The gate after the lowest one collected.
    next: u64,
    /// The first gate of the batch.
    base: u64,
    bytes: Vec<u8>,
}

impl RecordBatch {
    fn new(num_gates: u64) -> Self {
        let base = num_gates.saturating_sub(1) / RECORD_GATES * RECORD_GATES;
        RecordBatch {
            next: num_gates,
            base,
            bytes: vec![0; (num_gates - base) as usize * RECORD_BYTES],
        }
    }

    /// The previous gate's record.
    fn push(&mut self, record: &[u8; RECORD_BYTES], records: &mut File) -> std::io::Result<()> {
        let g = self.next - 1;
        if g < self.base {
            self.flush(records)?;
            self.base -= RECORD_GATES;
            self.bytes.resize(RECORD_GATES as usize * RECORD_BYTES, 0);
        }
        let at = (g - self.base) as usize * RECORD_BYTES;
        self.bytes[at..at + RECORD_BYTES].copy_from_slice(record);
        self.next = g;
        Ok(())
    }

    fn flush(&self, records: &mut File) -> std::io::Result<()> {
        records.seek(SeekFrom::Start(self.base * RECORD_BYTES as u64))?;
        records.write_all(&self.bytes)
    }
}

/// No name, in [`LocalNames`]' array.
const UNNAMED: u32 = u32::MAX;

/// The window-local names of the wires a window has met so far. A file's gates mostly write
/// wires in order, so the wires a window writes mostly fall in a range as long as the window,
/// from the first wire it writes on: those are named in an array, the others (wires from
/// earlier windows, writes out of order) in a map.
#[derive(Default)]
struct LocalNames {
    /// The first wire of the array's range, once the window writes one.
    base: Option<Wire>,
    /// Names of wires `base..base + len`, [`UNNAMED`] where none.
    near: Vec<u32>,
    far: HashMap<Wire, u32>,
}

impl LocalNames {
    /// Forgets every name, for a window of `window` gates (so the array is as long as the
    /// window's gates, not the largest window allowed).
    fn clear(&mut self, window: usize) {
        self.base = None;
        self.near.clear();
        self.near.resize(window, UNNAMED);
        self.far.clear();
    }

    /// The slot of `w` in the array, if it falls in its range.
    fn near_slot(&self, w: Wire) -> Option<usize> {
        let i = w.checked_sub(self.base?)? as usize;
        (i < self.near.len()).then_some(i)
    }

    /// Names `w`, which the window writes if `written` (the first such wire sets the array's
    /// range) or reads from an earlier window.
    fn insert(&mut self, w: Wire, name: u32, written: bool) {
        if written && self.base.is_none() {
            self.base = Some(w);
        }
        match self.near_slot(w) {
            Some(i) => self.near[i] = name,
            None => {
                self.far.insert(w, name);
            }
        }
    }

    fn get(&self, w: Wire) -> Option<u32> {
        match self.near_slot(w) {
            Some(i) => Some(self.near[i]).filter(|&n| n != UNNAMED),
            None => self.far.get(&w).copied(),
        }
    }

    fn remove(&mut self, w: Wire) {
        match self.near_slot(w) {
            Some(i) => self.near[i] = UNNAMED,
            None => {
                self.far.remove(&w);
            }
        }
    }
}

/// Wires per page of a [`WireSet`].
const PAGE_WIRES: u32 = 1 << 12;

/// A set of wires as bits, in pages of [`PAGE_WIRES`] wires allocated as wires in them join
/// and freed when their last wire leaves: the set the backward pass keeps (the wires read
/// later) is mostly wires written a little before the gate at hand, so the page last used is
/// kept at hand and most steps touch no map. Memory: at most a page per wire in the set, and
/// never more than a bit per wire of the file.
#[derive(Default)]
struct WireSet {
    /// Page number to its index in `pages`.
    index: HashMap<u32, usize>,
    /// (wires in the page, its bits).
    pages: Vec<(u32, Box<[u64; (PAGE_WIRES / 64) as usize]>)>,
    /// Indices of freed pages in `pages`.
    spare: Vec<usize>,
    /// The page last used: (page number, index).
    hot: Option<(u32, usize)>,
}

impl WireSet {
    /// The index of `w`'s page, if it has one (kept at hand).
    fn page_of(&mut self, w: Wire) -> Option<usize> {
        let number = w / PAGE_WIRES;
        match self.hot {
            Some((n, i)) if n == number => Some(i),
            _ => {
                let i = *self.index.get(&number)?;
                self.hot = Some((number, i));
                Some(i)
            }
        }
    }

    /// The index of `w`'s page, allocated if it has none (kept at hand).
    fn page_for(&mut self, w: Wire) -> usize {
        if let Some(i) = self.page_of(w) {
            return i;
        }
        let i = self.spare.pop().unwrap_or_else(|| {
            self.pages
                .push((0, Box::new([0; (PAGE_WIRES / 64) as usize])));
            self.pages.len() - 1
        });
        self.index.insert(w / PAGE_WIRES, i);
        self.hot = Some((w / PAGE_WIRES, i));
        i
    }

    /// Adds `w`; false if it was in.
    fn insert(&mut self, w: Wire) -> bool {
        let i = self.page_for(w);
        let (count, bits) = &mut self.pages[i];
        let (word, bit) = (((w % PAGE_WIRES) / 64) as usize, 1u64 << (w % 64));
        let fresh = bits[word] & bit == 0;
        bits[word] |= bit;
        *count += u32::from(fresh);
        fresh
    }

    /// Removes `w`; false if it was not in.
    fn remove(&mut self, w: Wire) -> bool {
        let Some(i) = self.page_of(w) else {
            return false;
        };
        let (count, bits) = &mut self.pages[i];
        let (word, bit) = (((w % PAGE_WIRES) / 64) as usize, 1u64 << (w % 64));
        if bits[word] & bit == 0 {
            return false;
        }
        bits[word] &= !bit;
        *count -= 1;
        if *count == 0 {
            self.index.remove(&(w / PAGE_WIRES));
            self.spare.push(i);
            self.hot = None;
        }
        true
    }

    /// Whether `w` is in.
    fn contains(&self, w: Wire) -> bool {
        self.index.get(&(w / PAGE_WIRES)).is_some_and(|&i| {
            self.pages[i].1[((w % PAGE_WIRES) / 64) as usize] & (1u64 << (w % 64)) != 0
        })
    }
}

/// What the temporary file of gate records is called in errors.
const RECORDS_FILE: &str = "the temporary file of gate records";

/// The record of `g` with liveness marks `mark`.
fn encode(g: &Gate, mark: u8) -> [u8; RECORD_BYTES] {
    let kind = match g.kind {
        GateKind::Xor => 0,
        GateKind::And => 1,
        GateKind::Inv => 2,
        GateKind::Eqw => 3,
        GateKind::Eq => 4,
    };
    let mut r = [0u8; RECORD_BYTES];
    r[0] = kind | mark << 4;
    for (i, w) in [g.a, g.b, g.out].into_iter().enumerate() {
        r[1 + 4 * i..5 + 4 * i].copy_from_slice(&w.to_le_bytes());
    }
    r
}

/// The gate and marks of a record; `None` for an unreadable line.
#[inline]
fn decode(r: &[u8; RECORD_BYTES]) -> Option<(Gate, u8)> {
    let kind = match r[0] & 0xf {
        0 => GateKind::Xor,
        1 => GateKind::And,
        2 => GateKind::Inv,
        3 => GateKind::Eqw,
        4 => GateKind::Eq,
        _ => return None,
    };
    let wire =
        |i: usize| u32::from_le_bytes([r[1 + 4 * i], r[2 + 4 * i], r[3 + 4 * i], r[4 + 4 * i]]);
    let gate = Gate {
        kind,
        a: wire(0),
        b: wire(1),
        out: wire(2),
    };
    Some((gate, r[0] >> 4))
}

#[cfg(test)]
mod tests {
    use super::{PAGE_WIRES, WireRanges, WireSet};

    proptest::proptest! {
        /// The paged wire set answers as a hash set does, over wires that share pages and
        /// wires far apart, and frees a page its last wire leaves (pages in use never exceed
        /// the wires in the set).
        #[test]
        fn wire_set_is_a_set(ops in proptest::collection::vec((proptest::prelude::any::<bool>(), 0u32..3, 0u32..200), 1..400)) {
            let mut set = WireSet::default();
            let mut want = std::collections::HashSet::new();
            for (add, page, low) in ops {
                let w = [0, 7, u32::MAX / PAGE_WIRES][page as usize] * PAGE_WIRES + low;
                if add {
                    proptest::prop_assert_eq!(set.insert(w), want.insert(w));
                } else {
                    proptest::prop_assert_eq!(set.remove(w), want.remove(&w));
                }
                proptest::prop_assert_eq!(set.contains(w), want.contains(&w));
                proptest::prop_assert!(set.index.len() <= want.len());
            }
        }
    }

    #[test]
    fn wire_ranges_merge_and_refuse_repeats() {
        let mut set = WireRanges::default();
        set.insert_range(0, 4);
        for w in [4, 6, 5, 9, 8, 7, u32::MAX] {
            assert!(set.insert(w), "{w}");
        }
        for w in [0, 3, 4, 7, 9, u32::MAX] {
            assert!(!set.insert(w), "{w}");
        }
        set.cool();
        assert_eq!(set.ranges.len(), 2);
        assert!(set.insert(10));
        set.cool();
        assert_eq!(set.ranges.iter().next(), Some((&0, &11)));
        // In order: one range; out of order: merged where they meet.
        let mut set = WireRanges::default();
        for w in (100..200).chain(50..99).chain([99, 20]) {
            assert!(set.insert(w), "{w}");
        }
        for w in (20..21).chain(50..200) {
            assert!(!set.insert(w), "{w}");
        }
        for w in [19, 21, 49, 200] {
            assert!(set.insert(w), "{w}");
        }
        set.cool();
        let ranges: Vec<(u32, u64)> = set.ranges.iter().map(|(&s, &e)| (s, e)).collect();
        assert_eq!(ranges, [(19, 22), (49, 201)]);
    }
}
