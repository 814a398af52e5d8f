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
//! file that writes its wires in order). The liveness marks (four bits a gate) go to a
//! temporary file.
//!
//! The forward pass checks everything [`super::parse_reader`] checks, with the same messages
//! and line numbers, but only as it reaches each line: an error may come after some windows
//! are out. The backward pass reads the lines without judging them (a line it cannot read
//! has no effect on liveness); it refuses only a gate count that differs from the header's
//! and a line longer than [`MAX_LINE_BYTES`].

use super::{
    Format, Lines, MAX_LINE_BYTES, err, fewer_gates, gate_line, header, in_file, more_gates,
};
use crate::circuit::GateFault;
use crate::eval::{check_values, split_values};
use crate::{Circuit, Error, Gate, GateKind, Wire};
use foldhash::fast::RandomState;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Maps keyed by wires, hashed fast (the keys are the file's: the hasher is seeded at random).
type HashMap<K, V> = std::collections::HashMap<K, V, RandomState>;
/// Sets of wires, hashed as [`HashMap`].
type HashSet<K> = std::collections::HashSet<K, RandomState>;

/// Gates per window by default: 2^16, as many as [`crate::layered`] levels at once.
pub const DEFAULT_WINDOW: usize = 1 << 16;

/// The most gates per window (window-local wire names keep a tag bit).
pub const MAX_WINDOW: usize = 1 << 24;

/// Liveness mark bits of a gate: input `a` is read for the last time here.
const LAST_A: u8 = 1;
/// Input `b` is read for the last time here.
const LAST_B: u8 = 2;
/// The output is never read and is not an output of the circuit.
const DEAD: u8 = 4;

/// Bytes read at once by the backward pass.
const CHUNK_BYTES: usize = 1 << 20;
/// Gates whose marks the backward pass collects before writing them.
const MARK_GATES: u64 = 1 << 21;

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
    header_line: usize,
    window: usize,
    lines: Lines<BufReader<File>>,
    marks: BufReader<File>,
    /// The second gate's mark of the last byte read.
    mark_pending: Option<u8>,
    gates_read: u32,
    windows: u64,
    /// Live wires written before this window (or inputs), with their positions.
    live: HashMap<Wire, u32>,
    free: Vec<u32>,
    positions: u32,
    written: WireRanges,
    // One window, kept across windows.
    local: HashMap<Wire, u32>,
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

impl Streamed {
    /// Opens the circuit file at `path` to be read in windows of `window` gates (1 to
    /// [`MAX_WINDOW`]), running the liveness pass. Input wire `i` of the circuit is at position
    /// `i`.
    pub fn open(path: &Path, window: usize) -> Result<Streamed, Error> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| Error::Io {
            path: name.clone(),
            message: e.to_string(),
        };
        if !(1..=MAX_WINDOW).contains(&window) {
            return Err(Error::Input(format!(
                "a window holds 1 to {MAX_WINDOW} gates, not {window}"
            )));
        }
        let file = tessera_core::files::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let mut lines = Lines::at(BufReader::new(file), 0, 0, u64::MAX);
        let h = header(&mut lines).map_err(|e| in_file(e, &name))?;
        let (after_line, gates_at) = h.gates_after;
        let output_start = h.num_wires - h.outputs.iter().sum::<u32>();
        let num_inputs: u32 = h.inputs.iter().sum();
        let mut marks = tempfile::tempfile().map_err(|e| Error::Io {
            path: "a temporary file for liveness marks".into(),
            message: e.to_string(),
        })?;
        let mut digest = Sha256::new();
        digest.update(b"tessera/bristol-stream");
        for n in [h.num_gates, h.num_wires] {
            digest.update(n.to_le_bytes());
        }
        for list in [&h.inputs, &h.outputs] {
            digest.update((list.len() as u64).to_le_bytes());
            list.iter().for_each(|w| digest.update(w.to_le_bytes()));
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
        } = scan.run(&mut marks).map_err(|e| match e {
            Scan::Io(e) => io(e),
            Scan::Bad(e) => in_file(e, &name),
        })?;
        marks.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut file = lines.reader.into_inner();
        file.seek(SeekFrom::Start(gates_at)).map_err(io)?;
        let mut live = HashMap::with_capacity_and_hasher(read_inputs.len(), RandomState::default());
        let mut free = Vec::new();
        for w in 0..num_inputs {
            if read_inputs.contains(&w) {
                live.insert(w, w);
            } else {
                free.push(w);
            }
        }
        let mut written = WireRanges::default();
        written.insert_range(0, num_inputs);
        Ok(Streamed {
            path: name,
            digest,
            num_gates: h.num_gates,
            and_gates,
            num_wires: h.num_wires,
            output_start,
            inputs: h.inputs,
            outputs: h.outputs,
            format: h.format,
            header_line: h.line,
            window,
            lines: Lines::at(BufReader::new(file), after_line, gates_at, u64::MAX),
            marks: BufReader::new(marks),
            mark_pending: None,
            gates_read: 0,
            windows: 0,
            live,
            free,
            positions: num_inputs,
            written,
            local: HashMap::default(),
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
        })
    }

    /// Width of each input value.
    pub fn inputs(&self) -> &[u32] {
        &self.inputs
    }

    /// Width of each output value.
    pub fn outputs(&self) -> &[u32] {
        &self.outputs
    }

    /// SHA-256 of the header's numbers and the bytes of the gate lines (read from the end in
    /// chunks of 1 MiB): two parties that stream one file agree on it.
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
                    in_file(err(self.header_line, message), &self.path)
                })
            })
            .collect()
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

    /// The next gate's liveness marks.
    fn next_mark(&mut self) -> Result<u8, Error> {
        if let Some(m) = self.mark_pending.take() {
            return Ok(m);
        }
        let mut byte = [0u8];
        self.marks.read_exact(&mut byte).map_err(|e| Error::Io {
            path: "the temporary file of liveness marks".into(),
            message: e.to_string(),
        })?;
        self.mark_pending = Some(byte[0] >> 4);
        Ok(byte[0] & 0xf)
    }

    /// Reads the next window's gates into the window's circuit, positions and store size.
    fn read_window(&mut self) -> Result<(), Error> {
        self.local.clear();
        self.writes.clear();
        self.reads.clear();
        self.keeps.clear();
        self.circuit.gates.clear();
        let output_start = self.output_start;
        let end = self
            .num_gates
            .min(self.gates_read.saturating_add(self.window as u32));
        while self.gates_read < end {
            let Some((line, bytes)) = self.lines.next_raw()? else {
                return Err(fewer_gates(self.num_gates, u64::from(self.gates_read)));
            };
            let gate = gate_line(bytes, line)?;
            let mark = self.next_mark()?;
            self.gates_read += 1;
            let mut local = gate;
            for &k in gate.inputs() {
                let last = mark & [LAST_A, LAST_B][k] != 0 && gate.input(k) < output_start;
                let w = self.read(gate.input(k), last, line)?;
                if k == 0 {
                    local.a = w;
                } else {
                    local.b = w;
                }
            }
            let fault = |f: GateFault| Err(err(line, f.message()));
            if gate.kind == GateKind::Eq && gate.a > 1 {
                return fault(GateFault::EqConstant(gate.a));
            }
            let o = gate.out;
            let wires = self.num_wires;
            if o >= wires {
                return fault(GateFault::WritesBeyond { wire: o, wires });
            }
            if !self.written.insert(o) {
                return fault(GateFault::WritesAgain(o));
            }
            let kept = mark & DEAD == 0 || o >= output_start;
            let index = self.writes.len() as u32 | WRITTEN;
            self.writes.push((o, kept));
            if kept {
                self.local.insert(o, index);
            }
            local.out = index;
            self.circuit.gates.push(local);
        }
        if self.gates_read == self.num_gates && self.lines.next_raw()?.is_some() {
            return Err(more_gates(self.lines.number, self.num_gates));
        }
        self.place_window();
        Ok(())
    }

    /// The window-local name of wire `w` read by the gate on `line`, read for the last time
    /// if `last`.
    fn read(&mut self, w: Wire, last: bool, line: usize) -> Result<u32, Error> {
        let wires = self.num_wires;
        if w >= wires {
            return Err(err(
                line,
                GateFault::ReadsBeyond { wire: w, wires }.message(),
            ));
        }
        let name = match self.local.get(&w) {
            Some(&name) => name,
            None => {
                let Some(&pos) = self.live.get(&w) else {
                    return Err(err(line, GateFault::ReadsUnwritten(w).message()));
                };
                let name = self.reads.len() as u32;
                self.reads.push(pos);
                self.local.insert(w, name);
                name
            }
        };
        if last {
            self.local.remove(&w);
            if name & WRITTEN != 0 {
                self.writes[(name & !WRITTEN) as usize].1 = false;
            } else if let Some(pos) = self.live.remove(&w) {
                self.free.push(pos);
            }
        }
        Ok(name)
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
    Io(std::io::Error),
    /// The file, at line 0: a gate count other than the header's, or an over-long line.
    Bad(Error),
}

impl From<std::io::Error> for Scan {
    fn from(e: std::io::Error) -> Scan {
        Scan::Io(e)
    }
}

/// What the backward pass finds besides the marks.
struct Liveness {
    /// The input wires some gate reads.
    read_inputs: HashSet<Wire>,
    /// SHA-256 of the header's numbers and the gate lines.
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
    digest: Sha256,
}

impl Backward {
    /// Writes every gate's marks to `marks` (gate g in byte g / 2, low half for even g) and
    /// returns the input wires that some gate reads, the digest and the AND gates.
    fn run(mut self, marks: &mut File) -> Result<Liveness, Scan> {
        let (lo, mut pos) = self.range;
        // buf[..end] is the file from `pos` on, less the lines already taken; the next chunk
        // is read into `chunk`, the two then swapped.
        let (mut buf, mut chunk): (Vec<u8>, Vec<u8>) = (Vec::new(), Vec::new());
        let mut end = 0;
        let mut later: HashSet<Wire> = HashSet::default();
        let mut batch = MarkBatch::new(u64::from(self.num_gates));
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
                self.file.seek(SeekFrom::Start(from))?;
                self.file.read_exact(&mut chunk)?;
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
            let mark = gate.map_or(0, |g| self.mark(&g, &mut later));
            batch.push(mark, marks)?;
        }
        if seen != u64::from(self.num_gates) {
            return Err(Scan::Bad(fewer_gates(self.num_gates, seen)));
        }
        batch.flush(marks)?;
        Ok(Liveness {
            read_inputs: later,
            digest: self.digest.finalize().into(),
            and_gates,
        })
    }

    /// The marks of `g`, met going backward with `later` the wires read after it.
    fn mark(&self, g: &Gate, later: &mut HashSet<Wire>) -> u8 {
        let mut mark = 0;
        if !later.remove(&g.out) && g.out < self.output_start {
            mark |= DEAD;
        }
        for &k in g.inputs().iter().rev() {
            if later.insert(g.input(k)) {
                mark |= [LAST_A, LAST_B][k];
            }
        }
        mark
    }
}

/// Marks of up to [`MARK_GATES`] gates, collected from the last gate down and written where
/// they belong in the marks file.
struct MarkBatch {
    /// The gate after the lowest one collected.
    next: u64,
    /// The first gate of the batch (even).
    base: u64,
    bytes: Vec<u8>,
}

impl MarkBatch {
    fn new(num_gates: u64) -> Self {
        let base = num_gates.saturating_sub(1) / MARK_GATES * MARK_GATES;
        MarkBatch {
            next: num_gates,
            base,
            bytes: vec![0; (num_gates - base).div_ceil(2) as usize],
        }
    }

    /// The previous gate's marks.
    fn push(&mut self, mark: u8, marks: &mut File) -> std::io::Result<()> {
        let g = self.next - 1;
        if g < self.base {
            self.flush(marks)?;
            self.base -= MARK_GATES;
            self.bytes.clear();
            self.bytes.resize((MARK_GATES / 2) as usize, 0);
        }
        let at = ((g - self.base) / 2) as usize;
        self.bytes[at] |= mark << (4 * (g % 2));
        self.next = g;
        Ok(())
    }

    fn flush(&self, marks: &mut File) -> std::io::Result<()> {
        marks.seek(SeekFrom::Start(self.base / 2))?;
        marks.write_all(&self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::WireRanges;

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
