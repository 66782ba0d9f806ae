//! The process's one stop flag, set by SIGINT, SIGTERM or SIGHUP. It is
//! installed by [`install`] as the first thing `main` does: a signal that
//! came before the handler took the default action, which killed the run
//! (exit 143 for SIGTERM) with the trash directories of its outputs made
//! and never removed. From [`install`] on, a signal is only recorded, and
//! the run that comes later ends at once as interrupted (exit 130), its
//! clean-up done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The signals that stop a run: Ctrl-C, a polite kill, and a terminal or
/// ssh session that went away.
const STOPPING: [i32; 3] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
];

/// The flag every signal sets; the handlers are registered once.
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Registers the handlers (once) and returns the flag they set. A second
/// signal exits at once with 130 (signal-hook runs a signal's actions in
/// the order registered, so the check of the flag comes before the first
/// signal sets it). That exit is from the handler, where nothing may be
/// cleaned up: the run's test file and trash stay, as after a kill.
pub fn install() -> Arc<AtomicBool> {
    Arc::clone(STOP.get_or_init(|| {
        let stop = Arc::new(AtomicBool::new(false));
        for sig in STOPPING {
            let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop));
            let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
        }
        stop
    }))
}

/// Whether a signal (or a closed stderr, once a run watches it) asked the
/// process to stop.
pub fn requested() -> bool {
    STOP.get().is_some_and(|s| s.load(Ordering::Relaxed))
}

/// For a command that never looks at the stop flag (`report`, `db`,
/// `man`...), which would otherwise run to its end with the signal
/// ignored (`report -` waiting on a terminal forever): from now on a
/// signal ends the process with 130, as one that came before this call
/// does now, after the trash directories made ahead are removed. That is
/// done on a thread of its own, woken by the signal, since a handler may
/// not take a lock or allocate.
pub fn at_once() {
    install();
    // Listening before looking at the flag: a signal is either seen by the
    // look or heard by the thread.
    let signals = signal_hook::iterator::Signals::new(STOPPING);
    if requested() {
        end_interrupted();
    }
    let Ok(mut signals) = signals else { return };
    let _ = std::thread::Builder::new()
        .name("iosurvey-signal".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                end_interrupted();
            }
        });
}

/// Removes the trash directories made ahead (empty unless a removal is
/// under way: those stay), then exits with 130.
fn end_interrupted() -> ! {
    iosurvey_target::guard::trash::release_reserved();
    std::process::exit(130)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_after_install_is_recorded_not_fatal() {
        let stop = install();
        assert!(Arc::ptr_eq(&stop, &install()), "one flag for the process");
        assert!(!requested());
        signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
        // The handler ran before raise(3) returned: the signal was sent to
        // this very thread, which is not blocking it.
        assert!(requested(), "SIGTERM did not set the stop flag");
        assert!(stop.load(Ordering::Relaxed));
        // No other test of this crate runs a plan; cleared all the same.
        stop.store(false, Ordering::Relaxed);
    }
}
