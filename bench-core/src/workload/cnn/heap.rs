//! The C allocator told to keep the memory a training step frees, for the next step.
//!
//! Every step allocates and frees the same activation tensors (2 MiB each for ResNet-20 at width
//! 16 on 32x32 images, batch 32). glibc's malloc hands a freed block at the top of its heap back
//! to the kernel once more than its trim threshold (128 KiB at first) is free, and serves blocks
//! over its mmap threshold from fresh mappings unmapped on free; the next step then faults every
//! page back in, zeroed by the kernel. Profiled (`perf record` on `syncbench profile --model
//! resnet20 --width 16 --side 32`), the page faults, `brk` and `munmap` took about 15% of the
//! step. Raising both thresholds keeps those pages in the process: the resident size stays at
//! the step's peak, which it reaches every step anyway. Allocation does not touch any value, so
//! the results' bytes do not change.

use std::sync::Once;

/// Largest block glibc serves from its heap rather than from a mapping of its own: 32 MiB, the
/// most `mallopt` accepts on 64-bit (`HEAP_MAX_SIZE / 2`); a larger tensor still gets a mapping.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 32 << 20;

/// Free memory at the heap's top that glibc keeps rather than returns: 1 GiB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: i32 = 1 << 30;

/// Raises glibc's mmap and trim thresholds, once per process (later calls do nothing). Elsewhere
/// (another C library, another system) it does nothing.
pub fn keep_freed_memory() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only sets allocator parameters; glibc takes its own lock for it, and
        // a value it refuses leaves the parameter as it was (the return value, 0, is all it says).
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    });
}
