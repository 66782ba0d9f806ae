//! The non-I/O Linux calls iosurvey makes that neither `rustix` nor `std`
//! wraps safely: a loop device's backing identity (`LOOP_GET_STATUS64`), a
//! file's page-cache residency (`mincore`) and its extents (`FS_IOC_FIEMAP`).
//!
//! Beside the engine, this is the one crate allowed `unsafe`; each block says
//! why it is sound in a `SAFETY` note, and every function here is safe to
//! call. Everything else that is not I/O (xattrs, `openat2`, `statfs`,
//! `renameat2`, `mknodat`) goes through `rustix`'s safe wrappers in the
//! crates that use it.

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod fiemap;
pub mod loopdev;
pub mod resident;
