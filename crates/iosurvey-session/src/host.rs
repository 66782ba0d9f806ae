//! This host, as the cluster knows it: its name, and a line on stderr
//! that never panics.

/// This host's name, as `uname -n` gives it.
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// A line on stderr that never panics (a closed stderr must not turn an
/// exit code into a panic's).
pub(crate) fn say_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{args}");
}
