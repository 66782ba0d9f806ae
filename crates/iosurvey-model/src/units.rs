//! Sizes shown back to people: `4096` is `4KiB`. Parsing sizes and
//! durations is the workload crate's `units`.

/// `4096` -> `4KiB`, `1048576` -> `1MiB`, `1000` -> `1000B`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut i = 0;
    while i < UNITS.len() - 1 && v >= 1024 && v.is_multiple_of(1024) {
        v /= 1024;
        i += 1;
    }
    format!("{v}{}", UNITS[i])
}
