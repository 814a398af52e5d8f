//! Memory hints for loops whose loads are known ahead but land at random places in large
//! buffers (table look-ups): asking for the lines early lets several misses overlap, and huge
//! pages spare a page walk per look-up.

/// Asks the CPU to bring every cache line of `bytes` into the cache. Only a hint: it changes
/// no value and never faults.
#[inline(always)]
pub fn prefetch(bytes: &[u8]) {
    for line in bytes.chunks(64) {
        prefetch_line(line.as_ptr());
    }
}

/// Asks the CPU to bring the cache line where `value` starts into the cache, as [`prefetch`]
/// does for a buffer: for a loop that will read an element of a large array it can name a
/// few iterations ahead.
#[inline(always)]
pub fn prefetch_value<T>(value: &T) {
    prefetch_line((value as *const T).cast());
}

/// PREFETCHT0 of the line holding `at`, a pointer into a live buffer or value.
#[inline(always)]
fn prefetch_line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is SSE, part of the x86_64 baseline; it does not access memory
    // architecturally and cannot fault, and the callers' pointers come from references.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(at.cast())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// An empty buffer with room for `len` bytes, backed where the system allows by transparent
/// huge pages (Linux `madvise(MADV_HUGEPAGE)` before the pages are touched, so they are
/// huge when first written): random look-ups into a buffer of gigabytes then miss the TLB
/// far less often. Elsewhere, or where the kernel says no, an ordinary buffer.
pub fn huge_vec(len: usize) -> Vec<u8> {
    let mut v: Vec<u8> = Vec::with_capacity(len);
    #[cfg(target_os = "linux")]
    if len >= 4 << 20 {
        const HUGE: usize = 2 << 20;
        let start = v.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE);
        let end = (start + len) / HUGE * HUGE;
        if end > aligned {
            // SAFETY: the range lies inside the allocation `v` owns (capacity `len`), is
            // page-aligned, and MADV_HUGEPAGE changes no contents; a failure is only ignored.
            unsafe {
                libc::madvise(
                    aligned as *mut libc::c_void,
                    end - aligned,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    v
}
