//! Running a program as a test does: a builder for its arguments and
//! environment, and what it printed, judged (exit code, stderr, JSON).

use serde_json::Value;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// A run in the background, killed and waited for on drop (when an
/// assertion failed); take the child out to wait for it.
pub struct Running(pub Option<std::process::Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A finished command's status and output, for a failed assertion: the
/// error last, where a log cut in the middle keeps it.
pub fn describe(out: &Output) -> String {
    use std::os::unix::process::ExitStatusExt;
    format!(
        "status {:?} (signal {:?})\nstdout (start): {}\nstderr: {}",
        out.status.code(),
        out.status.signal(),
        String::from_utf8_lossy(&out.stdout)
            .chars()
            .take(2000)
            .collect::<String>(),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Parses the JSON report of a run that must have succeeded.
pub fn report_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "iosurvey failed: {}",
        describe(out)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", describe(out)))
}

pub fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected an unsigned integer, got {v}"))
}

/// A stream's class's ops (`s["write"]`): 0 for a class left out of the
/// report because it did nothing (schema version 6 on).
pub fn class_ops(class: &Value) -> u64 {
    if class.is_null() {
        return 0;
    }
    u(&class["ops"])
}

/// The I/Os a class's lossless histogram counts (`[bucket, count]`
/// pairs): 0 for a class or histogram left out of the report because it
/// is empty (schema version 6 on).
pub fn histogram_count(class: &Value) -> u64 {
    class["histogram"]["counts"]
        .as_array()
        .map_or(0, |counts| counts.iter().map(|c| u(&c[1])).sum())
}

pub fn f(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("expected a number, got {v}"))
}

/// The stdout of a run that must have succeeded.
pub fn stdout_ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", describe(out));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A JSON file, parsed.
pub fn json_file(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// What iosurvey printed on stderr.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit code 2 (a refusal) and every one of `needles` on stderr.
pub fn assert_refused(out: &Output, needles: &[&str]) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit 2: {}",
        describe(out)
    );
    let err = stderr_of(out);
    for n in needles {
        assert!(err.contains(n), "stderr should contain {n:?}: {err}");
    }
}

/// A program to run with its arguments and environment: `Run::new(BIN)
/// .args([..]).output()`. Stdin is empty unless given.
pub struct Run {
    cmd: Command,
}

impl Run {
    pub fn new(program: impl AsRef<OsStr>) -> Run {
        let mut cmd = Command::new(program);
        cmd.stdin(Stdio::null());
        Run { cmd }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Run {
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Run {
        self.cmd.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Run {
        self.cmd.env_remove(key);
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Run {
        self.cmd.current_dir(dir);
        self
    }

    /// Runs it to its end: exit status, stdout and stderr.
    pub fn output(mut self) -> Output {
        self.cmd
            .output()
            .unwrap_or_else(|e| panic!("running {:?}: {e}", self.cmd.get_program()))
    }

    /// Runs it, which must succeed, and parses its stdout as JSON.
    pub fn json(self) -> Value {
        report_of(&self.output())
    }

    /// Starts it with stdout and stderr piped, killed on drop unless taken.
    pub fn spawn(mut self) -> Running {
        let child = self
            .cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {:?}: {e}", self.cmd.get_program()));
        Running(Some(child))
    }
}
