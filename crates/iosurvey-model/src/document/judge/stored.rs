//! The warnings of what the storage holds, judged from what iosurvey read
//! or asked of it after writing: `unwritten_area` (a sample of the area
//! read reads as zeros, judged with its confidence) and
//! `compression_suspected` (the filesystem stored the compressible writes
//! encoded, or they ran faster).

use crate::document::evidence::*;
use crate::document::warning::Warning;
use crate::{CompressionCheck, ReadSample};

/// The share of the area read that, unwritten, raises `unwritten_area`,
/// when the sample shows at least that much at [`CONFIDENCE`].
const ZERO_SHARE: f64 = 0.25;
/// The confidence of the judgements made from a sample, and its normal
/// quantile (two-sided 95%).
const CONFIDENCE: f64 = 0.95;
const Z_95: f64 = 1.96;
/// Most the write rate of compressible data may exceed that of
/// incompressible data, as a share of the latter.
const MAX_COMPRESSION_GAP: f64 = 0.20;
/// The share of the compressible writes stored encoded (compressed) by
/// the filesystem that shows it compresses.
const MIN_ENCODED_SHARE: f64 = 0.10;
/// The lower bound, at [`CONFIDENCE`], of the share of which `hits` of `n`
/// sampled are: Wilson's score interval, which holds at 0 and at `n` hits
/// and for small samples (16 blocks of a version 2 report).
fn share_low(hits: u64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (n, p, z2) = (n as f64, hits as f64 / n as f64, Z_95 * Z_95);
    let centre = p + z2 / (2.0 * n);
    let spread = Z_95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - spread) / (1.0 + z2 / n)).max(0.0)
}

/// `unwritten_area`: the blocks sampled after the point show, at 95%
/// confidence, that at least a quarter of the area read reads as zeros.
pub(super) fn unwritten(z: &ReadSample) -> Option<Warning> {
    let low = share_low(z.zero_blocks, z.blocks);
    if z.blocks == 0 || low < ZERO_SHARE {
        return None;
    }
    let share = z.zero_blocks as f64 / z.blocks as f64;
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    Some(Warning::new(
        Evidence::UnwrittenArea(UnwrittenArea {
            sampled_blocks: z.blocks,
            zero_blocks: z.zero_blocks,
            zero_share: round(share),
            zero_share_low: round(low),
            confidence: CONFIDENCE,
        }),
        format!(
            "{} of {} blocks sampled from the area read are zeros (about {:.0}% of it, at least {:.0}% at 95% confidence): that much was probably never written (or was trimmed), and SSDs and thin LUNs answer such reads without touching the media; write the area first (e.g. run --rw write)",
            z.zero_blocks,
            z.blocks,
            share * 100.0,
            low * 100.0
        ),
        "at least 25% of the area read zeros, at 95% confidence (the lower bound of a Wilson interval of the sampled share)",
    ))
}

/// `compression_suspected`: the filesystem stored at least a tenth of the
/// compressible writes encoded (its extents say so, whatever the rates: a
/// buffered write runs at the page cache's rate), or the compressible
/// writes ran more than 20% faster (the storage below a filesystem, or a
/// device, compresses or deduplicates).
pub(super) fn compressed(c: &CompressionCheck) -> Option<Warning> {
    let (z, u) = (c.compressible_bytes_per_sec, c.incompressible_bytes_per_sec);
    let stored = c
        .encoded_bytes
        .filter(|_| c.compressible_written_bytes > 0)
        .map(|e| e.min(c.compressible_written_bytes) as f64 / c.compressible_written_bytes as f64);
    // Compression and dedup make the compressible writes faster; a slower
    // compressible write says nothing of them.
    let faster = u > 0.0 && z / u - 1.0 > MAX_COMPRESSION_GAP;
    let encoded = stored.is_some_and(|s| s >= MIN_ENCODED_SHARE);
    if !(faster || encoded) {
        return None;
    }
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut evidence = CompressionSuspected {
        compressible_bytes_per_sec: z.round(),
        incompressible_bytes_per_sec: u.round(),
        ratio: if u > 0.0 { round(z / u) } else { 0.0 },
        ..Default::default()
    };
    if let (Some(share), Some(e)) = (stored, c.encoded_bytes) {
        evidence.encoded_share = Some(round(share));
        evidence.encoded_bytes = Some(e);
        evidence.compressible_written_bytes = Some(c.compressible_written_bytes);
    }
    let why = match stored {
        Some(s) if encoded => format!(
            "the filesystem stored {:.0}% of the compressible data written encoded (compressed, by its extents)",
            s * 100.0
        ),
        Some(_) => format!(
            "writes of data that compresses ran at {:.0} MB/s, of incompressible data at {:.0} MB/s, though the filesystem stored none of it encoded: the storage below it compresses (or deduplicates)",
            z / 1e6,
            u / 1e6
        ),
        None => format!(
            "writes of data that compresses ran at {:.0} MB/s, of incompressible data at {:.0} MB/s: the storage compresses (or deduplicates) what it is given",
            z / 1e6,
            u / 1e6
        ),
    };
    Some(Warning::new(
        Evidence::CompressionSuspected(evidence),
        format!("{why}, so its rates depend on the data; iosurvey's own writes are incompressible unless --compressible"),
        "compressible writes at most 20% faster than incompressible ones, and under 10% of them stored encoded",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_of_zeros_is_judged_with_its_confidence() {
        // Wilson's bounds: 16 of 16 at least 80.6%, none of 64 zero.
        assert!((share_low(16, 16) - 0.806).abs() < 1e-3);
        assert_eq!(share_low(0, 64), 0.0);
        assert_eq!(share_low(0, 0), 0.0);
        let judged = |zero_blocks, blocks| {
            unwritten(&ReadSample {
                blocks,
                zero_blocks,
            })
        };
        // 90% unwritten: even an unlucky 48 of 64 warns.
        let w = judged(48, 64).expect("48 of 64");
        let Evidence::UnwrittenArea(e) = &w.evidence else {
            panic!("{w:?}")
        };
        assert_eq!(e.zero_share, 0.75);
        assert_eq!(e.confidence, 0.95);
        assert!(e.zero_share_low > 0.25, "{w}");
        assert!(judged(64, 64).is_some());
        // A few zero blocks (a sparse database) say nothing.
        assert!(judged(8, 64).is_none());
        assert!(judged(0, 64).is_none());
        // An old report's 16 of 16 still warns, 15 of 16 too.
        assert!(judged(16, 16).is_some());
        assert!(judged(15, 16).is_some());
        assert!(judged(4, 16).is_none());
    }

    #[test]
    fn compression_is_judged_by_the_extents_and_by_the_rates() {
        let check = |z: f64, u: f64, encoded: Option<u64>| {
            compressed(&CompressionCheck {
                compressible_bytes_per_sec: z,
                incompressible_bytes_per_sec: u,
                probe_ns: 1_000_000_000,
                compressible_written_bytes: 1000,
                encoded_bytes: encoded,
            })
        };
        // Page-cache rates alike, but stored encoded: compressed.
        let w = check(2400.0, 2450.0, Some(1000)).expect("by the extents");
        let Evidence::CompressionSuspected(e) = &w.evidence else {
            panic!("{w:?}")
        };
        assert_eq!(e.encoded_share, Some(1.0));
        assert!(w.message.contains("stored 100%"), "{w}");
        // Nothing encoded and alike rates: quiet; on a device (no extent
        // map) the rates alone decide.
        assert!(check(2400.0, 2450.0, Some(0)).is_none());
        assert!(check(2400.0, 2450.0, None).is_none());
        assert!(check(500.0, 300.0, None).is_some());
        // Nothing encoded by the filesystem, yet faster: the storage below.
        let w = check(500.0, 300.0, Some(0)).expect("by the rates");
        assert!(w.message.contains("stored none of it encoded"), "{w}");
        // A few encoded extents (under a tenth) say nothing alone.
        assert!(check(300.0, 300.0, Some(50)).is_none());
    }
}
