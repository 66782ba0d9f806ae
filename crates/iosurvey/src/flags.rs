//! The command line, in stages: the classic tools' own spellings
//! rewritten into the modes' flags ([`spellings`]), then clap ([`cli`]),
//! whose modes share the flag groups of [`common`].

pub mod cli;
pub mod common;
pub mod listed;
pub mod spellings;
