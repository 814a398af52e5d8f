//! When a party's local work spreads over threads: only when the party runs on a rayon pool
//! of its own with several threads (`ThreadPool::install`, as `--threads N` and `bench mpc`
//! give it), and only for work that pays for handing it to them. A party's thread that is no
//! pool's worker keeps its work: handing it to the global pool made each of two parties in one
//! process (`tessera bench triples`) wait for workers its peer was using, and Boolean triples
//! ran at two thirds of their sequential rate.

/// Whether `work` units (the caller's measure) spread over the current pool's threads: at
/// least `at_least` of them, on a worker of a pool of more than one thread.
pub fn spreads(work: usize, at_least: usize) -> bool {
    work >= at_least && rayon::current_thread_index().is_some() && rayon::current_num_threads() > 1
}

/// The fewest of `items` per rayon task (`IndexedParallelIterator::with_min_len`): one, or
/// all of them in one task run on the calling thread unless [`spreads`] says otherwise.
pub fn min_len(items: usize, work: usize, at_least: usize) -> usize {
    if spreads(work, at_least) {
        1
    } else {
        items.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_worker_of_a_pool_of_several_threads_spreads() {
        assert!(!spreads(1 << 20, 1), "a thread of no pool keeps its work");
        let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build();
        let (one, two) = (pool(1).unwrap(), pool(2).unwrap());
        assert!(!one.install(|| spreads(1 << 20, 1)));
        assert!(two.install(|| spreads(1 << 20, 1 << 20)));
        assert!(!two.install(|| spreads((1 << 20) - 1, 1 << 20)));
        assert_eq!(two.install(|| min_len(7, 8, 8)), 1);
        assert_eq!(min_len(7, 8, 8), 7);
        assert_eq!(min_len(0, 8, 8), 1);
    }
}
