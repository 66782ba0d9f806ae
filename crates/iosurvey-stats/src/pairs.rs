//! A writer's own path for the histograms' `[value, count]` pairs.
//!
//! A long run's histogram has thousands of non-empty buckets, and a report
//! carries each one twice (its stream's and the point's total). Through
//! serde, each pair is a sequence of two numbers: a dozen calls into the
//! serializer and its formatter, some 370 instructions, which made writing
//! the report a measurable part of the whole process's cost per I/O. A
//! writer that lays the pairs out itself runs the serialisation inside
//! [`set_aside`]: a histogram's counts then serialise as an empty array,
//! and the writer takes their pairs with [`take`] when that array begins,
//! which is the next array it is asked to begin.

use serde::ser::{SerializeSeq, Serializer};
use std::cell::RefCell;

/// While counts are set aside on this thread: the pairs of the last
/// histogram serialised, and whether the writer has yet to take them.
struct Aside {
    pairs: Vec<[u64; 2]>,
    pending: bool,
}

thread_local! {
    static ASIDE: RefCell<Option<Aside>> = const { RefCell::new(None) };
}

/// Runs `f` with every histogram's counts set aside (see the module):
/// only for a writer whose every array's beginning calls [`take`].
pub fn set_aside<R>(f: impl FnOnce() -> R) -> R {
    /// Ends the setting aside, however `f` ends.
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            ASIDE.with(|a| a.borrow_mut().take());
        }
    }
    ASIDE.with(|a| {
        *a.borrow_mut() = Some(Aside {
            pairs: Vec::new(),
            pending: false,
        })
    });
    let _restore = Restore;
    let out = f();
    // A writer that took every array's pairs leaves none behind.
    debug_assert!(
        take(|_| ()).is_none(),
        "a histogram's pairs were set aside and never written"
    );
    out
}

/// Calls `write` with the pairs of the histogram whose counts were set
/// aside last, if the writer has not taken them yet.
pub fn take<R>(write: impl FnOnce(&[[u64; 2]]) -> R) -> Option<R> {
    ASIDE.with(|a| {
        let mut a = a.borrow_mut();
        let aside = a.as_mut().filter(|aside| aside.pending)?;
        aside.pending = false;
        Some(write(&aside.pairs))
    })
}

/// Serialises `counts`: as the sequence of pairs it is, or, while counts
/// are set aside, as an empty sequence whose pairs wait for [`take`].
pub(crate) fn serialize<S: Serializer>(counts: &[[u64; 2]], s: S) -> Result<S::Ok, S::Error> {
    let aside = ASIDE.with(|a| match a.borrow_mut().as_mut() {
        Some(aside) => {
            aside.pairs.clear();
            aside.pairs.extend_from_slice(counts);
            aside.pending = true;
            true
        }
        None => false,
    });
    if aside {
        s.serialize_seq(Some(0))?.end()
    } else {
        s.collect_seq(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Histogram;

    fn data() -> crate::HistogramData {
        let mut h = Histogram::new();
        h.record_n(1_000, 3);
        h.record_n(2_000_000, 1);
        h.to_data()
    }

    #[test]
    fn counts_serialise_whole_unless_set_aside() {
        let plain = serde_json::to_value(data()).unwrap();
        assert_eq!(
            plain["counts"],
            serde_json::json!([[1000, 3], [2000895, 1]])
        );
        assert_eq!(take(|p| p.len()), None, "nothing is set aside outside");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "never written")]
    fn pairs_no_writer_took_are_a_bug() {
        set_aside(|| serde_json::to_value(data()).unwrap());
    }

    #[test]
    fn set_aside_counts_wait_for_the_writer_once() {
        let (v, taken, again) = set_aside(|| {
            let v = serde_json::to_value(data()).unwrap();
            (v, take(<[_]>::to_vec), take(|p| p.len()))
        });
        assert_eq!(v["counts"], serde_json::json!([]));
        assert_eq!(taken, Some(vec![[1000, 3], [2000895, 1]]));
        assert_eq!(again, None, "the pairs are taken once");
        // Over once `set_aside` returns.
        let after = serde_json::to_value(data()).unwrap();
        assert_eq!(after["counts"].as_array().map(Vec::len), Some(2));
    }
}
