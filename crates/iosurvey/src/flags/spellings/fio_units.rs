//! fio's own numbers, as a job file gives them: sizes by fio's unit rules
//! (`kb_base`, where by default `4k` and `4KB` are both 4096 and `4KiB`
//! is 4000), durations with a bare number in seconds, and whole counts.
//! They become plain bytes and durations iosurvey reads one way only.

use std::time::Duration;

/// fio's `kb_base`: how a job file's unit prefixes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KbBase {
    /// `kb_base=1024`, fio's default: `k`, `kb`, `KB` are 1024 and `ki`,
    /// `kib` 1000 (inverted, "for compatibility with old scripts").
    Compat,
    /// `kb_base=1000`: `k`, `kB` are 1000 and `ki`, `KiB` 1024.
    Si,
}

impl KbBase {
    /// The `kb_base` value of a job file.
    pub fn from_value(v: &str) -> Result<KbBase, String> {
        match v.trim() {
            "1024" => Ok(KbBase::Compat),
            "1000" => Ok(KbBase::Si),
            _ => Err(format!("kb_base={v} is neither 1024 nor 1000")),
        }
    }
}

/// A value fio would compute or look up at run time, which iosurvey
/// cannot read ahead of it: an expression, a percentage, zones, an
/// environment variable.
fn unreadable(v: &str) -> Option<&'static str> {
    if v.starts_with('(') {
        Some("an arithmetic expression")
    } else if v.ends_with('%') {
        Some("a percentage of the file")
    } else if v.contains('$') {
        Some("an environment variable")
    } else if v.ends_with(['z', 'Z']) {
        Some("a number of zones")
    } else {
        None
    }
}

/// The whole number at the start of `v` (decimal, or hex after `0x`) and
/// what follows it.
fn number(v: &str) -> Option<(u64, &str)> {
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        return Some((u64::from_str_radix(&hex[..end], 16).ok()?, &hex[end..]));
    }
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    Some((v[..end].parse().ok()?, &v[end..]))
}

/// A quantity of data in bytes, by fio's rules under `base`: the suffix
/// is case-insensitive, a trailing `b` means bytes (`kB` is `k`).
pub fn size(v: &str, base: KbBase) -> Result<u64, String> {
    let v = v.trim();
    if let Some(what) = unreadable(v) {
        return Err(format!(
            "'{v}' is {what}, which iosurvey cannot read ahead of fio"
        ));
    }
    let bad = || {
        format!("'{v}' is not a size fio reads the same way (a whole number and k, m, g, t or p)")
    };
    let (n, unit) = number(v).ok_or_else(bad)?;
    let unit = unit.to_ascii_lowercase();
    let unit = unit.strip_suffix('b').unwrap_or(&unit);
    let (prefix, iec) = match unit.strip_suffix('i') {
        Some(p) => (p, true),
        None => (unit, false),
    };
    let power = match prefix {
        "" if !iec => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return Err(bad()),
    };
    // Under fio's default the prefixes are inverted: k is 1024, ki 1000.
    let binary = match base {
        KbBase::Compat => !iec,
        KbBase::Si => iec,
    };
    let step: u64 = if binary { 1024 } else { 1000 };
    n.checked_mul(step.pow(power))
        .ok_or_else(|| format!("'{v}' is too large"))
}

/// A duration by fio's rules: a bare number is seconds; `d`, `h`, `m`
/// (minutes), `s`/`sec`, `ms`/`msec`, `us`/`usec`, in any case.
pub fn time(v: &str) -> Result<Duration, String> {
    let v = v.trim();
    if let Some(what) = unreadable(v) {
        return Err(format!(
            "'{v}' is {what}, which iosurvey cannot read ahead of fio"
        ));
    }
    let bad = || format!("'{v}' is not a time fio reads (a whole number and d, h, m, s, ms or us)");
    let (n, unit) = number(v).ok_or_else(bad)?;
    let micros: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1_000_000,
        "ms" | "msec" => 1_000,
        "us" | "usec" => 1,
        "m" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        _ => return Err(bad()),
    };
    n.checked_mul(micros)
        .map(Duration::from_micros)
        .ok_or_else(|| format!("'{v}' is too long"))
}

/// A duration as iosurvey's flags take it: whole seconds, milliseconds or
/// microseconds (`60s`, `500ms`, `250us`).
pub fn duration_flag(d: Duration) -> String {
    let us = d.as_micros();
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1_000) {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

/// A whole count (iodepth, numjobs, a percentage, a seed).
pub fn count(v: &str) -> Result<u64, String> {
    let v = v.trim();
    match number(v) {
        Some((n, "")) => Ok(n),
        _ => Err(format!("'{v}' is not a whole number")),
    }
}

/// fio's boolean: 1 or 0 (a bare option is 1).
pub fn boolean(v: Option<&str>) -> Result<bool, String> {
    match v.map(str::trim) {
        None | Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(v) => Err(format!("'{v}' is neither 1 nor 0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_default_k_and_kb_are_1024_and_kib_1000_as_fio_reads_them() {
        let c = KbBase::Compat;
        assert_eq!(size("4k", c), Ok(4096));
        assert_eq!(size("4kb", c), Ok(4096));
        assert_eq!(size("4KB", c), Ok(4096));
        assert_eq!(size("4KiB", c), Ok(4000));
        assert_eq!(size("1m", c), Ok(1 << 20));
        assert_eq!(size("1mi", c), Ok(1_000_000));
        assert_eq!(size("1g", c), Ok(1 << 30));
        assert_eq!(size("4096b", c), Ok(4096));
        assert_eq!(size("512", c), Ok(512));
        assert_eq!(size("0x1000", c), Ok(4096));
    }

    #[test]
    fn with_kb_base_1000_the_prefixes_follow_the_standards() {
        let s = KbBase::Si;
        assert_eq!(size("4k", s), Ok(4000));
        assert_eq!(size("4kB", s), Ok(4000));
        assert_eq!(size("4KiB", s), Ok(4096));
        assert_eq!(size("1Mi", s), Ok(1 << 20));
        assert_eq!(KbBase::from_value("1000"), Ok(KbBase::Si));
        assert!(KbBase::from_value("1001").is_err());
    }

    #[test]
    fn values_fio_computes_at_run_time_are_refused_by_what_they_are() {
        let c = KbBase::Compat;
        assert!(size("50%", c).unwrap_err().contains("percentage"));
        assert!(size("(4k*2)", c).unwrap_err().contains("expression"));
        assert!(size("${SIZE}", c).unwrap_err().contains("environment"));
        assert!(size("4z", c).unwrap_err().contains("zones"));
        assert!(size("4x", c).is_err());
        assert!(size("k", c).is_err());
        assert!(size("1.5k", c).is_err());
        assert!(size("99999999999p", c).unwrap_err().contains("too large"));
    }

    #[test]
    fn a_bare_time_is_seconds_and_m_is_minutes() {
        assert_eq!(time("60"), Ok(Duration::from_secs(60)));
        assert_eq!(time("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(time("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(time("250usec"), Ok(Duration::from_micros(250)));
        assert_eq!(time("1h"), Ok(Duration::from_secs(3600)));
        assert!(time("1y").is_err());
        assert_eq!(duration_flag(Duration::from_secs(120)), "120s");
        assert_eq!(duration_flag(Duration::from_millis(1500)), "1500ms");
        assert_eq!(duration_flag(Duration::from_micros(250)), "250us");
    }

    #[test]
    fn counts_and_booleans() {
        assert_eq!(count("32"), Ok(32));
        assert!(count("32k").is_err());
        assert_eq!(boolean(None), Ok(true));
        assert_eq!(boolean(Some("0")), Ok(false));
        assert!(boolean(Some("2")).is_err());
    }
}
