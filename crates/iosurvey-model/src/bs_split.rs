//! A block-size split within one stream (fio's `bssplit`, `--bs
//! 4k:70,64k:30`): each I/O's size drawn by weight, and what the report
//! says of it.

use serde::{Deserialize, Serialize};

/// One size of a split and its share of the I/Os, in percent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeShare {
    pub bs: u64,
    pub pct: u8,
    /// The size as the user wrote it (`6k`), for the messages that refuse
    /// it.
    pub written: String,
}

impl SizeShare {
    /// A share of a split built in code: its size written as labels
    /// print it (`6KiB`).
    pub fn new(bs: u64, pct: u8) -> Self {
        SizeShare {
            bs,
            pct,
            written: crate::units::format_size(bs),
        }
    }
}

/// The sizes of a split, in the order given, their percents adding up to
/// 100, none zero and no size twice (checked where it is parsed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BsSplit {
    pub shares: Vec<SizeShare>,
}

impl BsSplit {
    /// The largest size: the stream's buffers are this long.
    pub fn max_bs(&self) -> u64 {
        self.shares.iter().map(|s| s.bs).max().unwrap_or(0)
    }

    /// The smallest size: a sequential pass ends when less than this is
    /// left of its region.
    pub fn min_bs(&self) -> u64 {
        self.shares.iter().map(|s| s.bs).min().unwrap_or(0)
    }

    /// What every offset is a multiple of (from the start of the area):
    /// the greatest common divisor of the sizes, which is the smallest
    /// size when each is a multiple of it, as fio aligns random offsets to
    /// the smallest size of a split by default (`blockalign`). Sequential
    /// I/Os then follow each other with no gap.
    pub fn align(&self) -> u64 {
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        self.shares.iter().fold(0, |g, s| gcd(g, s.bs))
    }

    /// The index of the share each roll of 0..100 draws: share `i` takes
    /// `pct` consecutive rolls.
    pub fn table(&self) -> [u8; 100] {
        let mut t = [0u8; 100];
        let mut at = 0usize;
        for (i, s) in self.shares.iter().enumerate() {
            for slot in t.iter_mut().skip(at).take(usize::from(s.pct)) {
                *slot = i as u8;
            }
            at += usize::from(s.pct);
        }
        t
    }

    /// The sizes not a multiple of `n`, as the user wrote them, joined by
    /// commas (`6k, 10k`); empty when every size is one.
    pub fn not_multiples_of(&self, n: u64) -> String {
        let bad: Vec<&str> = self
            .shares
            .iter()
            .filter(|s| !s.bs.is_multiple_of(n.max(1)))
            .map(|s| s.written.as_str())
            .collect();
        bad.join(", ")
    }

    /// `4k:70,64k:30`, as the user wrote it.
    pub fn written(&self) -> String {
        let parts: Vec<String> = self
            .shares
            .iter()
            .map(|s| format!("{}:{}", s.written, s.pct))
            .collect();
        parts.join(",")
    }

    /// `4KiB:70,64KiB:30`, as labels print it.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .shares
            .iter()
            .map(|s| format!("{}:{}", crate::units::format_size(s.bs), s.pct))
            .collect();
        parts.join(",")
    }
}

/// One size of a stream's split as it ran: the size, the share asked for
/// and the measured I/Os of that size (so that the split can be checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SizeReport {
    /// Bytes per I/O.
    pub bs: u64,
    /// Percent of the I/Os asked for.
    pub pct: u8,
    /// Measured I/Os of this size that completed whole, reads and writes.
    pub ops: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(parts: &[(u64, u8)]) -> BsSplit {
        BsSplit {
            shares: parts
                .iter()
                .map(|&(bs, pct)| SizeShare::new(bs, pct))
                .collect(),
        }
    }

    #[test]
    fn the_table_gives_each_size_its_percent_of_the_rolls() {
        let s = split(&[(4096, 70), (65536, 30)]);
        let t = s.table();
        assert_eq!(t.iter().filter(|&&i| i == 0).count(), 70);
        assert_eq!(t.iter().filter(|&&i| i == 1).count(), 30);
        assert_eq!((s.max_bs(), s.align()), (65536, 4096));
        assert_eq!(s.describe(), "4KiB:70,64KiB:30");
    }

    #[test]
    fn offsets_align_to_what_every_size_is_a_multiple_of() {
        assert_eq!(split(&[(4096, 50), (6144, 50)]).align(), 2048);
        assert_eq!(split(&[(8192, 50), (16384, 50)]).align(), 8192);
    }

    #[test]
    fn the_sizes_not_a_multiple_are_named_as_written() {
        let mut s = split(&[(4096, 40), (6144, 30), (10240, 30)]);
        s.shares[1].written = "6k".into();
        assert_eq!(s.not_multiples_of(4096), "6k, 10KiB");
        assert_eq!(s.not_multiples_of(2048), "");
        assert_eq!((s.min_bs(), s.max_bs()), (4096, 10240));
    }
}
