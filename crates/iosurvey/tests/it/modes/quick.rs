//! `iosurvey quick`'s profiles and its card (issue 32): the profiles
//! CrystalDiskMark and KDiskMark offer, named on the card and in the JSON,
//! a card that fits 80 columns, and the filesystem, mount and device under
//! the directory named in both.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// `iosurvey quick DIR --profile PROFILE`, short, with its JSON report.
fn quick(dir: &Path, profile: &str) -> (String, Value) {
    let json = dir.join("quick.json");
    let out = iosurvey(&[
        "quick",
        path_str(dir),
        "--profile",
        profile,
        "--size",
        "16m",
        "--time",
        "100ms",
        "--ramp",
        "0s",
        "--json",
        path_str(&json),
        "-q",
    ]);
    let card = stdout_ok(&out);
    let report = json_file(&json);
    std::fs::remove_file(&json).unwrap();
    (card, report)
}

/// `findmnt`'s field for the mount `path` is on.
fn findmnt(path: &Path, field: &str) -> String {
    must("findmnt", &["-n", "-o", field, "-T", path_str(path)])
        .trim()
        .to_string()
}

#[test]
fn every_profile_runs_its_tests_and_is_named_on_a_card_of_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    for (profile, tests) in [
        (
            "cdm8",
            ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"],
        ),
        (
            "cdm8-nvme",
            ["SEQ1M Q8T1", "SEQ128K Q32T1", "RND4K Q32T16", "RND4K Q1T1"],
        ),
        (
            "cdm7",
            ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T16", "RND4K Q1T1"],
        ),
    ] {
        let (card, r) = quick(dir.path(), profile);
        assert_valid(&r);
        for l in card.lines() {
            assert!(l.chars().count() <= 80, "{profile}: {l}\n{card}");
        }
        assert!(
            card.starts_with(&format!("iosurvey quick, profile {profile}: ")),
            "{card}"
        );
        assert_eq!(r["quick"]["profile"], profile);
        let points = r["points"].as_array().unwrap();
        assert_eq!(points.len(), 8, "{profile}");
        for (i, t) in tests.iter().enumerate() {
            assert!(card.contains(&format!("\n{t:<13} Read ")), "{t}: {card}");
            for p in [&points[i], &points[i + 4]] {
                assert_eq!(p["params"]["mode"], "quick");
                assert_eq!(p["params"]["test"], *t, "{profile}");
            }
            // QxTy: y workers, x outstanding each.
            let (q, threads) = t.rsplit_once('Q').unwrap().1.split_once('T').unwrap();
            let (q, threads): (u64, u64) = (q.parse().unwrap(), threads.parse().unwrap());
            let p = &points[i];
            assert_eq!(u(&p["settings"]["workers"]), threads, "{t}");
            assert_eq!(u(&p["streams"][0]["outstanding"]), q * threads, "{t}");
            assert!(u(&p["total"]["read"]["ops"]) > 0, "{t}");
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn the_card_and_json_name_the_filesystem_mount_and_device_under_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (card, r) = quick(dir.path(), "cdm8");
    let d = &r["points"][0]["targets"][0]["device"];
    let (fs, point, source) = (
        findmnt(dir.path(), "FSTYPE"),
        findmnt(dir.path(), "TARGET"),
        findmnt(dir.path(), "SOURCE"),
    );
    assert_eq!(d["filesystem"], fs.as_str(), "{d}");
    assert_eq!(d["mount_point"], point.as_str(), "{d}");
    assert_eq!(d["mount_source"], source.as_str(), "{d}");
    let storage = card
        .lines()
        .find(|l| l.starts_with("storage: "))
        .unwrap_or_else(|| panic!("no storage line in\n{card}"));
    // A source named as its type (tmpfs, overlay) is not said twice.
    let on = match source == fs {
        true => format!("storage: {fs} mounted at {point}"),
        false => format!("storage: {fs} on {source} mounted at {point}"),
    };
    assert!(storage.starts_with(&on), "{storage}");
    if let Some(name) = d["name"].as_str() {
        assert!(card.contains(&format!("disk {name}")), "{card}");
    }
}

#[test]
fn an_unknown_profile_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = iosurvey(&["quick", path_str(dir.path()), "--profile", "cdm9"]);
    assert_refused(&out, &["cdm9", "cdm8-nvme"]);
    assert_eq!(
        stderr_of(&out).trim_end().lines().count(),
        1,
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_size_given_that_fits_runs_on_a_small_filesystem_and_one_that_does_not_is_refused() {
    // A 64 MiB tmpfs: an explicit 8 MiB test file fits (it was refused:
    // quick wanted the size and 64 MiB more free, even when given).
    let fs = need!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=64m"]));
    let run = |size: Option<&str>| {
        let mut a = vec![
            "quick",
            path_str(fs.path()),
            "--time",
            "100ms",
            "--ramp",
            "0s",
            "-q",
        ];
        if let Some(s) = size {
            a.extend(["--size", s]);
        }
        iosurvey(&a)
    };
    let card = stdout_ok(&run(Some("8m")));
    assert!(card.contains("(8388608 bytes)"), "{card}");
    let mounted = format!("storage: tmpfs mounted at {}\n", fs.path().display());
    assert!(card.contains(&mounted), "{card}");
    let out = run(Some("80m"));
    assert_refused(&out, &["--size 80MiB", "bytes free", "smaller --size"]);
    // Not given: half the free space, at least 64 MiB of it.
    let out = run(None);
    assert_refused(&out, &["bytes free", "at least 128MiB"]);
    assert_eq!(std::fs::read_dir(fs.path()).unwrap().count(), 0);
}
