//! What an output's name holds as far as this run knows: the identity,
//! owner and mode of the file judged there, shared between the judging of
//! the path and the writing of the report.

use rustix::fs::Stat;
use std::sync::Arc;

/// A regular file at an output's name, as this run knows it: its identity
/// and the owner and mode a new report takes from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Judged {
    pub dev: u64,
    pub ino: u64,
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

impl Judged {
    pub fn of(st: &Stat) -> Judged {
        Judged {
            dev: st.st_dev,
            ino: st.st_ino,
            uid: st.st_uid,
            gid: st.st_gid,
            mode: st.st_mode,
        }
    }
}

/// What is at an output file's name as far as this run knows: the file
/// judged there at the start (or nothing), then the report this run put
/// there. Only that file is ever replaced; anything put at the name since
/// (moved or exchanged there from a path never offered) is not.
#[derive(Clone, Debug)]
pub struct AtName(Arc<std::sync::Mutex<Option<Judged>>>);

impl AtName {
    pub fn new(judged: Option<Judged>) -> AtName {
        AtName(Arc::new(std::sync::Mutex::new(judged)))
    }

    pub fn get(&self) -> Option<Judged> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set(&self, now: Judged) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
    }
}

impl PartialEq for AtName {
    fn eq(&self, other: &AtName) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for AtName {}
