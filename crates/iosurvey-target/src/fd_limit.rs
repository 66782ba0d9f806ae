//! The file descriptors a run needs, against RLIMIT_NOFILE: the soft
//! limit is raised as far as the hard one lets it before anything is
//! refused.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Makes room for `need` open descriptors in this process: nothing when
/// the soft limit already allows them, else the soft limit raised to
/// `need` when the hard one lets it. `Err(hard)` when it does not.
pub fn make_room(need: u64) -> Result<(), u64> {
    let lim = getrlimit(Resource::Nofile);
    if need <= lim.current.unwrap_or(u64::MAX) {
        return Ok(());
    }
    let hard = lim.maximum.unwrap_or(u64::MAX);
    let raised = Rlimit {
        current: Some(need),
        maximum: lim.maximum,
    };
    if need <= hard && setrlimit(Resource::Nofile, raised).is_ok() {
        return Ok(());
    }
    Err(hard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_within_the_soft_limit_changes_nothing_and_past_the_hard_one_is_refused() {
        let before = getrlimit(Resource::Nofile);
        assert_eq!(make_room(3), Ok(()));
        assert_eq!(getrlimit(Resource::Nofile).current, before.current);
        if let Some(hard) = before.maximum.filter(|&h| h < u64::MAX) {
            assert_eq!(make_room(hard + 1), Err(hard));
        }
    }
}
