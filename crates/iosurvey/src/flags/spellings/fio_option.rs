//! The values of fio's options that are more than a number (`rw`,
//! `ioengine`, `bssplit`, `random_distribution`, `verify`, a pair of
//! per-direction values), as iosurvey's flags spell them: one table for
//! the command line's fio names and for job files alike. Each refusal
//! says what fio means and, where there is one, what iosurvey has.

/// fio's `rw` as iosurvey's `--rw`.
pub fn rw(v: &str) -> Result<&'static str, String> {
    if v.contains(':') {
        return Err(
            "an offset modifier after ':' (a gap or a number of I/Os per offset), which iosurvey does not have"
                .into(),
        );
    }
    Ok(match v.trim() {
        "read" => "read",
        "write" => "write",
        "randread" => "randread",
        "randwrite" => "randwrite",
        "randrw" => "randrw",
        "trim" => "trim",
        "randtrim" => "randtrim",
        "rw" | "readwrite" => {
            return Err(
                "fio's sequential mix of reads and writes, which iosurvey does not have (its mix is randrw)"
                    .into(),
            )
        }
        "trimwrite" | "randtrimwrite" => {
            return Err("trims each followed by a write, which iosurvey does not have".into())
        }
        other => return Err(format!("'{other}' is not one of fio's workloads")),
    })
}

/// Whether `--rw` `v` (iosurvey's spelling) is random, where fio's
/// clones and iosurvey's workers do the same thing.
pub fn is_random(rw: &str) -> bool {
    rw.starts_with("rand")
}

/// fio's I/O engine as iosurvey's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// io_uring.
    Uring,
    /// pread/pwrite, one I/O at a time (fio's psync, sync, pvsync).
    Sync,
    /// Linux native AIO, which iosurvey does not have; io_uring is its
    /// asynchronous engine.
    Libaio,
}

impl Engine {
    /// iosurvey's `--engine` value (libaio's nearest: uring).
    pub fn flag(self) -> &'static str {
        match self {
            Engine::Uring | Engine::Libaio => "uring",
            Engine::Sync => "sync",
        }
    }
}

/// fio's `ioengine` value.
pub fn engine(v: &str) -> Result<Engine, String> {
    match v.trim() {
        "io_uring" => Ok(Engine::Uring),
        "psync" | "sync" | "pvsync" | "pvsync2" => Ok(Engine::Sync),
        "libaio" => Ok(Engine::Libaio),
        other => Err(format!(
            "iosurvey has no {other} engine (it has io_uring, and psync/sync as --engine sync)"
        )),
    }
}

/// One value of a per-direction option (`bs=4k,8k` gives reads and writes
/// their own): the value, when every direction given has the same.
pub fn one_direction(v: &str) -> Result<&str, String> {
    let mut parts = v.split(',').map(str::trim);
    let first = parts.next().unwrap_or_default();
    if first.is_empty() || parts.any(|p| p != first) {
        return Err(
            "reads, writes and trims given different values (after ','), which iosurvey does not do"
                .into(),
        );
    }
    Ok(first)
}

/// fio's `bssplit` (`4k/10:64k/50:1m/`, an empty share taking an even part
/// of what is left) as iosurvey's block-size split `SIZE:PCT,SIZE:PCT`
/// (summing to 100), each size written by `size`.
pub fn bssplit(v: &str, size: &dyn Fn(&str) -> Result<String, String>) -> Result<String, String> {
    let v = one_direction(v)?;
    let mut pairs: Vec<(String, Option<u32>)> = Vec::new();
    for item in v.split(':') {
        let (s, pct) = match item.split_once('/') {
            Some((s, p)) if p.trim().is_empty() => (s, None),
            Some((s, p)) => {
                let pct = p
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| format!("'{p}' in '{item}' is not a whole percentage"))?;
                (s, Some(pct))
            }
            None => (item, None),
        };
        pairs.push((size(s.trim())?, pct));
    }
    let given: u32 = pairs.iter().filter_map(|(_, p)| *p).sum();
    let blank = pairs.iter().filter(|(_, p)| p.is_none()).count() as u32;
    if given > 100 || (blank == 0 && given != 100) {
        return Err(format!("its shares add up to {given}%, not 100%"));
    }
    if blank > 0 && !(100 - given).is_multiple_of(blank) {
        return Err(format!(
            "the {}% left does not split evenly over the {blank} sizes without a share: give each its share",
            100 - given
        ));
    }
    let even = (100 - given).checked_div(blank).unwrap_or(0);
    Ok(pairs
        .iter()
        .filter(|(_, p)| *p != Some(0))
        .map(|(s, p)| format!("{s}:{}", p.unwrap_or(even)))
        .collect::<Vec<_>>()
        .join(","))
}

/// fio's `random_distribution` as iosurvey's `--dist`.
pub fn distribution(v: &str) -> Result<String, String> {
    let v = v.trim();
    if v == "random" {
        return Ok("uniform".into());
    }
    let (kind, param) = v.split_once(':').unwrap_or((v, ""));
    match kind {
        "zipf" | "pareto" => {
            // fio's optional second value places the hot spot.
            if param.contains(':') || param.contains(',') {
                return Err(format!(
                    "'{v}' moves or splits the hot spot, which iosurvey does not do"
                ));
            }
            match param.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => Ok(format!("{kind}:{param}")),
                _ => Err(format!("'{v}' needs a positive number after '{kind}:'")),
            }
        }
        _ => Err(format!(
            "the {kind} distribution, which iosurvey does not have (it has random, zipf:THETA and pareto:H)"
        )),
    }
}

/// fio's `verify`: whether iosurvey's `--verify` (a crc32c header in every
/// 4 KiB block, read back after the job) does what it asks.
pub fn verify(v: &str) -> Result<bool, String> {
    match v.trim() {
        "0" | "null" => Ok(false),
        "crc32c" | "crc32c-intel" | "crc32" | "crc16" | "crc7" | "crc64" | "md5" | "sha1"
        | "sha256" | "sha512" | "sha3-224" | "sha3-256" | "sha3-384" | "sha3-512" | "xxhash" => {
            Ok(true)
        }
        other => Err(format!(
            "verify={other} checks a pattern of fio's own; iosurvey's --verify checks a checksummed header (verify=crc32c)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(s: &str) -> Result<String, String> {
        Ok(s.to_string())
    }

    #[test]
    fn fios_workloads_become_iosurveys_or_are_refused_by_what_they_are() {
        assert_eq!(rw("randread"), Ok("randread"));
        assert_eq!(rw("randtrim"), Ok("randtrim"));
        assert!(rw("rw").unwrap_err().contains("sequential mix"));
        assert!(rw("readwrite").unwrap_err().contains("sequential mix"));
        assert!(rw("trimwrite").unwrap_err().contains("followed by a write"));
        assert!(rw("randread:8").unwrap_err().contains("offset modifier"));
        assert!(rw("backwards").is_err());
    }

    #[test]
    fn engines_map_to_uring_and_sync() {
        assert_eq!(engine("io_uring").unwrap().flag(), "uring");
        assert_eq!(engine("psync").unwrap().flag(), "sync");
        assert_eq!(engine("libaio"), Ok(Engine::Libaio));
        assert!(engine("posixaio")
            .unwrap_err()
            .contains("no posixaio engine"));
    }

    #[test]
    fn a_bssplit_becomes_size_percent_pairs_summing_to_100() {
        assert_eq!(bssplit("4k/70:64k/30", &kept).unwrap(), "4k:70,64k:30");
        assert_eq!(
            bssplit("4k/50:64k/:1m/", &kept).unwrap(),
            "4k:50,64k:25,1m:25"
        );
        assert_eq!(bssplit("4k/100:64k/0", &kept).unwrap(), "4k:100");
        assert!(bssplit("4k/70:64k/20", &kept).unwrap_err().contains("90%"));
        assert!(bssplit("4k/50:8k/:16k/:32k/", &kept)
            .unwrap_err()
            .contains("evenly"));
        assert!(bssplit("4k/70:64k/30,8k/100", &kept)
            .unwrap_err()
            .contains("different values"));
        assert!(bssplit("4k/x", &kept).is_err());
    }

    #[test]
    fn distributions_become_dist_values() {
        assert_eq!(distribution("zipf:1.2").unwrap(), "zipf:1.2");
        assert_eq!(distribution("pareto:0.9").unwrap(), "pareto:0.9");
        assert_eq!(distribution("random").unwrap(), "uniform");
        assert!(distribution("normal:10").unwrap_err().contains("normal"));
        assert!(distribution("zipf:1.2:0.5")
            .unwrap_err()
            .contains("hot spot"));
        assert!(distribution("zipf:").is_err());
    }

    #[test]
    fn checksums_verify_and_patterns_are_refused() {
        assert_eq!(verify("crc32c"), Ok(true));
        assert_eq!(verify("md5"), Ok(true));
        assert_eq!(verify("0"), Ok(false));
        assert!(verify("pattern").is_err());
        assert_eq!(one_direction("4k"), Ok("4k"));
        assert_eq!(one_direction("4k,4k"), Ok("4k"));
        assert!(one_direction("4k,8k").is_err());
        assert!(one_direction("4k,").is_err());
    }
}
