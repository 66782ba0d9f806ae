//! What serde writes and reads for a field left out of the document.

pub(crate) fn is_one(v: &u32) -> bool {
    *v == 1
}

pub(crate) fn is_zero(v: &u32) -> bool {
    *v == 0
}

pub(crate) fn one() -> u32 {
    1
}

pub(crate) fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

pub(crate) fn is_zero_u8(v: &u8) -> bool {
    *v == 0
}
