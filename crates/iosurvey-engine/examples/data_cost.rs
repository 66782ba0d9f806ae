//! What generating written data costs per write, against the alternatives
//! issue 27 named: copying each write's bytes out of a large random pool
//! at a per-I/O offset (plus a per-sector header), and the old stamp (16
//! bytes per 4 KiB block, which left the data compressible).
//!
//! `cargo run --release -p iosurvey-engine --example data_cost [BS]`:
//! nanoseconds per write of BS bytes (default 4096), the median of 9
//! rounds of 200,000 writes each, on one core. Then each vector build of
//! the generator this CPU runs (portable, AVX2, AVX-512; the same bytes),
//! rounds alternated, with each build's per-round ratio to AVX2's: median
//! and min..max.

use iosurvey_engine::data::{DataFill, Simd, Stamper};
use std::hint::black_box;
use std::time::Instant;

const WRITES: usize = 200_000;
const ROUNDS: usize = 9;

/// The median over [`ROUNDS`] of nanoseconds per call of `f`.
fn per_write(mut f: impl FnMut(usize)) -> f64 {
    let mut t: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for i in 0..WRITES {
                f(i);
            }
            start.elapsed().as_nanos() as f64 / WRITES as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[ROUNDS / 2]
}

fn main() {
    let bs: usize = std::env::args()
        .nth(1)
        .map_or(4096, |a| a.parse().expect("BS: a number of bytes"));
    // 32 buffers, as a worker at QD 32 has.
    let mut bufs = vec![vec![0u8; bs]; 32];
    let mut stamper = Stamper::new(DataFill::default());
    let generate = per_write(|i| {
        let b = &mut bufs[i % 32];
        stamper.stamp(b, (i * bs) as u64);
        black_box(&b[..]);
    });

    // A 64 MiB random pool, each write copied from a pseudo-random 512-byte
    // aligned offset, then a 16-byte header per sector.
    let pool_len = 64 << 20;
    let mut pool = vec![0u8; pool_len + bs];
    Stamper::new(DataFill::default()).stamp(&mut pool, 0);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut count = 0u64;
    let pool_copy = per_write(|i| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let at = (x as usize % pool_len) & !511;
        let b = &mut bufs[i % 32];
        b.copy_from_slice(&pool[at..at + bs]);
        for s in b.chunks_exact_mut(512) {
            s[..8].copy_from_slice(&x.to_le_bytes());
            s[8..16].copy_from_slice(&count.to_le_bytes());
            count += 1;
        }
        black_box(&b[..]);
    });

    // The old stamp: 16 bytes per 4 KiB block, the rest left as it was.
    let old_stamp = per_write(|i| {
        let b = &mut bufs[i % 32];
        for s in b.chunks_exact_mut(4096) {
            s[..8].copy_from_slice(&x.to_le_bytes());
            s[8..16].copy_from_slice(&count.to_le_bytes());
            count += 1;
        }
        black_box(&b[..]);
    });

    println!("ns per {bs}-byte write, median of {ROUNDS} rounds of {WRITES}:");
    println!("  generated per sector (iosurvey):   {generate:8.1}");
    println!("  copied from a 64 MiB pool + header: {pool_copy:8.1}");
    println!("  old 16-byte stamp per 4 KiB:        {old_stamp:8.1}");
    builds(&mut bufs, bs);
}

/// Each build of the generator, rounds alternated (one round of each
/// build in turn, [`ROUNDS`] times): ns per write, and per round the
/// ratio to AVX2's.
fn builds(bufs: &mut [Vec<u8>], bs: usize) {
    let simds: Vec<Simd> = Simd::ALL.into_iter().filter(|s| s.available()).collect();
    let mut ns = vec![Vec::new(); simds.len()];
    for _ in 0..ROUNDS {
        for (k, &simd) in simds.iter().enumerate() {
            let mut stamper = Stamper::new(DataFill::default());
            stamper.set_simd(simd);
            let start = Instant::now();
            for i in 0..WRITES {
                let b = &mut bufs[i % 32];
                stamper.stamp(b, (i * bs) as u64);
                black_box(&b[..]);
            }
            ns[k].push(start.elapsed().as_nanos() as f64 / WRITES as f64);
        }
    }
    let avx2 = simds.iter().position(|&s| s == Simd::Avx2);
    println!("by vector build, rounds alternated (ratio per round to AVX2):");
    for (k, simd) in simds.iter().enumerate() {
        let mut t = ns[k].clone();
        t.sort_by(f64::total_cmp);
        let ratio = avx2.map(|a| {
            let mut r: Vec<f64> = ns[k].iter().zip(&ns[a]).map(|(x, y)| x / y).collect();
            r.sort_by(f64::total_cmp);
            format!("{:.3} ({:.3}..{:.3})", r[ROUNDS / 2], r[0], r[ROUNDS - 1])
        });
        println!(
            "  {:<10} {:8.1} ns  {}",
            format!("{simd:?}"),
            t[ROUNDS / 2],
            ratio.unwrap_or_default()
        );
    }
}
