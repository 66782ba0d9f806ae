//! A block-size split on one worker: each I/O's size drawn by weight with
//! the stream's own seeded generator, and the measured I/Os of each size
//! counted as they complete.

use iosurvey_model::BsSplit;

/// The sizes of a split as a worker draws them.
pub(crate) struct SizeDraw {
    /// The sizes, in the split's order.
    pub lens: Vec<u32>,
    /// The index into `lens` of each roll of 0..100.
    table: [u8; 100],
    /// Measured I/Os of each size that completed whole.
    pub ops: Vec<u64>,
}

impl SizeDraw {
    pub(crate) fn new(split: &BsSplit) -> Self {
        SizeDraw {
            lens: split.shares.iter().map(|s| s.bs as u32).collect(),
            table: split.table(),
            ops: vec![0; split.shares.len()],
        }
    }

    /// The size a roll of 0..100 draws.
    #[inline]
    pub(super) fn len_at(&self, roll: u64) -> u32 {
        self.lens[usize::from(self.table[roll as usize % 100])]
    }

    /// Counts a measured I/O of `len` bytes that completed whole.
    #[inline]
    pub(super) fn count(&mut self, len: u32) {
        if let Some(i) = self.lens.iter().position(|&l| l == len) {
            self.ops[i] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_model::SizeShare;

    #[test]
    fn rolls_draw_sizes_by_weight_and_completions_count_by_size() {
        let split = BsSplit {
            shares: vec![SizeShare::new(4096, 25), SizeShare::new(65536, 75)],
        };
        let mut d = SizeDraw::new(&split);
        let drawn: Vec<u32> = (0..100).map(|r| d.len_at(r)).collect();
        assert_eq!(drawn.iter().filter(|&&l| l == 4096).count(), 25);
        assert_eq!(drawn.iter().filter(|&&l| l == 65536).count(), 75);
        for l in drawn {
            d.count(l);
        }
        assert_eq!(d.ops, [25, 75]);
    }
}
