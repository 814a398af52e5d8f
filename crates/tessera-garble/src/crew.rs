//! Threads that garble or evaluate one batch together (fine-grained parallel garbling, FGP:
//! UltraSFE, Buescher and Katzenbeisser, USENIX Security 2015, §4): the calling thread runs the free
//! operations, then hands each batch out in contiguous shares in circuit order, works on the
//! first share itself and waits for the others. Workers are started once per run and wait
//! for the next batch spinning briefly, then yielding, so a batch of a few dozen gates is
//! worth sharing without a system call per batch.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};

/// Gates per thread below which a batch is not shared further. Measured with `tessera bench
/// garble --threads 1,2` on 2 cores: with 16-gate shares two threads ran AES-128 and the
/// 64-wide level circuit at 0.3 to 0.5 times one thread's speed, since the calling thread's
/// serial work per batch (scattering the shares' outputs, moving their tables) and the
/// synchronisation outweigh the halved AES work.
const MIN_SHARE: usize = 256;

/// Spins before a waiting thread starts yielding its core.
const SPINS: u32 = 1 << 12;

/// A batch of gates `gates` (XOR gates if `xor`) split among `active` threads, in units of
/// `grain` gates (a scheme's [`crate::Scheme::TABLE_GRAIN`], so the shares' tables
/// concatenate to the batch's).
#[derive(Clone, Debug, Default)]
pub(crate) struct Share {
    pub xor: bool,
    pub gates: Range<usize>,
    active: usize,
    grain: usize,
}

impl Share {
    /// `gates` shared among as many of `threads` threads as get at least [`MIN_SHARE`] gates,
    /// in units of `grain`.
    fn new(xor: bool, gates: Range<usize>, grain: usize, threads: usize) -> Share {
        let grain = grain.max(1);
        let units = gates.len().div_ceil(grain);
        let active = (gates.len() / MIN_SHARE)
            .clamp(1, threads)
            .min(units.max(1));
        Share {
            xor,
            gates,
            active,
            grain,
        }
    }

    /// Whether more than one thread works on it (otherwise the calling thread runs it alone).
    pub(crate) fn is_shared(&self) -> bool {
        self.active > 1
    }

    /// Thread `t`'s gates: contiguous, in order, possibly empty.
    pub(crate) fn range(&self, t: usize) -> Range<usize> {
        let n = self.gates.len();
        let units = n.div_ceil(self.grain);
        let edge = |t: usize| (units * t / self.active * self.grain).min(n);
        let (lo, hi) = if t < self.active {
            (edge(t), edge(t + 1))
        } else {
            (n, n)
        };
        self.gates.start + lo..self.gates.start + hi
    }
}

/// Gates in shared batches below which a run stays on the calling thread: starting the
/// workers (about 25 µs a thread on an AMD EPYC Zen 5) and handing out batches then costs more
/// than sharing saves. BioMatch's CGP tail (8064 AND gates, 390 batches) garbled with the prp
/// scheme in 41 µs on one thread and 120 µs on two.
const WORTH_STARTING: usize = 1 << 15;

/// How many of `threads` threads to start for a plan whose batches have `batches` gates each
/// (in units of `grain`): as many as share its widest batch, or 1 where no batch is wide
/// enough to share or the shared batches hold fewer than [`WORTH_STARTING`] gates.
pub(crate) fn useful_threads(
    batches: impl Iterator<Item = usize>,
    grain: usize,
    threads: usize,
) -> usize {
    if threads <= 1 {
        // Nothing to weigh: a garbling on one thread does not walk its batches for this.
        return 1;
    }
    let (mut shared, mut most) = (0, 1);
    for gates in batches {
        let active = Share::new(false, 0..gates, grain, threads).active;
        if active > 1 {
            shared += gates;
            most = most.max(active);
        }
    }
    if shared < WORTH_STARTING { 1 } else { most }
}

/// What the workers and the calling thread share.
struct State {
    job: RwLock<Share>,
    /// Bumped once per batch handed out (and once to stop).
    epoch: AtomicUsize,
    /// Workers done with the current batch.
    done: AtomicUsize,
    stop: AtomicBool,
    /// Set if a worker panicked, so the caller stops waiting for it.
    failed: AtomicBool,
}

/// Waits until `ready()`, spinning, then yielding.
fn wait(mut ready: impl FnMut() -> bool) {
    let mut spins = 0;
    while !ready() {
        if spins < SPINS {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Marks the run failed if a worker unwinds.
struct PanicFlag<'a>(&'a AtomicBool);

impl Drop for PanicFlag<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

/// The calling thread's handle on its workers during [`Crew::run`].
pub(crate) struct Crew<'a, S> {
    state: &'a State,
    threads: usize,
    scheme: S,
}

impl<S: Clone + Send> Crew<'_, S> {
    /// Runs `main` with `threads − 1` workers beside the calling thread, each with its own
    /// clone of `scheme`; `work(scheme, t, share)` does worker t's part of a batch.
    pub(crate) fn run<R>(
        threads: usize,
        scheme: &S,
        work: impl Fn(&mut S, usize, &Share) + Sync,
        main: impl FnOnce(&mut Crew<'_, S>) -> R,
    ) -> R {
        let state = State {
            job: RwLock::new(Share::default()),
            epoch: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            failed: AtomicBool::new(false),
        };
        std::thread::scope(|scope| {
            for t in 1..threads {
                let (state, work, mut scheme) = (&state, &work, scheme.clone());
                scope.spawn(move || {
                    let _flag = PanicFlag(&state.failed);
                    let mut seen = 0;
                    loop {
                        wait(|| state.epoch.load(Ordering::Acquire) != seen);
                        seen = state.epoch.load(Ordering::Acquire);
                        if state.stop.load(Ordering::Acquire) {
                            return;
                        }
                        let job = state.job.read().unwrap_or_else(PoisonError::into_inner);
                        work(&mut scheme, t, &job);
                        drop(job);
                        state.done.fetch_add(1, Ordering::AcqRel);
                    }
                });
            }
            let mut crew = Crew {
                state: &state,
                threads,
                scheme: scheme.clone(),
            };
            let result = main(&mut crew);
            state.stop.store(true, Ordering::Release);
            state.epoch.fetch_add(1, Ordering::AcqRel);
            result
        })
    }

    /// The calling thread's scheme, for a batch it runs alone (not [`Share::is_shared`]).
    pub(crate) fn scheme(&mut self) -> &mut S {
        &mut self.scheme
    }

    /// How `gates` are shared among this crew's threads ([`Share::new`]).
    pub(crate) fn share(&self, xor: bool, gates: Range<usize>, grain: usize) -> Share {
        Share::new(xor, gates, grain, self.threads)
    }

    /// Runs `share` on all threads and returns when every share is done: the workers run
    /// `work` on theirs, the calling thread `own(scheme)`, its share 0, which it may write
    /// where the caller wants it without a copy.
    ///
    /// # Panics
    /// If a worker panicked (a bug: the work checks nothing a peer supplies).
    pub(crate) fn batch(&mut self, share: &Share, own: impl FnOnce(&mut S)) {
        let helpers = self.threads - 1;
        if share.active > 1 {
            *self
                .state
                .job
                .write()
                .unwrap_or_else(PoisonError::into_inner) = share.clone();
            self.state.done.store(0, Ordering::Release);
            self.state.epoch.fetch_add(1, Ordering::AcqRel);
        }
        own(&mut self.scheme);
        if share.active > 1 {
            wait(|| {
                let failed = self.state.failed.load(Ordering::Acquire);
                assert!(!failed, "a garbling thread panicked");
                self.state.done.load(Ordering::Acquire) == helpers
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads start for a plan only where its shared batches hold enough gates.
    #[test]
    fn threads_start_only_for_enough_shared_gates() {
        let wide = WORTH_STARTING / 4;
        assert_eq!(useful_threads([wide; 3].into_iter(), 1, 4), 1);
        assert_eq!(useful_threads([wide; 4].into_iter(), 1, 4), 4);
        assert_eq!(useful_threads([wide; 4].into_iter(), 1, 1), 1);
        // Narrow batches are not shared and do not count.
        let narrow = std::iter::repeat_n(MIN_SHARE, 1 << 10);
        assert_eq!(useful_threads(narrow.chain([wide; 3]), 1, 4), 1);
        assert_eq!(useful_threads([2 * MIN_SHARE; 64].into_iter(), 1, 4), 2);
    }

    /// Shares cover the batch in order, each a multiple of the grain but the last.
    #[test]
    fn shares_tile_the_batch_in_order() {
        for threads in [1, 2, 3, 7, 16] {
            for n in [0, 1, 15, 255, 256, 513, 1000, 1100, 4096] {
                for grain in [1, 128] {
                    let s = Share::new(false, 10..10 + n, grain, threads);
                    let mut at = 10;
                    for t in 0..threads {
                        let r = s.range(t);
                        assert_eq!(r.start, at, "{threads} {n} {grain} {t}");
                        if r.end < 10 + n {
                            assert_eq!((r.end - 10) % grain, 0);
                        }
                        at = r.end;
                    }
                    assert_eq!(at, 10 + n);
                }
            }
        }
    }
}
