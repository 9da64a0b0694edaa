//! How the process's allocator keeps freed memory.
//!
//! A run allocates its queues, buffers and the oracle's copies of the
//! records, then frees them all; a sweep does this once per seed. With
//! glibc's defaults, large blocks are mapped and unmapped for each run and
//! the heap top is trimmed after it, so every run touches fresh pages and
//! pays a page fault per 4 KiB (a fifth of a small run's time). Keeping
//! freed memory in the process lets the next run reuse it. Nothing a run
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
    }
}
