//! A fast path for decimal-to-f32 parsing that is exactly as correct as the standard library:
//! Clinger's exact case in f64 (mantissa below 2^53, power of ten at most 22, so one correctly
//! rounded f64 operation), then f64 -> f32, refused (None: the caller uses `str::parse`) when
//! the f64 lands exactly on a midpoint between two f32 values, where rounding twice could
//! differ from rounding once, or outside the normal f32 range.

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The value of eight ASCII digits packed little-endian in `v`, or None if any byte is not a
/// digit (the SWAR reduction of Lemire's fast_float).
fn eight_digits(v: u64) -> Option<u64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    // Every byte in 0x30..=0x39: high nibble 3, and adding 6 keeps it below 0x40.
    if (v & 0xF0F0_F0F0_F0F0_F0F0) != ZEROS
        || (v.wrapping_add(0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) != ZEROS
    {
        return None;
    }
    let mut v = v - ZEROS;
    v = (v * 10) + (v >> 8);
    v = (((v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32)))
        .wrapping_add(((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32))))
        >> 32;
    Some(v)
}

/// `s` parsed as f32 when the fast path is exact, else None.
pub fn fast_f32(s: &[u8]) -> Option<f32> {
    let (neg, mut i) = match s.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let mut mantissa: u64 = 0;
    let mut exp10: i32 = 0;
    let mut any = false;
    // Past this the next step could overflow: such inputs take the slow path.
    const LIMIT: u64 = 1 << 53;
    while i < s.len() && s[i].is_ascii_digit() {
        any = true;
        mantissa = mantissa * 10 + u64::from(s[i] - b'0');
        if mantissa >= LIMIT {
            return None;
        }
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        // Eight fraction digits at a time while they last.
        while i + 8 <= s.len() && mantissa < LIMIT / 100_000_000 {
            let chunk = u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
            let Some(v) = eight_digits(chunk) else { break };
            any = true;
            mantissa = mantissa * 100_000_000 + v;
            exp10 -= 8;
            i += 8;
        }
        while i < s.len() && s[i].is_ascii_digit() {
            any = true;
            mantissa = mantissa * 10 + u64::from(s[i] - b'0');
            if mantissa >= LIMIT {
                return None;
            }
            exp10 -= 1;
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        let eneg = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i32 = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            if e > 10_000 {
                return None;
            }
            e = e * 10 + i32::from(s[i] - b'0');
            i += 1;
        }
        if i == start {
            return None;
        }
        exp10 += if eneg { -e } else { e };
    }
    if i != s.len() {
        return None;
    }
    if mantissa == 0 {
        return Some(if neg { -0.0 } else { 0.0 });
    }
    if mantissa >= LIMIT || exp10.unsigned_abs() > 22 {
        return None;
    }
    let m = mantissa as f64;
    let x = if exp10 >= 0 {
        m * POW10[exp10 as usize]
    } else {
        m / POW10[(-exp10) as usize]
    };
    if !(f64::from(f32::MIN_POSITIVE)..=f64::from(f32::MAX)).contains(&x) {
        return None;
    }
    // The 29 low bits of the f64 fraction are what f64 -> f32 rounds away: exactly half of
    // their range is a midpoint between two f32s.
    if x.to_bits() & ((1 << 29) - 1) == 1 << 28 {
        return None;
    }
    let y = x as f32;
    Some(if neg { -y } else { y })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str) {
        let want: Option<f32> = s.parse().ok();
        if let Some(got) = fast_f32(s.as_bytes()) {
            assert_eq!(Some(got.to_bits()), want.map(f32::to_bits), "{s}");
        }
    }

    #[test]
    fn eight_digits_at_once() {
        let n = |s: &[u8; 8]| eight_digits(u64::from_le_bytes(*s));
        assert_eq!(n(b"12345678"), Some(12_345_678));
        assert_eq!(n(b"00000000"), Some(0));
        assert_eq!(n(b"99999999"), Some(99_999_999));
        assert_eq!(n(b"06494146"), Some(6_494_146));
        assert_eq!(n(b"1234567 "), None);
        assert_eq!(n(b"1234:678"), None);
        assert_eq!(n(b"/2345678"), None);
    }

    #[test]
    fn agrees_with_the_standard_library_where_it_answers() {
        for s in [
            "0",
            "-0",
            "1",
            "+2.5",
            "0.1",
            "0.0001234",
            "123456789",
            "1e10",
            "1.5E-3",
            "3.4028235e38",
            "1e-40",
            "16777217",
            "0.33333334",
            "7.",
            ".5",
            "1e",
            "abc",
            "1.2.3",
            "--1",
            "",
            "0.000000000000000000000000001",
            "99999999999999999999",
        ] {
            check(s);
        }
        assert_eq!(fast_f32(b"0.5"), Some(0.5));
        assert_eq!(fast_f32(b"-12.25"), Some(-12.25));
        assert_eq!(fast_f32(b"abc"), None);
        assert_eq!(fast_f32(b"1e-40"), None, "subnormal: slow path");
        // 16777217 = 2^24 + 1 is a midpoint between two f32s: refused.
        assert_eq!(fast_f32(b"16777217"), None);
    }

    proptest::proptest! {
        #[test]
        fn matches_std_on_random_floats(bits in proptest::prelude::any::<u32>(), prec in 0usize..12) {
            let v = f32::from_bits(bits);
            if v.is_finite() {
                for s in [format!("{v}"), format!("{v:.prec$}"), format!("{v:e}"), format!("{}", v as f64)] {
                    check(&s);
                }
            }
        }

        #[test]
        fn matches_std_on_random_decimals(m in 0u64..100_000_000_000, e in -30i32..30) {
            check(&format!("{m}e{e}"));
            check(&format!("-{m}.{}", m % 1000));
        }
    }
}
