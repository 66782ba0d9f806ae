//! Consent to destroy data is given on the command line, never by an
//! input the line names or inherits: sgpdd-survey's `scsidevs`/`rawdevs`
//! words are devices (targets), never flags. `scsidevs="--allow-destroy
//! FILE"` spliced `--allow-destroy` into the line and overwrote a user's
//! file (or, as root, a device) that the line never offered.
//!
//! Files only: no root needed.

use crate::common::*;

#[test]
fn a_flag_in_scsidevs_or_rawdevs_is_never_consent() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs.dat");
    let data: Vec<u8> = (0..4u32 << 20)
        .map(|i| i.wrapping_mul(2_654_435_761) as u8)
        .collect();
    std::fs::write(&theirs, &data).unwrap();
    let p = path_str(&theirs);
    for var in ["scsidevs", "rawdevs"] {
        for devs in [
            format!("--allow-destroy {p}"),
            format!("{p} --allow-destroy"),
            format!("--allow-destroy --force {p}"),
            format!("--allow-destroy={p}"),
        ] {
            let out = Run::new(BIN)
                .arg("survey")
                .env_remove("scsidevs")
                .env_remove("rawdevs")
                .env(var, &devs)
                .env("size", "2")
                .env("rszlo", "64")
                .env("rszhi", "64")
                .env("crghi", "1")
                .env("thrhi", "1")
                .env("actions", "write")
                .current_dir(dir.path())
                .output();
            assert_eq!(
                out.status.code(),
                Some(2),
                "{var}=\"{devs}\": expected a refusal (exit 2): {}",
                describe(&out)
            );
            assert_eq!(
                stderr_of(&out).lines().count(),
                1,
                "{var}=\"{devs}\": one line: {}",
                stderr_of(&out)
            );
            assert!(
                std::fs::read(&theirs).unwrap() == data,
                "{var}=\"{devs}\": the user's file was written without --allow-destroy on the line"
            );
        }
    }
}
