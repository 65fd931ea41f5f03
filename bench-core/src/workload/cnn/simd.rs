//! The kernels' own loops (im2col, col2im, im2row, batch norm) compiled a second time for AVX2,
//! chosen at run time where the CPU has it.
//!
//! The crate is built for the x86-64 baseline (SSE2), so those loops would run four floats to an
//! instruction; AVX2 runs eight. The level in force is [`super::cpu_level`]'s (a test forces each). The loops are copies, elementwise sums and products and sums in a fixed
//! order: the compiler vectorises only what keeps each result's order (it never reorders a
//! floating-point sum, nor fuses a multiply and an add without being asked, and AVX2 is asked
//! for without FMA), so both versions give the same bits (tests compare them bit for bit, and
//! `make reproduce-all` reads the same bytes either way).

/// Defines `fn $name(args) -> ret` running `$body(args)`, compiled for AVX2 where the level in
/// force allows it ([`super::cpu_level`], checked at every call: a cached flag) and for the
/// baseline elsewhere. `$body` must be
/// `#[inline(always)]` (so is each of our helpers its loops call; the standard library's
/// iterator adapters and closures are left to the compiler's inlining, and `fill` and
/// `copy_from_slice` stay calls to the C library's memset and memcpy), so that the AVX2 copy
/// really is compiled for AVX2. The bits do not depend on which copy runs; only the speed
/// does.
macro_rules! avx2_or_baseline {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $body:path) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                if super::cpu_level::avx2() {
                    // SAFETY: the level in force never exceeds the CPU's, so it has AVX2.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

pub(crate) use avx2_or_baseline;
