//! fio's option names on `iosurvey run`'s command line (`--iodepth=32`,
//! `--numjobs 4`, `--filename=/dev/x`, `--ioengine=io_uring`), rewritten
//! into iosurvey's flags before clap parses the line: an alias where the
//! meaning is the same, else one line saying what to type. The units stay
//! iosurvey's (`--bs 4KB` is 4000 bytes, so it is refused with a hint).

use super::fio_option::{self, Engine};

/// fio's names that are iosurvey's under another name, the same meaning.
const ALIASES: [(&str, &str); 9] = [
    ("iodepth", "--qd"),
    ("cpus_allowed", "--cpus"),
    ("sqthread_poll_cpu", "--sqpoll-cpu"),
    ("buffer_compress_percentage", "--compressible"),
    ("ramp_time", "--ramp"),
    ("rwmixread", "--mix"),
    ("randseed", "--seed"),
    ("blocksize", "--bs"),
    ("name", "--label"),
];

/// fio's names this stage reads: the aliases and these.
const OTHERS: [&str; 17] = [
    "bssplit",
    "sqthread_poll",
    "hipri",
    "numjobs",
    "readwrite",
    "runtime",
    "time_based",
    "rwmixwrite",
    "rw",
    "bs",
    "filename",
    "direct",
    "buffered",
    "ioengine",
    "group_reporting",
    "rate_iops",
    "random_distribution",
];

/// A size with a decimal unit (`4kb`, `64KB`, `1MB`): what it is in
/// iosurvey (bytes) and what a fio user means by it (`4k`, 4096).
fn decimal_unit(v: &str) -> Option<String> {
    let lower = v.to_ascii_lowercase();
    let digits = lower.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = lower.split_at(digits);
    let n: u64 = n.parse().ok()?;
    let power = ["kb", "mb", "gb", "tb", "pb"]
        .iter()
        .position(|u| *u == unit)? as u32
        + 1;
    let letter = &unit[..1];
    Some(format!(
        "{n}{}B is {} bytes; {n}{letter} is {}",
        letter.to_ascii_uppercase(),
        n.checked_mul(1000u64.pow(power))?,
        n.checked_mul(1024u64.pow(power))?
    ))
}

/// `--bs`'s value, refused when a size in it has a decimal unit: `4KB` is
/// 4000 bytes, which a fio user does not mean (and which direct I/O, in
/// 512-byte sectors, could not do).
fn block_size(v: &str) -> Result<String, String> {
    for token in v.split([',', ':']) {
        if let Some(said) = decimal_unit(token.trim()) {
            let k = token.trim().to_ascii_lowercase();
            let k = k.strip_suffix('b').unwrap_or(&k);
            return Err(format!(
                "--bs {v}: {said}: give --bs {k} (or the bytes as a number)"
            ));
        }
    }
    Ok(v.to_string())
}

/// fio's `filename` (`/a:/b`, `\:` for a colon in a name) as targets.
fn filenames(v: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().unwrap().push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.retain(|f| !f.is_empty());
    out
}

/// fio's filename value as targets (shared with job files).
pub fn targets(v: &str) -> Vec<String> {
    filenames(v)
}

/// The value of `--NAME` among `words` (`--NAME V` or `--NAME=V`), last given.
fn value_of<'a>(words: &'a [String], name: &str) -> Option<&'a str> {
    let flag = format!("--{name}");
    let mut found = None;
    for (i, w) in words.iter().enumerate() {
        if *w == flag {
            found = words.get(i + 1).map(String::as_str);
        } else if let Some(v) = w.strip_prefix(&flag).and_then(|r| r.strip_prefix('=')) {
            found = Some(v);
        }
    }
    found
}

/// Rewrites fio's names on `iosurvey run`'s line into iosurvey's flags;
/// every word after a bare `--` is an operand and stays.
pub fn fio_names(args: Vec<String>) -> Result<Vec<String>, String> {
    if args.get(1).map(String::as_str) != Some("run") {
        return Ok(args);
    }
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let options = &args[2..end];
    let rw = value_of(options, "rw")
        .or_else(|| value_of(options, "readwrite"))
        .unwrap_or("read")
        .to_string();
    let time_based = options
        .iter()
        .any(|w| w == "--time_based" || w == "--time_based=1");
    let mut out = args[..2].to_vec();
    let mut targets = Vec::new();
    let mut i = 2;
    while i < end {
        let word = &args[i];
        i += 1;
        let Some((name, attached)) = word.strip_prefix("--").map(|w| match w.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (w, None),
        }) else {
            out.push(word.clone());
            continue;
        };
        let alias = ALIASES.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
        if alias.is_none() && !OTHERS.contains(&name) {
            out.push(word.clone());
            continue;
        }
        // Flags without a value: fio's switches, and iosurvey's --buffered.
        let switch = matches!(
            name,
            "time_based" | "group_reporting" | "buffered" | "direct" | "sqthread_poll" | "hipri"
        );
        let value = match attached {
            Some(v) => Some(v),
            None if switch => {
                let next = args[i..end]
                    .first()
                    .filter(|v| matches!(v.as_str(), "0" | "1"));
                next.inspect(|_| i += 1).cloned()
            }
            None if i < end => {
                i += 1;
                Some(args[i - 1].clone())
            }
            None => None,
        };
        let Some(v) = value.clone().or_else(|| switch.then(String::new)) else {
            // No value: clap says so of iosurvey's flag.
            out.push(alias.unwrap_or(word).to_string());
            continue;
        };
        let said = |what: &str| format!("--{name} {v}: {what}");
        if let Some(flag) = alias {
            let v = if flag == "--bs" { block_size(&v)? } else { v };
            out.extend([flag.to_string(), v]);
            continue;
        }
        match name {
            "numjobs" if fio_option::is_random(&rw) => out.extend(["--workers".into(), v]),
            "numjobs" => {
                return Err(said(&format!(
                    "fio's {v} jobs each {rw} the whole area from its start; iosurvey's workers share it, one region each: type --workers {v} for that"
                )))
            }
            "runtime" if time_based => out.extend(["--time".into(), v]),
            "runtime" => {
                return Err(said(&format!(
                    "without --time_based fio stops at the end of one pass; iosurvey's --time runs the whole time: type --time {v} (and --bytes SIZE to stop after SIZE)"
                )))
            }
            "time_based" | "group_reporting" => {}
            "rwmixwrite" => match v.parse::<u32>() {
                Ok(w) if w <= 100 => out.extend(["--mix".into(), (100 - w).to_string()]),
                _ => return Err(said("give the percentage of writes, 0 to 100")),
            },
            "rw" | "readwrite" => match v.as_str() {
                "rw" | "readwrite" | "trimwrite" | "randtrimwrite" => {
                    return Err(said(&fio_option::rw(&v).unwrap_err()))
                }
                _ if v.contains(':') => return Err(said(&fio_option::rw(&v).unwrap_err())),
                _ => out.extend(["--rw".into(), v]),
            },
            "bs" => out.extend(["--bs".into(), block_size(&v)?]),
            "filename" => targets.extend(filenames(&v)),
            "direct" => match v.as_str() {
                "" | "1" => {}
                "0" => out.push("--buffered".into()),
                _ => return Err(said("fio's direct is 1 (iosurvey's default) or 0 (--buffered)")),
            },
            "sqthread_poll" | "hipri" => match v.as_str() {
                "" | "1" => out.push(if name == "hipri" { "--hipri" } else { "--sqpoll" }.into()),
                "0" => {}
                _ => return Err(said("give 1 or 0")),
            },
            "buffered" => match v.as_str() {
                "" | "1" => out.push("--buffered".into()),
                "0" => {}
                _ => return Err(said("fio's buffered is 1 (--buffered) or 0 (iosurvey's default)")),
            },
            "ioengine" => match fio_option::engine(&v).map_err(|e| said(&e))? {
                Engine::Libaio => {
                    return Err(said(
                        "iosurvey has no libaio; its asynchronous engine is io_uring: type --engine uring",
                    ))
                }
                e => out.extend(["--engine".into(), e.flag().into()]),
            },
            "rate_iops" => {
                let n = fio_option::one_direction(&v).map_err(|e| said(&e))?;
                out.extend(["--rate-iops".into(), format!("{n}/worker")]);
            }
            "random_distribution" => {
                out.extend(["--dist".into(), fio_option::distribution(&v).map_err(|e| said(&e))?])
            }
            "bssplit" => {
                let split = fio_option::bssplit(&v, &block_size).map_err(|e| {
                    if e.starts_with("--bs") {
                        e
                    } else {
                        said(&e)
                    }
                })?;
                out.extend(["--bs".into(), split]);
            }
            _ => unreachable!("every name of OTHERS is handled"),
        }
    }
    out.extend(args[end..].iter().cloned());
    if !targets.is_empty() {
        if end == args.len() {
            out.push("--".into());
        }
        out.extend(targets);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> Result<String, String> {
        let args = std::iter::once("iosurvey")
            .chain(line.split(' '))
            .map(String::from)
            .collect();
        fio_names(args).map(|a| a[1..].join(" "))
    }

    #[test]
    fn fios_names_with_the_same_meaning_are_aliases() {
        assert_eq!(
            run("run --iodepth=32 --bs=4k --rw=randread --filename=/dev/x").unwrap(),
            "run --qd 32 --bs 4k --rw randread -- /dev/x"
        );
        assert_eq!(
            run("run f --iodepth 8 --rwmixread 70 --randseed 3 --ramp_time 2s").unwrap(),
            "run f --qd 8 --mix 70 --seed 3 --ramp 2s"
        );
        assert_eq!(
            run("run f --readwrite=randrw --rwmixwrite=30").unwrap(),
            "run f --rw randrw --mix 70"
        );
        assert_eq!(
            run("run --filename=/a:/b\\:c --name=t1").unwrap(),
            "run --label t1 -- /a /b:c"
        );
    }

    #[test]
    fn fios_io_uring_and_cpu_options_are_iosurveys() {
        assert_eq!(
            run("run f --sqthread_poll --sqthread_poll_cpu=2 --hipri=1 --cpus_allowed=0-3 --buffer_compress_percentage=50").unwrap(),
            "run f --sqpoll --sqpoll-cpu 2 --hipri --cpus 0-3 --compressible 50"
        );
        assert_eq!(
            run("run f --sqthread_poll=0 --hipri").unwrap(),
            "run f --hipri"
        );
    }

    #[test]
    fn direct_buffered_and_engines() {
        assert_eq!(run("run f --direct=1").unwrap(), "run f");
        assert_eq!(run("run f --direct 1").unwrap(), "run f");
        assert_eq!(run("run f --direct").unwrap(), "run f");
        assert_eq!(run("run f --direct=0").unwrap(), "run f --buffered");
        assert_eq!(run("run f --buffered=1").unwrap(), "run f --buffered");
        assert_eq!(run("run f --buffered").unwrap(), "run f --buffered");
        assert_eq!(
            run("run f --ioengine=io_uring").unwrap(),
            "run f --engine uring"
        );
        assert_eq!(
            run("run f --ioengine=psync").unwrap(),
            "run f --engine sync"
        );
        assert!(run("run f --ioengine=libaio")
            .unwrap_err()
            .contains("type --engine uring"));
        assert!(run("run f --ioengine=mmap")
            .unwrap_err()
            .contains("no mmap engine"));
        assert!(run("run f --direct=2").is_err());
    }

    #[test]
    fn numjobs_is_workers_only_where_they_do_the_same() {
        assert_eq!(
            run("run f --rw randread --numjobs 4").unwrap(),
            "run f --rw randread --workers 4"
        );
        let e = run("run f --numjobs=4").unwrap_err();
        assert!(e.starts_with("--numjobs 4: fio's 4 jobs each read"), "{e}");
        assert!(e.contains("type --workers 4"), "{e}");
    }

    #[test]
    fn runtime_is_time_only_when_time_based() {
        assert_eq!(
            run("run f --runtime=60 --time_based").unwrap(),
            "run f --time 60"
        );
        let e = run("run f --runtime=60").unwrap_err();
        assert!(e.contains("type --time 60"), "{e}");
    }

    #[test]
    fn a_decimal_kilobyte_block_size_is_refused_with_the_bytes() {
        let e = run("run f --bs 4kb").unwrap_err();
        assert_eq!(
            e,
            "--bs 4kb: 4KB is 4000 bytes; 4k is 4096: give --bs 4k (or the bytes as a number)"
        );
        assert!(run("run f --bs=64KB")
            .unwrap_err()
            .contains("64KB is 64000 bytes; 64k is 65536"));
        assert!(run("run f --bs 1MB")
            .unwrap_err()
            .contains("1MB is 1000000 bytes; 1m is 1048576"));
        assert!(run("run f --blocksize 4kb").is_err());
        assert!(run("run f --bs 4k,64kb").is_err());
        assert_eq!(run("run f --bs 4KiB").unwrap(), "run f --bs 4KiB");
        assert_eq!(run("run f --bs 4000").unwrap(), "run f --bs 4000");
    }

    #[test]
    fn fios_sequential_mix_is_refused_and_iosurveys_own_values_stay() {
        assert!(run("run f --rw=rw").unwrap_err().contains("sequential mix"));
        assert!(run("run f --rw readwrite").is_err());
        assert_eq!(run("run f --rw backread").unwrap(), "run f --rw backread");
    }

    #[test]
    fn the_options_of_other_branches_take_their_spellings() {
        assert_eq!(
            run("run f --rate_iops=500 --random_distribution=zipf:1.2 --bssplit=4k/70:64k/30")
                .unwrap(),
            "run f --rate-iops 500/worker --dist zipf:1.2 --bs 4k:70,64k:30"
        );
    }

    #[test]
    fn other_modes_and_operands_are_left_alone() {
        assert_eq!(run("quick --iodepth 4").unwrap(), "quick --iodepth 4");
        assert_eq!(run("run -- --iodepth").unwrap(), "run -- --iodepth");
        assert_eq!(run("run f --qd 4").unwrap(), "run f --qd 4");
    }
}
