//! Lines on stderr that never panic. Rust's own `eprintln!` panics when
//! stderr is gone (`iosurvey ... 2>&1 | head`), and with `panic = "abort"`
//! that killed the run (exit 134) before it removed its test file.
//! SIGPIPE is ignored (Rust's runtime does so before `main`), so a write
//! to a closed pipe returns EPIPE instead of killing the process; here an
//! EPIPE on stderr stops the run as Ctrl-C does (clean-up, then exit 130),
//! and anything else that fails a line is dropped (there is nowhere left
//! to say it). `lib.rs` routes this crate's `eprintln!` and `eprint!`
//! here, and the binary's `main.rs` routes its own.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Set once a write to stderr found its reader gone.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// The run's stop flag, set too when stderr's reader goes.
static STOP: Mutex<Option<Arc<AtomicBool>>> = Mutex::new(None);

/// Writes `args` to stderr, without panicking. Messages echo paths and
/// names that may come from files (a `.lun` file, a report): any control
/// character in them but a line feed or a tab is spelled out.
pub fn text(args: std::fmt::Arguments<'_>) {
    let line = args.to_string();
    let shown = iosurvey_report::terminal_text(&line);
    let written = {
        let mut err = std::io::stderr().lock();
        err.write_all(shown.as_bytes()).and_then(|()| err.flush())
    };
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            stderr_gone();
        }
    }
}

/// Marks stderr closed and stops the run.
fn stderr_gone() {
    CLOSED.store(true, Ordering::Relaxed);
    let stop = STOP.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = stop.as_ref() {
        s.store(true, Ordering::Relaxed);
    }
}

/// From now on a closed stderr sets `stop`.
pub fn stop_on_close(stop: &Arc<AtomicBool>) {
    *STOP.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(stop));
    if CLOSED.load(Ordering::Relaxed) {
        stop.store(true, Ordering::Relaxed);
    }
}

/// Whether a write to stderr found its reader gone.
pub fn stderr_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}
