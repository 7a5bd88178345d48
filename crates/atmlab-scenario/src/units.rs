//! Quantities written with their units: `"155.52 Mbit/s"`, `"5 us"`,
//! `"1000 cells"`, `"64 KiB"`.
//!
//! Numbers are parsed as exact decimals (no binary floating point), so
//! `"155.52 Mbit/s"` is exactly 155,520,000 bit/s and `"2.5 ms"` exactly
//! 2,500,000,000 ps. A value that is not a whole number of the base unit
//! (picoseconds, bit/s, bytes, cells) is rounded to the nearest one for time
//! and rate and rejected for bytes and cells. No crate parses this family of
//! units (rates in cells/s, sizes in cells), so this small module does.
//!
//! | kind | units |
//! |---|---|
//! | time | `ps`, `ns`, `us` (or `µs`), `ms`, `s` |
//! | rate | `bit/s`, `kbit/s`, `Mbit/s`, `Gbit/s`, `Tbit/s` (also `bps`, `kbps`, `Mbps`, `Gbps`, `Tbps`), `cells/s` (424 bit each) |
//! | size | `B`/`byte`/`bytes`, `kB` (1000), `KiB` (1024), `MB`, `MiB`; `cells` |
//!
//! `KB` is refused as ambiguous: write `kB` (1000 bytes) or `KiB` (1024).

use atmlab_engine::{BitRate, Duration};

/// An exact non-negative decimal: `mantissa x 10^-scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

fn parse_decimal(s: &str) -> Result<Decimal, String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err("must not be negative".into());
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    let (num, exp) = match s.find(['e', 'E']) {
        Some(i) => {
            let e: i32 = s[i + 1..].parse().map_err(|_| format!("bad exponent in '{s}'"))?;
            (&s[..i], e)
        }
        None => (s, 0),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() {
        return Err("a number is missing".into());
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit() || b == b'_') {
        return Err(format!("'{num}' is not a number"));
    }
    let digits: String = int.chars().chain(frac.chars()).filter(|c| *c != '_').collect();
    let mantissa: u128 =
        if digits.is_empty() { 0 } else { digits.parse().map_err(|_| "number too large".to_string())? };
    let frac_len = frac.chars().filter(|c| *c != '_').count() as i32;
    let mut d = Decimal { mantissa, scale: 0 };
    let shift = frac_len - exp; // value = mantissa * 10^-shift
    if shift >= 0 {
        d.scale = shift as u32;
    } else {
        d.mantissa = mantissa
            .checked_mul(10u128.checked_pow((-shift) as u32).ok_or("number too large")?)
            .ok_or("number too large")?;
    }
    Ok(d)
}

/// `value x factor`, rounded half up; `exact` refuses any rounding.
fn scale(d: Decimal, factor: u128, exact: bool, what: &str) -> Result<u64, String> {
    let num = d.mantissa.checked_mul(factor).ok_or("value too large")?;
    let den = 10u128.checked_pow(d.scale).ok_or("too many decimals")?;
    if exact && num % den != 0 {
        return Err(format!("must be a whole number of {what}"));
    }
    let v = (num + den / 2) / den;
    u64::try_from(v).map_err(|_| "value too large".to_string())
}

fn split(s: &str) -> Result<(&str, &str), String> {
    let s = s.trim();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let exponent = (c == b'e' || c == b'E')
            && i > 0
            && b.get(i + 1).is_some_and(|n| {
                n.is_ascii_digit() || ((*n == b'-' || *n == b'+') && b.get(i + 2).is_some_and(u8::is_ascii_digit))
            });
        if c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'+' | b'-') {
            i += 1;
        } else if exponent {
            i += 2;
        } else {
            break;
        }
    }
    let (num, unit) = (s[..i].trim(), s[i..].trim());
    if num.is_empty() {
        return Err("a number is missing".into());
    }
    Ok((num, unit))
}

/// Parses a time span such as `"5 us"` or `"0.3 s"`.
pub fn duration(s: &str) -> Result<Duration, String> {
    let (num, unit) = split(s)?;
    let factor = match factor_of(TIME_UNITS, unit) {
        Some(f) => f,
        None if unit.is_empty() => return Err("needs a unit (ps, ns, us, ms or s)".to_string()),
        None => return Err(format!("unknown time unit '{unit}' (use ps, ns, us, ms or s)")),
    };
    Ok(Duration::from_ps(scale(parse_decimal(num)?, factor, false, "ps")?))
}

/// Parses a rate such as `"155.52 Mbit/s"` or `"353207.55 cells/s"`.
pub fn rate(s: &str) -> Result<BitRate, String> {
    BitRate::from_bps(rate_bps(s)?).ok_or_else(|| "must be positive".to_string())
}

/// Parses a rate as [`rate`] does, allowing zero: bit/s.
pub fn rate_bps(s: &str) -> Result<u64, String> {
    let (num, unit) = split(s)?;
    let factor = match factor_of(RATE_UNITS, unit) {
        Some(f) => f,
        None if unit.is_empty() => {
            return Err("needs a unit (bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s or cells/s)".to_string());
        }
        None => {
            return Err(format!("unknown rate unit '{unit}' (use bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s or cells/s)"));
        }
    };
    scale(parse_decimal(num)?, factor, false, "bit/s")
}

/// Parses a size in bytes such as `"512 bytes"` or `"64 KiB"`.
pub fn bytes(s: &str) -> Result<u64, String> {
    let (num, unit) = split(s)?;
    let factor = match factor_of(BYTE_UNITS, unit) {
        Some(f) => f,
        None if matches!(unit, "KB" | "K" | "k") => {
            return Err(format!("'{unit}' is ambiguous: write kB (1000 bytes) or KiB (1024 bytes)"));
        }
        None if unit.is_empty() => return Err("needs a unit (bytes, kB, KiB, MB, MiB)".to_string()),
        None => return Err(format!("unknown size unit '{unit}' (use bytes, kB, KiB, MB or MiB)")),
    };
    scale(parse_decimal(num)?, factor, true, "bytes")
}

/// Parses a size in cells such as `"1000 cells"`.
pub fn cells(s: &str) -> Result<u64, String> {
    let (num, unit) = split(s)?;
    match factor_of(CELL_UNITS, unit) {
        Some(f) => scale(parse_decimal(num)?, f, true, "cells"),
        None if unit.is_empty() => Err("needs a unit (cells)".to_string()),
        None => Err(format!("unknown unit '{unit}' for a size in cells (write e.g. '1000 cells')")),
    }
}

/// The time units and their length in picoseconds.
pub const TIME_UNITS: &[(&str, u128)] =
    &[("ps", 1), ("ns", 1_000), ("us", 1_000_000), ("µs", 1_000_000), ("ms", 1_000_000_000), ("s", 1_000_000_000_000)];
/// The rate units and their value in bit/s (a cell is 424 bits).
pub const RATE_UNITS: &[(&str, u128)] = &[
    ("bit/s", 1),
    ("bps", 1),
    ("b/s", 1),
    ("kbit/s", 1_000),
    ("kbps", 1_000),
    ("kb/s", 1_000),
    ("Mbit/s", 1_000_000),
    ("Mbps", 1_000_000),
    ("Mb/s", 1_000_000),
    ("Gbit/s", 1_000_000_000),
    ("Gbps", 1_000_000_000),
    ("Gb/s", 1_000_000_000),
    ("Tbit/s", 1_000_000_000_000),
    ("Tbps", 1_000_000_000_000),
    ("Tb/s", 1_000_000_000_000),
    ("cells/s", 424),
    ("cell/s", 424),
];
/// The size units and their value in bytes (`KB` is refused as ambiguous).
pub const BYTE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("byte", 1),
    ("bytes", 1),
    ("kB", 1_000),
    ("KiB", 1_024),
    ("MB", 1_000_000),
    ("MiB", 1_048_576),
    ("GB", 1_000_000_000),
];
/// The units of a size in cells.
pub const CELL_UNITS: &[(&str, u128)] = &[("cell", 1), ("cells", 1)];

fn factor_of(units: &[(&str, u128)], unit: &str) -> Option<u128> {
    units.iter().find(|(u, _)| *u == unit).map(|(_, f)| *f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_durations_are_exact() {
        assert_eq!(duration("5 us").unwrap(), Duration::from_us(5));
        assert_eq!(duration("2.5ms").unwrap(), Duration::from_ps(2_500_000_000));
        assert_eq!(duration("275 ms").unwrap(), Duration::from_ms(275));
        assert_eq!(duration("1e-6 s").unwrap(), Duration::from_us(1));
        assert_eq!(duration("10 µs").unwrap(), Duration::from_us(10));
    }

    #[test]
    fn test_rates_are_exact() {
        assert_eq!(rate("155.52 Mbit/s").unwrap().bps(), 155_520_000);
        assert_eq!(rate("1594 kbit/s").unwrap().bps(), 1_594_000);
        assert_eq!(rate("37.44 Mbps").unwrap().bps(), 37_440_000);
        assert_eq!(rate("353207.55 cells/s").unwrap().bps(), 149_760_001); // 149,760,001.2 rounded
    }

    #[test]
    fn test_sizes() {
        assert_eq!(bytes("512 bytes").unwrap(), 512);
        assert_eq!(bytes("64 KiB").unwrap(), 65_536);
        assert_eq!(bytes("600 kB").unwrap(), 600_000);
        assert_eq!(bytes("8.704 MB").unwrap(), 8_704_000);
        assert_eq!(cells("1000 cells").unwrap(), 1000);
        assert_eq!(cells("12_000 cells").unwrap(), 12_000);
    }

    #[test]
    fn test_bad_values_say_what_is_wrong() {
        assert!(rate("-5 Mbit/s").unwrap_err().contains("negative"));
        assert!(rate("0 Mbit/s").unwrap_err().contains("positive"));
        assert!(duration("5").unwrap_err().contains("needs a unit"));
        assert!(duration("5 sec").unwrap_err().contains("unknown time unit 'sec'"));
        assert!(bytes("64 KB").unwrap_err().contains("ambiguous"));
        assert!(bytes("1.5 bytes").unwrap_err().contains("whole number"));
        assert!(cells("10 bytes").unwrap_err().contains("cells"));
        assert!(rate("fast").unwrap_err().contains("number is missing"));
        assert!(duration("1.2.3 s").is_err());
    }
}
