//! Sizes and durations, parsed in one place.
//!
//! `4k`, `4K`, `4KiB` and `4kib` are 4096 bytes; `4KB` and `4kB` are 4000.
//! A bare number is bytes. Durations are `10s`, `2m`, `500ms`, `1h30m` or a
//! bare number of seconds.

use std::time::Duration;

pub use iosurvey_model::units::format_size;

/// A size or duration that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("invalid size '{0}': use a number with an optional unit, e.g. 4k, 4KiB, 4KB, 1m, 2g")]
    Size(String),
    #[error("size '{0}' is too large")]
    SizeOverflow(String),
    #[error("invalid duration '{0}': use e.g. 10s, 2m, 500ms, 1h30m")]
    Duration(String),
}

/// The whole multiples of `bs` just below and above `bytes`, when `bytes`
/// is not one itself: what a bound of whole blocks can be instead.
pub fn blocks_around(bytes: u64, bs: u64) -> Option<(u64, u64)> {
    let below = bytes / bs * bs;
    (below != bytes).then_some((below, below + bs))
}

/// Parses a size in bytes.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') || num.matches('.').count() > 1
    {
        return Err(UnitError::Size(s.to_string()));
    }
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "p" | "pib" => 1 << 50,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "pb" => 1_000_000_000_000_000,
        _ => return Err(UnitError::Size(s.to_string())),
    };
    let overflow = || UnitError::SizeOverflow(s.to_string());
    match num.split_once('.') {
        None => num
            .parse::<u64>()
            .map_err(|_| overflow())?
            .checked_mul(mult)
            .ok_or_else(overflow),
        Some((int, frac)) => {
            // Exact decimal arithmetic: 1.5k is 1536 bytes; fractions of a
            // byte are refused.
            let digits = format!("{int}{frac}");
            let scale = 10u128.pow(frac.len().min(30) as u32);
            let n: u128 = digits.parse().map_err(|_| overflow())?;
            let total = n.checked_mul(u128::from(mult)).ok_or_else(overflow)?;
            if total % scale != 0 {
                return Err(UnitError::Size(s.to_string()));
            }
            u64::try_from(total / scale).map_err(|_| overflow())
        }
    }
}

/// Parses a duration; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(UnitError::Duration(s.to_string()));
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = t.parse().map_err(|_| UnitError::Duration(s.to_string()))?;
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(t).map_err(|_| UnitError::Duration(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn binary_and_decimal_units() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4KB"), Ok(4000));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("8404992"), Ok(8404992));
    }

    #[test]
    fn bad_sizes_are_refused() {
        for bad in [
            "",
            "k",
            "4x",
            "-4k",
            "4.k",
            ".5k",
            "1.2.3k",
            "0.3",
            "99999999999999999999",
            "16777216t",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5"), Ok(Duration::from_secs(5)));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn sizes_format_back() {
        assert_eq!(format_size(4096), "4KiB");
        assert_eq!(format_size(1 << 20), "1MiB");
        assert_eq!(format_size(1000), "1000B");
    }

    proptest! {
        #[test]
        fn size_parser_never_panics(s in "\\PC{0,24}") {
            let _ = parse_size(&s);
        }

        #[test]
        fn duration_parser_never_panics(s in "\\PC{0,24}") {
            let _ = parse_duration(&s);
        }

        #[test]
        fn binary_sizes_round_trip(n in 0u64..1_000_000, unit in 0usize..4) {
            let (suffix, mult) = [("", 1u64), ("k", 1 << 10), ("KiB", 1 << 10), ("m", 1 << 20)][unit];
            prop_assert_eq!(parse_size(&format!("{n}{suffix}")), Ok(n * mult));
        }

        #[test]
        fn decimal_sizes_are_powers_of_ten(n in 0u64..1_000_000) {
            prop_assert_eq!(parse_size(&format!("{n}KB")), Ok(n * 1000));
            prop_assert_eq!(parse_size(&format!("{n}MB")), Ok(n * 1_000_000));
        }
    }
}
