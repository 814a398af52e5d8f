//! Coarse-grained parallel garbling (UltraSFE §4.2, "CGP"): a circuit cut into independent
//! partitions that threads garble, and evaluators evaluate, at the same time, then a
//! sequential tail.
//!
//! The compiler ([`Partitions::new`]) finds the partitions itself. It walks the gates in order,
//! joining each gate to the components of the gates whose wires it reads (circuit inputs join
//! nothing: their labels exist before any gate runs). A gate that would join two components
//! into one larger than a share of the circuit ([`PARTS`]), or that reads a wire of the tail,
//! goes to the tail instead. Small components are packed together in circuit order. For
//! BioMatch this gives subtrees of the minimum (16 distances and their 15 minima each) as
//! partitions and the top of the tree as the tail; for MVMul, the products and partial sums
//! of each row. A circuit with no independence (AES) ends up mostly in the tail, which runs
//! with fine-grained threads where its batches are wide enough.
//!
//! Each partition is compiled as a circuit of its own (its external inputs, its gates, copies
//! of the wires others read) and garbled in its own tweak domain (its index), so gate indices
//! may repeat across partitions. Tables are one stream per partition, the tail's last: they
//! do not depend on the thread count or on which thread took which partition.

use crate::{Error, Evaluator, Garbler, Plan, Scheme, TableBuffer, TableReader};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use tessera_circuit::{Circuit, Gate, GateKind};
use tessera_core::Block;

/// The partition size is at most 1/`PARTS` of the circuit's gates (or [`MIN_PART`]).
pub const PARTS: usize = 64;
/// Components are packed into partitions of at least this many gates.
pub const MIN_PART: usize = 1024;

/// Where a partition's input wire, or a circuit output, comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// This circuit input wire.
    Input(u32),
    /// Output `index` of partition `part`.
    Part {
        /// The partition (the tail is the last).
        part: u32,
        /// Its output.
        index: u32,
    },
}

/// One partition: its compiled circuit and where its inputs come from.
#[derive(Clone, Debug)]
struct Part {
    plan: Plan,
    inputs: Vec<Source>,
    and_gates: usize,
}

/// A circuit cut into independent partitions and a tail, each compiled into a [`Plan`].
#[derive(Clone, Debug)]
pub struct Partitions {
    parts: Vec<Part>,
    /// The partitions by decreasing AND-gate count, the order threads take them in.
    order: Vec<usize>,
    /// Each circuit output wire.
    outputs: Vec<Source>,
    num_inputs: usize,
}

/// Union-find over the gates' components, with their sizes.
struct Components {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl Components {
    /// Joins the components of roots `a` and `b` (the smaller under the larger, so paths stay
    /// short); returns the joined one's root.
    fn join(&mut self, a: u32, b: u32) -> u32 {
        if a == b {
            return a;
        }
        let (big, small) = if self.size[a as usize] >= self.size[b as usize] {
            (a, b)
        } else {
            (b, a)
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        big
    }

    fn root(&mut self, mut g: u32) -> u32 {
        while self.parent[g as usize] != g {
            let p = self.parent[g as usize];
            self.parent[g as usize] = self.parent[p as usize];
            g = p;
        }
        g
    }
}

/// A gate's partition while the tail's index is not yet known.
const TAIL: u32 = u32::MAX;
/// Marks a wire that no gate writes (a circuit input).
const NONE: u32 = u32::MAX;

impl Partitions {
    /// Partitions `circuit` (which must be valid) into parts of at most 1/[`PARTS`] of its
    /// gates (or [`MIN_PART`]) and compiles each with `compile`, on `threads` threads (the
    /// partitions are the same whatever the thread count).
    pub fn new(
        circuit: &Circuit,
        threads: usize,
        compile: impl Fn(&Circuit) -> Plan + Sync,
    ) -> Result<Self, Error> {
        let limit = (circuit.gates.len() / PARTS).max(MIN_PART);
        Partitions::with_limit(circuit, (limit, threads), compile)
    }

    /// [`Partitions::new`] with components joined up to `limit` gates (at least 1).
    pub fn with_limit(
        circuit: &Circuit,
        (limit, threads): (usize, usize),
        compile: impl Fn(&Circuit) -> Plan + Sync,
    ) -> Result<Self, Error> {
        circuit.check()?;
        build(circuit, &assign(circuit, limit), threads, compile)
    }

    /// The share of `circuit`'s AND gates (which must be valid) that its independent
    /// partitions hold, the tail's left out, as [`Partitions::new`] would cut it, without
    /// compiling: near 1 for a circuit of independent pieces (MVMul's rows), near 0 for one
    /// with no independence (AES). Zero for a circuit without AND gates or with fewer than
    /// two partitions.
    pub fn independent_share(circuit: &Circuit) -> f64 {
        let limit = (circuit.gates.len() / PARTS).max(MIN_PART);
        let assigned = assign(circuit, limit);
        let tail = assigned.count - 1;
        if tail < 2 {
            return 0.0;
        }
        let (mut parallel, mut all) = (0usize, 0usize);
        for (g, &p) in circuit.gates.iter().zip(&assigned.part) {
            if g.kind == GateKind::And {
                all += 1;
                parallel += usize::from(p as usize != tail);
            }
        }
        if all == 0 {
            0.0
        } else {
            parallel as f64 / all as f64
        }
    }

    /// Number of partitions, the tail included.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether there are no partitions (never: the tail is always one).
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// AND gates per partition, the tail's last.
    pub fn and_gates(&self) -> Vec<usize> {
        self.parts.iter().map(|p| p.and_gates).collect()
    }

    /// The compiled partitions, the tail's last.
    pub fn plans(&self) -> impl Iterator<Item = &Plan> {
        self.parts.iter().map(|p| &p.plan)
    }

    /// Number of input wires.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Partition `k`'s plan and where its input wires come from (the tail is the last; only
    /// the tail reads other partitions' outputs).
    pub fn part(&self, k: usize) -> (&Plan, &[Source]) {
        (&self.parts[k].plan, &self.parts[k].inputs)
    }

    /// Where each circuit output wire comes from.
    pub fn outputs(&self) -> &[Source] {
        &self.outputs
    }

    /// The partitions other than the tail by decreasing AND-gate count.
    pub fn by_size(&self) -> &[usize] {
        &self.order
    }
}

/// Each gate's partition (of `0..count`, the tail last) and the gate that writes each wire
/// ([`NONE`] for inputs).
struct Assigned {
    part: Vec<u32>,
    count: usize,
    producer: Vec<u32>,
}

/// Cuts `circuit` (valid) as [`Partitions::with_limit`] describes: components joined up to
/// `limit` gates, packed into partitions in circuit order, the rest in the tail.
fn assign(circuit: &Circuit, limit: usize) -> Assigned {
    let n = circuit.gates.len();
    let limit = u32::try_from(limit.max(1)).unwrap_or(u32::MAX);
    let mut producer = vec![NONE; circuit.num_wires as usize];
    let mut comps = Components {
        parent: (0..n as u32).collect(),
        size: vec![1; n],
    };
    // Whether each gate is in the tail.
    let mut in_tail = vec![false; n];
    for (i, g) in circuit.gates.iter().enumerate() {
        let mut roots = [NONE; 2];
        let mut tail = false;
        for &k in g.inputs() {
            let p = producer[g.input(k) as usize];
            if p == NONE {
                continue;
            }
            if in_tail[p as usize] {
                tail = true;
            } else {
                roots[k] = comps.root(p);
            }
        }
        let joined = match roots {
            [a, b] if a != NONE && b != NONE && a != b => {
                comps.size[a as usize] + comps.size[b as usize] + 1 > limit
            }
            _ => false,
        };
        if tail || joined {
            in_tail[i] = true;
        } else {
            let mut root = i as u32;
            for r in roots.into_iter().filter(|&r| r != NONE) {
                let r = comps.root(r);
                root = comps.join(root, r);
            }
        }
        producer[g.out as usize] = i as u32;
    }
    // Components in order of their first gate, packed into partitions.
    let mut part_of_root = vec![NONE; n];
    let (mut parts, mut filling) = (0u32, 0u32);
    let mut part = vec![TAIL; n];
    for i in 0..n {
        if in_tail[i] {
            continue;
        }
        let r = comps.root(i as u32) as usize;
        if part_of_root[r] == NONE {
            if filling == 0 || filling >= limit {
                parts += 1;
                filling = 0;
            }
            part_of_root[r] = parts - 1;
            filling += comps.size[r];
        }
        part[i] = part_of_root[r];
    }
    let tail = parts;
    for p in part.iter_mut().filter(|p| **p == TAIL) {
        *p = tail;
    }
    Assigned {
        part,
        count: tail as usize + 1,
        producer,
    }
}

/// Cuts `circuit` into partitions, each a circuit of its own (its external inputs, its gates,
/// and copies of the wires read outside it), and compiles them: this thread builds each
/// partition's circuit in turn and `threads` others compile them as they come (for one
/// thread, this one compiles each as it is built).
fn build(
    circuit: &Circuit,
    cut: &Assigned,
    threads: usize,
    compile: impl Fn(&Circuit) -> Plan + Sync,
) -> Result<Partitions, Error> {
    let mut plans: Vec<Option<Plan>> = Vec::with_capacity(cut.count);
    let shape = if threads <= 1 {
        cut_parts(circuit, cut, |_, sub| {
            plans.push(Some(compile(&sub)));
            Ok(())
        })?
    } else {
        plans.resize_with(cut.count, || None);
        let (jobs, queue) = std::sync::mpsc::sync_channel::<(usize, Circuit)>(threads);
        let queue = Mutex::new(queue);
        let compiled = Mutex::new(plans);
        let shape = std::thread::scope(|s| {
            for _ in 0..threads.min(cut.count) {
                s.spawn(|| {
                    loop {
                        let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
                        let Ok((k, sub)) = job else { return };
                        let plan = compile(&sub);
                        compiled.lock().unwrap_or_else(PoisonError::into_inner)[k] = Some(plan);
                    }
                });
            }
            // The sender is dropped at the end, or on an error, and the workers stop.
            let jobs = jobs;
            cut_parts(circuit, cut, |k, sub| {
                jobs.send((k, sub))
                    .map_err(|_| Error::Inputs("a compiling thread stopped".into()))
            })
        })?;
        plans = compiled
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        shape
    };
    let parts = plans
        .into_iter()
        .zip(shape.parts)
        .map(|(plan, (inputs, and_gates))| {
            let plan = plan.ok_or_else(|| Error::Inputs("a partition was not compiled".into()))?;
            Ok(Part {
                plan,
                inputs,
                and_gates,
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut order: Vec<usize> = (0..parts.len().saturating_sub(1)).collect();
    order.sort_by_key(|&p| std::cmp::Reverse(parts[p].and_gates));
    Ok(Partitions {
        parts,
        order,
        outputs: shape.outputs,
        num_inputs: circuit.num_input_wires() as usize,
    })
}

/// What [`cut_parts`] finds besides the partitions' circuits: each partition's input sources
/// and AND-gate count, and the circuit outputs' sources.
struct Shape {
    parts: Vec<(Vec<Source>, usize)>,
    outputs: Vec<Source>,
}

/// Builds each partition's circuit of `circuit` as `cut` says, in order, and hands it to
/// `each(k, circuit)`.
fn cut_parts(
    circuit: &Circuit,
    &Assigned {
        ref part,
        count,
        ref producer,
    }: &Assigned,
    mut each: impl FnMut(usize, Circuit) -> Result<(), Error>,
) -> Result<Shape, Error> {
    let out_start = circuit.output_start() as usize;
    // Wires read outside the partition that writes them, in the order first needed.
    let mut exported: Vec<Vec<u32>> = vec![Vec::new(); count];
    let mut export_index = vec![NONE; circuit.num_wires as usize];
    let mut export = |w: usize, exported: &mut Vec<Vec<u32>>| {
        let p = part[producer[w] as usize] as usize;
        if export_index[w] == NONE {
            export_index[w] = exported[p].len() as u32;
            exported[p].push(w as u32);
        }
        Source::Part {
            part: p as u32,
            index: export_index[w],
        }
    };
    let mut gates: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (i, g) in circuit.gates.iter().enumerate() {
        gates[part[i] as usize].push(i);
        for &k in g.inputs() {
            let w = g.input(k) as usize;
            let p = producer[w];
            if p != NONE && part[p as usize] != part[i] {
                export(w, &mut exported);
            }
        }
    }
    let outputs: Vec<Source> = (out_start..circuit.num_wires as usize)
        .map(|w| export(w, &mut exported))
        .collect();
    let mut local = vec![NONE; circuit.num_wires as usize];
    let mut parts = Vec::with_capacity(count);
    for (p, gates) in gates.iter().enumerate() {
        let mut inputs = Vec::new();
        let mut local_gates = Vec::with_capacity(gates.len() + exported[p].len());
        let mut touched = Vec::new();
        // External inputs first (wires 0..), in the order read.
        for &i in gates {
            let g = circuit.gates[i];
            for &k in g.inputs() {
                let w = g.input(k) as usize;
                let q = producer[w];
                if (q == NONE || part[q as usize] as usize != p) && local[w] == NONE {
                    local[w] = inputs.len() as u32;
                    touched.push(w);
                    inputs.push(if q == NONE {
                        Source::Input(w as u32)
                    } else {
                        Source::Part {
                            part: part[q as usize],
                            index: export_index[w],
                        }
                    });
                }
            }
        }
        let mut next = inputs.len() as u32;
        let mut and_gates = 0;
        for &i in gates {
            let g = circuit.gates[i];
            let wire = |w: u32| local[w as usize];
            let (a, b) = match g.kind {
                GateKind::Eq => (g.a, 0),
                GateKind::Inv | GateKind::Eqw => (wire(g.a), 0),
                GateKind::Xor | GateKind::And => (wire(g.a), wire(g.b)),
            };
            and_gates += usize::from(g.kind == GateKind::And);
            local[g.out as usize] = next;
            touched.push(g.out as usize);
            local_gates.push(Gate {
                kind: g.kind,
                a,
                b,
                out: next,
            });
            next += 1;
        }
        for &w in &exported[p] {
            local_gates.push(Gate {
                kind: GateKind::Eqw,
                a: local[w as usize],
                b: 0,
                out: next,
            });
            next += 1;
        }
        for w in touched {
            local[w] = NONE;
        }
        let sub = Circuit {
            num_wires: next,
            inputs: vec![inputs.len() as u32],
            outputs: vec![exported[p].len() as u32],
            gates: local_gates,
        };
        sub.check()?;
        each(p, sub)?;
        parts.push((inputs, and_gates));
    }
    Ok(Shape { parts, outputs })
}

/// Gathers the labels of `sources` from the circuit's input labels `inputs` and the finished
/// partitions' output labels `outs` into `dst`.
///
/// # Panics
/// If a source is out of range of `inputs` or `outs`.
pub fn gather<L: Copy>(sources: &[Source], inputs: &[L], outs: &[Vec<L>], dst: &mut Vec<L>) {
    dst.clear();
    dst.extend(sources.iter().map(|s| match *s {
        Source::Input(w) => inputs[w as usize],
        Source::Part { part, index } => outs[part as usize][index as usize],
    }));
}

/// Checks that `inputs` labels fit `p`'s circuit.
pub(crate) fn check(p: &Partitions, inputs: usize) -> Result<(), Error> {
    if inputs != p.num_inputs {
        return Err(Error::Inputs(format!(
            "the circuit has {} input wires, got {inputs} labels",
            p.num_inputs
        )));
    }
    Ok(())
}

fn check_streams(p: &Partitions, tables: usize) -> Result<(), Error> {
    if tables != p.parts.len() {
        return Err(Error::Inputs(format!(
            "{} partitions need as many table streams, got {tables}",
            p.parts.len()
        )));
    }
    Ok(())
}

/// Runs the partitions other than the tail on the threads of `workers` (the first on this
/// thread), each taking the next in `order`: `run(worker, part, outputs)` runs one. This
/// thread calls `done(k)` for the partitions k in index order, each as soon as it and every
/// partition before it have run: after each partition it runs itself, and as the others
/// report theirs once none is left to take.
fn run_parts<W: Send, L: Send>(
    (workers, order): (&mut [W], &[usize]),
    outs: &mut [Vec<L>],
    run: impl Fn(&mut W, usize, &mut Vec<L>) -> Result<(), Error> + Sync,
    mut done: impl FnMut(usize) -> Result<(), Error>,
) -> Result<(), Error> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<&mut Vec<L>>> = outs.iter_mut().map(Mutex::new).collect();
    let take = || order.get(next.fetch_add(1, Ordering::Relaxed)).copied();
    let run_one = |w: &mut W, part: usize| {
        let mut out = slots[part].lock().unwrap_or_else(PoisonError::into_inner);
        run(w, part, &mut out)
    };
    let (first, rest) = workers.split_first_mut().ok_or(Error::Inputs(
        "coarse-grained garbling needs at least one thread".into(),
    ))?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let handles: Vec<_> = rest
            .iter_mut()
            .map(|w| {
                let tx = tx.clone();
                s.spawn(move || -> Result<(), Error> {
                    while let Some(part) = take() {
                        run_one(w, part)?;
                        // A closed channel only means this thread's report is not awaited.
                        let _ = tx.send(part);
                    }
                    Ok(())
                })
            })
            .collect();
        drop(tx);
        let mut ran = vec![false; slots.len()];
        let mut passed = 0;
        let mut mine = Ok(());
        while passed < ran.len() {
            match take() {
                Some(part) => {
                    mine = run_one(first, part);
                    ran[part] = mine.is_ok();
                }
                None => match rx.recv() {
                    Ok(part) => ran[part] = true,
                    // Every other thread stopped, one of them short of its partitions.
                    Err(_) => break,
                },
            }
            while let Ok(part) = rx.try_recv() {
                ran[part] = true;
            }
            while mine.is_ok() && ran.get(passed) == Some(&true) {
                mine = done(passed);
                passed += 1;
            }
            if mine.is_err() {
                // Stop the others after their current partition.
                next.store(order.len(), Ordering::Relaxed);
                break;
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .fold(mine, Result::and)
    })
}

/// One thread's engine and input buffer.
struct Worker<E, L> {
    engine: E,
    inputs: Vec<L>,
}

/// The engines that run [`Partitions`]: one per thread, and one (fine-grained on every
/// thread) for the tail, with the partitions' outputs.
struct Team<E, L> {
    workers: Vec<Worker<E, L>>,
    tail: E,
    outs: Vec<Vec<L>>,
    outputs: Vec<L>,
}

impl<E: Send, L: Copy + Send + Sync> Team<E, L> {
    /// `threads` workers (at least one) with engines from `make`, and the tail's engine.
    fn new(threads: usize, make: impl Fn() -> E, tail: E) -> Self {
        Team {
            workers: (0..threads.max(1))
                .map(|_| Worker {
                    engine: make(),
                    inputs: Vec::new(),
                })
                .collect(),
            tail,
            outs: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// Runs every partition of `p` on the circuit's input labels `inputs`, the tail last:
    /// `step(engine, k, plan, labels, out)` runs partition k on its input labels, writing its
    /// output labels to `out`. Returns the circuit's output labels.
    fn run(
        &mut self,
        p: &Partitions,
        inputs: &[L],
        step: impl Fn(&mut E, usize, &Plan, &[L], &mut Vec<L>) -> Result<(), Error> + Sync,
    ) -> Result<&[L], Error> {
        self.run_in((p, &p.order), inputs, step, |_| Ok(()))
    }

    /// [`Team::run`] with the partitions taken in `order`, calling `done(k)` on this thread
    /// for each partition k but the tail, in index order, once it and those before it have run
    /// ([`run_parts`]).
    fn run_in(
        &mut self,
        (p, order): (&Partitions, &[usize]),
        inputs: &[L],
        step: impl Fn(&mut E, usize, &Plan, &[L], &mut Vec<L>) -> Result<(), Error> + Sync,
        done: impl FnMut(usize) -> Result<(), Error>,
    ) -> Result<&[L], Error> {
        check(p, inputs.len())?;
        self.outs.resize_with(p.parts.len(), Vec::new);
        let last = p.parts.len() - 1;
        let workers = (&mut self.workers[..], order);
        let run = |w: &mut Worker<E, L>, k: usize, out: &mut Vec<L>| {
            let part = &p.parts[k];
            gather(&part.inputs, inputs, &[], &mut w.inputs);
            step(&mut w.engine, k, &part.plan, &w.inputs, out)
        };
        run_parts(workers, &mut self.outs[..last], run, done)?;
        let buf = &mut self.workers[0].inputs;
        let tail = |plan: &Plan, labels: &[L], out: &mut Vec<L>| {
            step(&mut self.tail, last, plan, labels, out)
        };
        run_tail(p, inputs, &mut self.outs, (buf, &mut self.outputs), tail)?;
        Ok(&self.outputs)
    }
}

/// Runs the tail of `p` once every other partition has its outputs in `outs`: gathers its
/// input labels from the circuit's `inputs` and `outs` into `buf`, runs `step(plan, labels,
/// out)` on them with the tail's `out`, and gathers the circuit's output labels into
/// `outputs`.
pub(crate) fn run_tail<L: Copy>(
    p: &Partitions,
    inputs: &[L],
    outs: &mut [Vec<L>],
    (buf, outputs): (&mut Vec<L>, &mut Vec<L>),
    step: impl FnOnce(&Plan, &[L], &mut Vec<L>) -> Result<(), Error>,
) -> Result<(), Error> {
    let last = p.parts.len() - 1;
    let (done, tail_out) = outs.split_at_mut(last);
    let tail = &p.parts[last];
    gather(&tail.inputs, inputs, done, buf);
    step(&tail.plan, buf, &mut tail_out[0])?;
    gather(&p.outputs, inputs, outs, outputs);
    Ok(())
}

/// Garbles [`Partitions`] with scheme `S` on several threads (UltraSFE §4.2).
pub struct CgpGarbler<S: Scheme> {
    team: Team<Garbler<S>, S::Wire>,
}

impl<S: Scheme> CgpGarbler<S> {
    /// A garbler on `threads` threads (at least one); the tail uses them all, fine-grained.
    pub fn new(scheme: S, threads: usize) -> Self {
        let tail = Garbler::with_threads(scheme.clone(), threads);
        CgpGarbler {
            team: Team::new(threads, || Garbler::new(scheme.clone()), tail),
        }
    }

    /// Garbles `p` with input wires `inputs` under `secret`: partition k's tables go to
    /// `tables[k]` (cleared first). Returns the output wires.
    pub fn garble(
        &mut self,
        p: &Partitions,
        secret: &S::Secret,
        inputs: &[S::Wire],
        tables: &mut [TableBuffer],
    ) -> Result<&[S::Wire], Error> {
        let order = (p, &p.order[..]);
        self.garble_in(order, (secret, inputs), tables, |_| Ok(()))
    }

    /// [`CgpGarbler::garble`] passing each partition's tables to `send` on this thread, in
    /// index order, the tail's last, each as soon as it and every partition before it are
    /// garbled: the first streams go out while the threads garble later partitions. The
    /// threads take the partitions in index order for it, not largest first.
    pub fn garble_streaming(
        &mut self,
        p: &Partitions,
        (secret, inputs): (&S::Secret, &[S::Wire]),
        tables: &mut [TableBuffer],
        send: impl FnMut(&[Block]) -> Result<(), Error>,
    ) -> Result<&[S::Wire], Error> {
        let in_index: Vec<usize> = (0..p.len() - 1).collect();
        self.garble_in((p, &in_index), (secret, inputs), tables, send)
    }

    /// Garbles `p`, the threads taking the partitions in `order`; `send` as in
    /// [`CgpGarbler::garble_streaming`].
    fn garble_in(
        &mut self,
        (p, order): (&Partitions, &[usize]),
        (secret, inputs): (&S::Secret, &[S::Wire]),
        tables: &mut [TableBuffer],
        mut send: impl FnMut(&[Block]) -> Result<(), Error>,
    ) -> Result<&[S::Wire], Error> {
        check_streams(p, tables.len())?;
        let sinks: Vec<Mutex<&mut TableBuffer>> = tables.iter_mut().map(Mutex::new).collect();
        let mut send_part = |k: usize| {
            let sink = sinks[k].lock().unwrap_or_else(PoisonError::into_inner);
            send(sink.as_slice())
        };
        let step = |g: &mut Garbler<S>,
                    k: usize,
                    plan: &Plan,
                    labels: &[S::Wire],
                    out: &mut Vec<S::Wire>| {
            let mut sink = sinks[k].lock().unwrap_or_else(PoisonError::into_inner);
            sink.clear();
            let o = g.garble_in(plan, k as u64, secret, labels, &mut **sink)?;
            out.clear();
            out.extend_from_slice(o);
            Ok(())
        };
        let outputs = self.team.run_in((p, order), inputs, step, &mut send_part)?;
        send_part(p.len() - 1)?;
        Ok(outputs)
    }
}

/// Evaluates [`Partitions`] garbled with scheme `S` on several threads.
pub struct CgpEvaluator<S: Scheme> {
    team: Team<Evaluator<S>, Block>,
}

impl<S: Scheme> CgpEvaluator<S> {
    /// An evaluator on `threads` threads (at least one).
    pub fn new(scheme: S, threads: usize) -> Self {
        let tail = Evaluator::with_threads(scheme.clone(), threads);
        CgpEvaluator {
            team: Team::new(threads, || Evaluator::new(scheme.clone()), tail),
        }
    }

    /// Evaluates `p` on the active input labels `inputs` with partition k's tables
    /// `tables[k]`. Returns the active output labels.
    pub fn evaluate(
        &mut self,
        p: &Partitions,
        inputs: &[Block],
        tables: &[TableBuffer],
    ) -> Result<&[Block], Error> {
        check_streams(p, tables.len())?;
        self.team.run(p, inputs, |e, k, plan, labels, out| {
            let mut source = TableReader::new(tables[k].as_slice());
            let o = e.evaluate_in(plan, k as u64, labels, &mut source)?;
            out.clear();
            out.extend_from_slice(o);
            Ok(())
        })
    }
}
