//! How the process's allocator keeps freed memory.
//!
//! A run allocates its queues, buffers and the oracle's copies of the
//! records, then frees them all; a sweep does this once per seed. With
//! glibc's defaults, large blocks are mapped and unmapped for each run and
//! the heap top is trimmed after it, so every run touches fresh pages and
//! pays a page fault per 4 KiB (a fifth of a small run's time). Keeping
//! freed memory in the process lets the next run reuse it, and the heap's
//! first 64 MiB are in transparent huge pages where the kernel offers them,
//! so a single run's fresh memory costs a fault per 2 MiB. Nothing a run
//! computes depends on it.

/// Blocks up to this size come from the heap, and this much free memory at
/// the heap's top is kept: 256 MiB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const KEEP: i32 = 256 << 20;

/// Tells the allocator to keep freed memory for reuse (glibc on Linux; a
/// no-op elsewhere). Call once, before any thread starts.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes allocator parameters; it is called
    // before other threads exist.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, KEEP);
        libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
        huge_heap();
    }
}

/// Grows the heap by its top pad at once and asks the kernel for
/// transparent huge pages over it (`MADV_HUGEPAGE`, honoured where
/// `/sys/kernel/mm/transparent_hugepage/enabled` says `madvise` or
/// `always`): a run touching 16 MiB of fresh heap then takes 8 faults of
/// 2 MiB instead of 4,096 of 4 KiB. Memory is committed 2 MiB at a time.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
unsafe fn huge_heap() {
    const HUGE: usize = 2 << 20;
    let before = libc::sbrk(0) as usize;
    if before == usize::MAX {
        return; // no heap to grow (`sbrk` failed)
    }
    // More than the heap's free top: the heap grows by it and the pad.
    // (`black_box`: a block allocated and freed unused may be elided.)
    let block = std::hint::black_box(libc::malloc(4 << 20));
    libc::free(block);
    let after = libc::sbrk(0) as usize;
    if after == usize::MAX {
        return;
    }
    let from = before.next_multiple_of(HUGE);
    let to = after / HUGE * HUGE;
    if to > from {
        libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
    }
}
