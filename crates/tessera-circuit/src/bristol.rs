//! Bristol circuit files: Bristol Fashion and the older Bristol format (Archer, Atapoor, Smart
//! et al., "Bristol Fashion MPC circuits"; Tillich and Smart, the original format).
//!
//! Fashion: `gates wires`, then `n w1 .. wn` (input values and their widths), then
//! `m v1 .. vm` (output values), then one gate per line: `2 1 a b out XOR|AND`,
//! `1 1 a out INV|EQW`, `1 1 c out EQ` (c a constant 0 or 1). The old format's second line is
//! `n1 n2 n3`: party 1's input bits, party 2's, and the output bits; gates are XOR, AND, INV.
//! Blank lines are ignored. [`parse`] tells the two apart: in Fashion the third non-blank line
//! holds only numbers, in the old format it is already a gate.

use crate::circuit::{ShapeError, check_shape};
use crate::{Circuit, Error, Gate, GateKind};
use std::fmt::Write as _;
use std::io::{BufRead, Read};

pub mod stream;

/// What an I/O error writing a circuit file ([`write_to`], [`write_chained`],
/// [`stream::Streamed::compile`]) calls the file: the writer gets a stream, not a path, so a
/// caller that knows the path puts it in place of this.
pub const WRITTEN_FILE: &str = "the circuit file written";

/// The largest circuit file read, in bytes (1 GiB: some 80 million gates).
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// The longest line accepted, in bytes (a header line lists the input and output widths).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Which file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Bristol Fashion.
    Fashion,
    /// The older Bristol format.
    Old,
}

fn err(line: usize, message: impl Into<String>) -> Error {
    Error::Parse {
        line,
        message: message.into(),
    }
}

/// The error of an I/O failure `e` on the file called `path`.
fn io_error(path: &str) -> impl Fn(std::io::Error) -> Error + Copy + '_ {
    move |e| Error::Io {
        path: path.to_string(),
        message: e.to_string(),
    }
}

/// `e` with the file's name in its message.
fn in_file(e: Error, path: &str) -> Error {
    match e {
        Error::Parse { line, message } => Error::Parse {
            line,
            message: format!("{path}: {message}"),
        },
        other => other,
    }
}

/// A gate line, on line `line`, beyond the `declared` gates.
fn more_gates(line: usize, declared: u32) -> Error {
    err(
        line,
        format!("more gates than the {declared} the header declares"),
    )
}

/// A file of `found` gate lines where the header declares `declared`.
fn fewer_gates(declared: u32, found: u64) -> Error {
    err(
        0,
        format!("header declares {declared} gates, file has {found}"),
    )
}

/// A decimal number of ASCII digits only (no sign, no spaces), as the formats write them.
fn number(tok: &str, line: usize, what: &str) -> Result<u32, Error> {
    let digits = !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| tok.parse::<u32>().ok())
        .flatten()
        .ok_or_else(|| {
            err(
                line,
                format!("{what}: expected a non-negative integer, got {tok:?}"),
            )
        })
}

/// A header line of numbers only.
fn numbers(toks: &[&str], line: usize, what: &str) -> Result<Vec<u32>, Error> {
    toks.iter().map(|t| number(t, line, what)).collect()
}

/// A Fashion value list `n w1 .. wn`.
fn value_list(toks: &[&str], line: usize, what: &str) -> Result<Vec<u32>, Error> {
    let v = numbers(toks, line, what)?;
    match v.split_first() {
        Some((&n, widths)) if n as usize == widths.len() => Ok(widths.to_vec()),
        Some((&n, widths)) => Err(err(
            line,
            format!("{what}: says {n} values but lists {} widths", widths.len()),
        )),
        None => Err(err(line, format!("{what}: empty line"))),
    }
}

/// The non-blank lines of a circuit file, read one at a time: a line longer than
/// [`MAX_LINE_BYTES`], a file longer than its limit ([`MAX_FILE_BYTES`] for files read whole)
/// or text that is not UTF-8 is an error naming the line.
pub(crate) struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    /// The number of the line last read (blank lines count).
    number: usize,
    /// Bytes read.
    bytes: u64,
    /// Where the line last read starts.
    start: u64,
    limit: u64,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R) -> Self {
        Lines::at(reader, 0, 0, MAX_FILE_BYTES)
    }

    /// Lines of `reader`, which starts after line `number` and byte `bytes` of a file of at
    /// most `limit` bytes.
    pub(crate) fn at(reader: R, number: usize, bytes: u64, limit: u64) -> Self {
        Lines {
            reader,
            buf: Vec::new(),
            number,
            bytes,
            start: bytes,
            limit,
        }
    }

    /// The next non-blank line: its number and its text.
    fn next(&mut self) -> Result<Option<(usize, &str)>, Error> {
        let Some((line, bytes)) = self.next_raw()? else {
            return Ok(None);
        };
        let text = std::str::from_utf8(bytes).map_err(|_| err(line, "not UTF-8 text"))?;
        Ok(Some((line, text)))
    }

    /// The next non-blank line's number and bytes, not yet checked to be UTF-8.
    pub(crate) fn next_raw(&mut self) -> Result<Option<(usize, &[u8])>, Error> {
        let cap = MAX_LINE_BYTES as u64 + 1;
        loop {
            self.buf.clear();
            self.start = self.bytes;
            self.number += 1;
            let line = self.number;
            let n = (&mut self.reader)
                .take(cap)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| err(line, format!("reading: {e}")))?;
            if n == 0 {
                return Ok(None);
            }
            self.bytes += n as u64;
            if self.bytes > self.limit {
                return Err(err(
                    line,
                    format!("the file is larger than the limit of {} bytes", self.limit),
                ));
            }
            if n as u64 == cap && self.buf.last() != Some(&b'\n') {
                return Err(err(
                    line,
                    format!("longer than the limit of {MAX_LINE_BYTES} bytes"),
                ));
            }
            if !self.buf.iter().all(u8::is_ascii_whitespace) {
                break;
            }
        }
        Ok(Some((self.number, &self.buf)))
    }

    /// The next non-blank line split into tokens.
    fn tokens(&mut self) -> Result<Option<(usize, Vec<&str>)>, Error> {
        Ok(self
            .next()?
            .map(|(line, text)| (line, text.split_whitespace().collect())))
    }
}

/// Reads a circuit in either format from text; see the module documentation.
pub fn parse(text: &str) -> Result<(Circuit, Format), Error> {
    parse_reader(text.as_bytes(), text.len() as u64)
}

/// A file's header: the counts, the input and output widths, and where the gates start.
pub(crate) struct Header {
    pub num_gates: u32,
    pub num_wires: u32,
    pub inputs: Vec<u32>,
    pub outputs: Vec<u32>,
    pub format: Format,
    /// The line of the counts.
    pub line: usize,
    /// The line before the first gate and the byte where the first gate's line starts.
    pub gates_after: (usize, u64),
    /// The old format's first gate (its third line) and that line.
    pub first_gate: Option<(Gate, usize)>,
}

/// Reads the header lines (and, in the old format, the first gate) and checks the shape.
pub(crate) fn header<R: BufRead>(lines: &mut Lines<R>) -> Result<Header, Error> {
    let (l1, head) = lines.tokens()?.ok_or_else(|| err(0, "empty file"))?;
    let head = numbers(&head, l1, "header (gates wires)")?;
    let [num_gates, num_wires] = head[..] else {
        return Err(err(
            l1,
            format!("header must be `gates wires`, got {} numbers", head.len()),
        ));
    };
    let (l2, second) = lines
        .tokens()?
        .map(|(l, t)| (l, t.iter().map(|t| t.to_string()).collect::<Vec<_>>()))
        .ok_or_else(|| err(l1, "missing the input line"))?;
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let (l3, third) = lines
        .tokens()?
        .ok_or_else(|| err(l2, "missing the output line or gates"))?;
    let third_is_numbers = third.iter().all(|t| t.bytes().all(|b| b.is_ascii_digit()));
    let (format, inputs, outputs, first_gate) = if third_is_numbers {
        (
            Format::Fashion,
            value_list(&second, l2, "inputs")?,
            value_list(&third, l3, "outputs")?,
            None,
        )
    } else {
        let v = numbers(&second, l2, "input/output counts (n1 n2 n3)")?;
        let [n1, n2, n3] = v[..] else {
            return Err(err(
                l2,
                format!(
                    "old-format counts must be `n1 n2 n3`, got {} numbers",
                    v.len()
                ),
            ));
        };
        // The third line is already the first gate.
        let first = parse_gate(&third, l3)?;
        (Format::Old, vec![n1, n2], vec![n3], Some((first, l3)))
    };
    // The shape bounds every wire table by the gate count, which the gate lines must back.
    check_shape(num_wires, &inputs, &outputs, u64::from(num_gates)).map_err(|e| match e {
        ShapeError::Inputs { .. } => err(l2, e.message()),
        _ => err(l1, e.message()),
    })?;
    let gates_after = match format {
        Format::Fashion => (lines.number, lines.bytes),
        Format::Old => (l3 - 1, lines.start),
    };
    Ok(Header {
        num_gates,
        num_wires,
        inputs,
        outputs,
        format,
        line: l1,
        gates_after,
        first_gate,
    })
}

/// Reads a circuit in either format from `reader`, line by line. `size_hint` is the number of
/// bytes the reader holds if known (a file's length), which bounds what is reserved for the
/// gates before they are read; nothing else is allocated before the lines that need it are
/// read, so memory follows what the input supplies.
pub fn parse_reader(reader: impl BufRead, size_hint: u64) -> Result<(Circuit, Format), Error> {
    let mut lines = Lines::new(reader);
    let h = header(&mut lines)?;
    let num_gates = h.num_gates;
    let mut gates = Vec::new();
    let mut gate_lines = Vec::new();
    if let Some((gate, line)) = h.first_gate {
        gates.push(gate);
        gate_lines.push(line);
    }
    // A gate line has at least 11 bytes ("1 1 0 2 EQ" and its newline).
    let backed = usize::try_from(size_hint / 8).unwrap_or(usize::MAX);
    gates.reserve((num_gates as usize).min(backed));
    gate_lines.reserve((num_gates as usize).min(backed));
    while let Some((line, bytes)) = lines.next_raw()? {
        if gates.len() == num_gates as usize {
            return Err(more_gates(line, num_gates));
        }
        gates.push(gate_line(bytes, line)?);
        gate_lines.push(line);
    }
    if gates.len() != num_gates as usize {
        return Err(fewer_gates(num_gates, gates.len() as u64));
    }
    let circuit = Circuit {
        num_wires: h.num_wires,
        inputs: h.inputs,
        outputs: h.outputs,
        gates,
    };
    circuit.validate().map_err(|(gate, msg)| match gate {
        Some(i) => err(gate_lines[i], msg),
        None => err(h.line, msg),
    })?;
    Ok((circuit, h.format))
}

/// The gate on line `line`, of bytes `bytes` (a non-blank line): read without allocating
/// where the line is plain ([`plain_gate`]), else judged (and any fault worded) by
/// [`parse_gate`].
pub(crate) fn gate_line(bytes: &[u8], line: usize) -> Result<Gate, Error> {
    if let Some(g) = plain_gate(bytes) {
        return Ok(g);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| err(line, "not UTF-8 text"))?;
    let toks: Vec<&str> = text.split_whitespace().collect();
    parse_gate(&toks, line)
}

/// A gate line of ASCII digits and an operation name separated by ASCII whitespace, exactly
/// as [`parse_gate`] accepts it; `None` for anything else, which [`parse_gate`] then judges.
/// (Digits and operation names hold no whitespace of any kind, so where this accepts a line,
/// splitting it at Unicode whitespace gives the same tokens.)
fn plain_gate(bytes: &[u8]) -> Option<Gate> {
    // One pass: numbers (at most five), then the operation, then only whitespace.
    let mut nums = [0u32; 5];
    let mut n = 0;
    let mut i = 0;
    let op = loop {
        while bytes.get(i)?.is_ascii_whitespace() {
            i += 1;
        }
        if !bytes[i].is_ascii_digit() {
            let start = i;
            while bytes.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
                i += 1;
            }
            break &bytes[start..i];
        }
        // At most ten digits (longer, even with leading zeros, goes the slow way), summed in
        // 64 bits without a check per digit: the checked multiply's latency was most of the
        // line's cost.
        let start = i;
        let mut v: u64 = 0;
        while let Some(d) = bytes
            .get(i)
            .map(|c| c.wrapping_sub(b'0'))
            .filter(|&d| d <= 9)
        {
            v = v * 10 + u64::from(d);
            i += 1;
            if i - start > 10 {
                return None;
            }
        }
        let v = u32::try_from(v).ok()?;
        if bytes.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
            return None;
        }
        *nums.get_mut(n)? = v;
        n += 1;
    };
    if !bytes[i..].iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let kind = match op {
        b"XOR" => GateKind::Xor,
        b"AND" => GateKind::And,
        b"INV" | b"NOT" => GateKind::Inv,
        b"EQW" => GateKind::Eqw,
        b"EQ" => GateKind::Eq,
        _ => return None,
    };
    match (kind, n, nums) {
        (GateKind::Xor | GateKind::And, 5, [2, 1, a, b, out]) => Some(Gate { kind, a, b, out }),
        (GateKind::Inv | GateKind::Eqw | GateKind::Eq, 4, [1, 1, a, out, _]) => {
            Some(Gate { kind, a, b: 0, out })
        }
        _ => None,
    }
}

fn parse_gate(toks: &[&str], line: usize) -> Result<Gate, Error> {
    let op = *toks.last().unwrap_or(&"");
    let kind = match op {
        "XOR" => GateKind::Xor,
        "AND" => GateKind::And,
        "INV" | "NOT" => GateKind::Inv,
        "EQW" => GateKind::Eqw,
        "EQ" => GateKind::Eq,
        other => {
            return Err(err(
                line,
                format!("unsupported gate {other:?} (XOR, AND, INV, EQ, EQW are)"),
            ));
        }
    };
    let arity = if matches!(kind, GateKind::Xor | GateKind::And) {
        2
    } else {
        1
    };
    let expect = 2 + arity + 1 + 1;
    if toks.len() != expect {
        return Err(err(
            line,
            format!(
                "{op} gate needs {expect} fields (`{arity} 1 inputs.. output {op}`), got {}",
                toks.len()
            ),
        ));
    }
    let (nin, nout) = (
        number(toks[0], line, "input count")?,
        number(toks[1], line, "output count")?,
    );
    if nin as usize != arity || nout != 1 {
        return Err(err(
            line,
            format!("{op} gate must be `{arity} 1 ...`, got `{nin} {nout} ...`"),
        ));
    }
    let a = number(toks[2], line, "input wire")?;
    let b = if arity == 2 {
        number(toks[3], line, "input wire")?
    } else {
        0
    };
    let out = number(toks[2 + arity], line, "output wire")?;
    Ok(Gate { kind, a, b, out })
}

/// Writes `c` in `format`. The old format takes at most two input values (parties), one output
/// value and only XOR, AND and INV gates.
pub fn write(c: &Circuit, format: Format) -> Result<String, Error> {
    let mut out = Vec::new();
    write_to(c, format, &mut out)?;
    String::from_utf8(out).map_err(|e| Error::Invalid(e.to_string()))
}

/// [`write()`] to `out`, line by line.
pub fn write_to(c: &Circuit, format: Format, out: &mut impl std::io::Write) -> Result<(), Error> {
    write_steps(c, 1, format, out)
}

/// Writes `steps` copies of the step circuit `step` chained into one circuit, in `format`, to
/// `out`, gate line by gate line (nothing is held but one step): `step` takes two input values
/// (a fresh value, then the state) and outputs the next state, as wide as its second input.
/// The chain's input value 0 is every step's fresh value, step after step, its value 1 the
/// initial state, and its output the last step's. For example SHA-256 over `steps` 64-byte
/// blocks from a chaining value: the garbler's message, the evaluator's chaining value.
pub fn write_chained(
    step: &Circuit,
    steps: u32,
    format: Format,
    out: &mut impl std::io::Write,
) -> Result<(), Error> {
    let [_, state] = step.inputs[..] else {
        return Err(Error::Invalid(format!(
            "a chained step takes two input values (fresh, state), this one {}",
            step.inputs.len()
        )));
    };
    if step.num_output_wires() != state || steps == 0 {
        return Err(Error::Invalid(format!(
            "{steps} steps of a circuit whose {} output bits are not its {state}-bit state",
            step.num_output_wires()
        )));
    }
    write_steps(step, steps, format, out)
}

/// Writes `steps` chained copies of `c` (one: `c` itself).
fn write_steps(
    c: &Circuit,
    steps: u32,
    format: Format,
    out: &mut impl std::io::Write,
) -> Result<(), Error> {
    c.check()?;
    let n = u64::from(steps);
    let (fresh, state) = match c.inputs[..] {
        [fresh, state] if steps > 1 => (u64::from(fresh), u64::from(state)),
        _ => (u64::from(c.num_input_wires()), 0),
    };
    let written = c.gates.len() as u64;
    let base = n * fresh + state;
    let wires = base + n * written;
    let gates = n * written;
    let too_big =
        |what: &str| Error::Invalid(format!("a chain of {steps} steps has too many {what}"));
    let wires = u32::try_from(wires).map_err(|_| too_big("wires"))?;
    let gates = u32::try_from(gates).map_err(|_| too_big("gates"))?;
    let inputs = if steps > 1 {
        vec![
            u32::try_from(n * fresh).map_err(|_| too_big("inputs"))?,
            state as u32,
        ]
    } else {
        c.inputs.clone()
    };
    let io = |e: std::io::Error| Error::Io {
        path: WRITTEN_FILE.into(),
        message: e.to_string(),
    };
    let mut head = String::new();
    let _ = writeln!(head, "{gates} {wires}");
    let list = |v: &[u32]| v.iter().map(|w| format!(" {w}")).collect::<String>();
    match format {
        Format::Fashion => {
            let _ = writeln!(head, "{}{}", inputs.len(), list(&inputs));
            let _ = writeln!(head, "{}{}", c.outputs.len(), list(&c.outputs));
        }
        Format::Old => {
            if inputs.len() > 2 || c.outputs.len() != 1 {
                return Err(Error::Invalid(
                    "the old Bristol format holds two input values and one output value".into(),
                ));
            }
            if c.gates
                .iter()
                .any(|g| matches!(g.kind, GateKind::Eq | GateKind::Eqw))
            {
                return Err(Error::Invalid(
                    "the old Bristol format has no EQ/EQW gates".into(),
                ));
            }
            let v = |k: usize| inputs.get(k).copied().unwrap_or(0);
            let _ = writeln!(head, "{} {} {}", v(0), v(1), c.outputs[0]);
        }
    }
    head.push('\n');
    out.write_all(head.as_bytes()).map_err(io)?;
    let outputs_at = u64::from(c.output_start()) - fresh - state;
    let mut line = String::new();
    for k in 0..n {
        // Step k's wire x in the chain.
        let wire = |x: u32| -> u64 {
            let x = u64::from(x);
            if x < fresh {
                k * fresh + x
            } else if x < fresh + state {
                match k {
                    0 => n * fresh + (x - fresh),
                    _ => base + (k - 1) * written + outputs_at + (x - fresh),
                }
            } else {
                base + k * written + (x - fresh - state)
            }
        };
        for g in &c.gates {
            line.clear();
            let _ = match g.kind {
                GateKind::Xor => {
                    writeln!(line, "2 1 {} {} {} XOR", wire(g.a), wire(g.b), wire(g.out))
                }
                GateKind::And => {
                    writeln!(line, "2 1 {} {} {} AND", wire(g.a), wire(g.b), wire(g.out))
                }
                GateKind::Inv => writeln!(line, "1 1 {} {} INV", wire(g.a), wire(g.out)),
                GateKind::Eqw => writeln!(line, "1 1 {} {} EQW", wire(g.a), wire(g.out)),
                GateKind::Eq => writeln!(line, "1 1 {} {} EQ", g.a, wire(g.out)),
            };
            out.write_all(line.as_bytes()).map_err(io)?;
        }
    }
    out.flush().map_err(io)
}

/// The gate count a circuit file's header declares, read from its first lines only (to choose
/// between reading the file whole and in windows, [`stream`], without reading it twice).
pub fn declared_gates(path: &std::path::Path) -> Result<u32, Error> {
    let name = path.display().to_string();
    let mut file = tessera_core::files::open(path).map_err(io_error(&name))?;
    if stream::compiled::is_compiled(&mut file).map_err(io_error(&name))? {
        return stream::Streamed::open_compiled(file, name, 1).map(|s| s.num_gates());
    }
    let mut lines = Lines::at(std::io::BufReader::new(file), 0, 0, u64::MAX);
    header(&mut lines)
        .map(|h| h.num_gates)
        .map_err(|e| in_file(e, &name))
}

/// Reads a circuit file, streaming it line by line (see [`parse_reader`]); a file larger than
/// [`MAX_FILE_BYTES`] is refused.
pub fn read_file(path: &std::path::Path) -> Result<(Circuit, Format), Error> {
    let name = path.display().to_string();
    let io = io_error(&name);
    let mut file = tessera_core::files::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > MAX_FILE_BYTES {
        return Err(Error::Io {
            path: name,
            message: format!(
                "{size} bytes, more than the limit of {MAX_FILE_BYTES} for circuit files"
            ),
        });
    }
    if stream::compiled::is_compiled(&mut file).map_err(io)? {
        let s = stream::Streamed::open_compiled(file, name.clone(), 1)?;
        let format = s.format();
        return s
            .into_circuit()
            .map(|c| (c, format))
            .map_err(|e| in_file(e, &name));
    }
    parse_reader(std::io::BufReader::new(file), size).map_err(|e| in_file(e, &name))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HALF_ADDER: &str = "2 4\n2 1 1\n2 1 1\n\n2 1 0 1 2 XOR\n2 1 0 1 3 AND\n";

    #[test]
    fn reads_both_formats() {
        let (c, f) = parse(HALF_ADDER).unwrap();
        assert_eq!(
            (f, c.inputs.clone(), c.outputs.clone(), c.gates.len()),
            (Format::Fashion, vec![1, 1], vec![1, 1], 2)
        );
        let (c, f) = parse("2 4\n1 1 2\n2 1 0 1 2 XOR\n2 1 0 1 3 AND\n").unwrap();
        assert_eq!((f, c.inputs, c.outputs), (Format::Old, vec![1, 1], vec![2]));
    }

    #[test]
    fn malformed_files_name_the_line() {
        let cases = [
            ("", 0, "empty"),
            (
                "2 4\n2 1 1\n2 1 1\n\n2 1 0 1 2 XOR\n2 1 0 9 3 AND\n",
                6,
                "wire 9",
            ),
            (
                "2 4\n2 1 1\n2 1 1\n2 1 0 1 2 XOR\n2 1 0 3 3 AND\n",
                5,
                "before any gate writes it",
            ),
            (
                "2 4\n2 1 1\n2 1 1\n2 1 0 1 2 XOR\n2 1 0 1 2 AND\n",
                5,
                "already",
            ),
            (
                "2 4\n2 1 1\n2 1 1\n2 1 0 1 2 XOR\n2 1 0 1 3 NAND\n",
                5,
                "unsupported gate",
            ),
            (
                "2 4\n2 1 1\n2 1 1\n2 1 0 1 2 XOR\n1 1 0 1 3 AND\n",
                5,
                "must be `2 1",
            ),
            ("2 4\n2 1 1\n2 1 1\n2 1 0 x 2 XOR\n", 4, "\"x\""),
            (
                "3 4\n2 1 1\n2 1 1\n2 1 0 1 2 XOR\n2 1 0 1 3 AND\n",
                0,
                "declares 3",
            ),
            (
                "1 3\n2 1 1\n1 1\n2 1 0 1 2 XOR\n2 1 0 1 2 AND\n",
                5,
                "more gates",
            ),
            ("2 4\n3 1 1\n2 1 1\n2 1 0 1 2 XOR\n", 2, "says 3 values"),
            (
                "2 4\n2 1 1\n2 1 1\n1 1 5 2 EQ\n2 1 0 1 3 AND\n",
                4,
                "constant",
            ),
            ("99999999999 4\n", 1, "integer"),
            (
                "1 4294967295\n2 1 1\n1 1\n2 1 0 1 2 XOR\n",
                1,
                "define at most 3",
            ),
            (
                "1 3\n2 4294967295 4294967295\n1 1\n2 1 0 1 2 XOR\n",
                2,
                "can read at most 2",
            ),
            (
                "1 3\n2 1 1\n1 9\n2 1 0 1 2 XOR\n",
                1,
                "output wires overlap",
            ),
            // Inputs of 4 Gi wires behind one gate: refused before any wire table exists.
            (
                "1 4294967295\n2 2147483648 2147483646\n1 1\n\n2 1 0 1 4294967294 XOR\n",
                2,
                "can read at most 2",
            ),
            // Numbers are digits only: no sign.
            ("2 4\n2 1 +1\n2 1 1\n2 1 0 1 2 XOR\n", 2, "\"+1\""),
            ("1 3\n2 1 1\n1 1\n2 1 0 +1 2 XOR\n", 4, "\"+1\""),
            ("+1 3\n2 1 1\n1 1\n2 1 0 1 2 XOR\n", 1, "\"+1\""),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("case.txt");
        for (text, line, what) in cases {
            let whole = match parse(text) {
                Err(Error::Parse { line: l, message }) => {
                    assert_eq!(l, line, "{text:?}: {message}");
                    assert!(message.contains(what), "{text:?}: {message}");
                    (l, message)
                }
                other => panic!("{text:?} gave {other:?}"),
            };
            // Streamed, the same line and fault after the file's name, but for a gate count
            // other than the header's: the liveness pass finds it first, at line 0.
            std::fs::write(&path, text).unwrap();
            let streamed = stream::Streamed::open(&path, 1).and_then(|s| {
                let x: Vec<Vec<bool>> =
                    s.inputs().iter().map(|&w| vec![true; w as usize]).collect();
                s.evaluate(&x)
            });
            let name = path.display().to_string();
            match streamed {
                Err(Error::Parse { line: l, message })
                    if (l, &message) == (whole.0, &format!("{name}: {}", whole.1)) => {}
                Err(Error::Parse { line: 0, message })
                    if message.contains("gates") && message.contains("header declares") => {}
                other => panic!("{text:?} streamed gave {other:?}, whole {whole:?}"),
            }
        }
    }

    /// An endless line (as `/dev/zero` gives) stops at the line limit, and bytes that are not
    /// UTF-8 are named, without reading further.
    #[test]
    fn endless_or_binary_input_is_refused_early() {
        let zeros = std::io::repeat(0).take(64 * MAX_LINE_BYTES as u64);
        match parse_reader(std::io::BufReader::new(zeros), 0) {
            Err(Error::Parse { line: 1, message }) => {
                assert!(message.contains("longer than the limit"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        let binary: &[u8] = b"1 3\n2 1 1\n1 1\n2 1 0 1 2 \xff\xfe\n";
        match parse_reader(binary, binary.len() as u64) {
            Err(Error::Parse { line: 4, message }) => assert!(message.contains("UTF-8")),
            other => panic!("{other:?}"),
        }
    }

    proptest::proptest! {
        /// Mangled files (tokens replaced, dropped or duplicated, text cut short) give an error
        /// or a valid circuit, never a panic; streamed in windows of 1 to 3 gates, exactly the
        /// same files are refused and the others give the same outputs.
        #[test]
        fn mangled_files_never_panic(
            edits in proptest::collection::vec((0usize..64, 0u8..4, proptest::prelude::any::<u32>()), 1..6),
            cut in 0usize..200,
            window in 1usize..4,
        ) {
            let text = "5 9\n2 2 2\n1 2\n\n2 1 0 1 4 AND\n2 1 4 2 5 XOR\n2 1 5 3 6 AND\n1 1 0 7 INV\n2 1 6 4 8 AND\n";
            let mut toks: Vec<String> = text.split(' ').map(str::to_string).collect();
            for (at, op, v) in edits {
                let i = at % toks.len();
                match op {
                    // Small numbers half the time, so that many mangled files stay valid.
                    0 => toks[i] = if v & 1 == 0 { v >> 1 } else { (v >> 1) % 12 }.to_string(),
                    1 => { toks.remove(i); if toks.is_empty() { toks.push(String::new()); } }
                    2 => { let t = toks[i].clone(); toks.insert(i, t); }
                    _ => toks[i] = ["XOR\n", "EQ", "\n", "-1", "AND"][v as usize % 5].to_string(),
                }
            }
            let mangled = toks.join(" ");
            let cut = cut.min(mangled.len());
            let file = tempfile::NamedTempFile::new().unwrap();
            for t in [&mangled[..], mangled.get(..cut).unwrap_or("")] {
                std::fs::write(file.path(), t).unwrap();
                let streamed = |x: Option<&[Vec<bool>]>| {
                    stream::Streamed::open(file.path(), window).and_then(|s| {
                        let ones: Vec<Vec<bool>> = s.inputs().iter().map(|&w| vec![true; w as usize]).collect();
                        s.evaluate(x.unwrap_or(&ones))
                    })
                };
                match parse(t) {
                    Ok((c, _)) => {
                        proptest::prop_assert!(c.validate().is_ok());
                        let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| vec![true; w as usize]).collect();
                        let want = crate::eval::evaluate(&c, &inputs);
                        proptest::prop_assert!(want.is_ok());
                        proptest::prop_assert_eq!(streamed(Some(&inputs)), want, "{:?}", t);
                    }
                    Err(_) => {
                        let got = streamed(None);
                        proptest::prop_assert!(got.is_err(), "{:?} streamed to {:?}", t, got);
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// The allocation-free reader of plain gate lines accepts only what the tokenising
        /// reader accepts, as the same gate, and accepts every line it writes.
        #[test]
        fn plain_gate_lines_read_as_tokenised(
            unary in proptest::prelude::any::<bool>(),
            edits in proptest::collection::vec((0usize..7, 0usize..17), 0..3),
            seps in proptest::collection::vec(0usize..6, 7),
        ) {
            let words = ["2", "1", "0", "7", "4294967295", "4294967296", "02", "XOR", "AND", "INV", "EQ", "EQW", "NOT", "x", "-1", "\u{a0}", ""];
            let gaps = [" ", "  ", "\t", "\x0b", "\u{a0}", "\r"];
            // A valid line, then up to two tokens replaced (or dropped, or one added).
            let mut toks: Vec<&str> = if unary { vec!["1", "1", "0", "7", "INV"] } else { vec!["2", "1", "0", "7", "4", "AND"] };
            for (at, w) in edits {
                match toks.get_mut(at) {
                    Some(t) => *t = words[w],
                    None => toks.push(words[w]),
                }
            }
            let line: String = toks.iter().zip(&seps).map(|(t, &g)| format!("{t}{}", gaps[g])).collect();
            let toks: Vec<&str> = line.split_whitespace().collect();
            if let Some(g) = plain_gate(line.as_bytes()) {
                proptest::prop_assert_eq!(parse_gate(&toks, 1), Ok(g));
            }
            if let Ok(g) = parse_gate(&toks, 1) {
                proptest::prop_assert_eq!(gate_line(line.as_bytes(), 1), Ok(g));
                let plain = match g.kind {
                    GateKind::Xor | GateKind::And => format!("2 1 {} {} {} {}", g.a, g.b, g.out, toks[5]),
                    _ => format!("1 1 {} {} {}", g.a, g.out, toks[4]),
                };
                proptest::prop_assert_eq!(plain_gate(plain.as_bytes()), Some(g));
            }
        }
    }

    #[test]
    fn write_then_read_is_identity() {
        let (fashion, _) = parse(HALF_ADDER).unwrap();
        // The old format has one output value.
        let old = Circuit {
            outputs: vec![2],
            ..fashion.clone()
        };
        assert!(write(&fashion, Format::Old).is_err());
        for (c, f) in [(fashion, Format::Fashion), (old, Format::Old)] {
            let text = write(&c, f).unwrap();
            let (back, got) = parse(&text).unwrap();
            assert_eq!(got, f);
            assert_eq!(back.gates, c.gates);
        }
    }
}
