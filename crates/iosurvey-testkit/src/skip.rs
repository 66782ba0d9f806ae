//! The one skip rule of every test in the workspace.

/// Whether the tests run under CI: `CI` set to a value other than empty,
/// `0` or `false` (CI services set `CI=true`; `CI=0` is a developer
/// turning it off).
pub fn under_ci() -> bool {
    ci_set_by(std::env::var_os("CI").as_deref())
}

fn ci_set_by(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Says why a test does not run: on stderr, or, under CI, as a panic that
/// fails the test. For a helper that cannot `return` from the test itself
/// (it returns `None` and the test returns on that); a test calls `skip!`.
#[track_caller]
pub fn not_running(why: &str) {
    if under_ci() {
        panic!("would skip under CI: {why}");
    }
    eprintln!("skipping: {why}");
}

/// Prints why a test does not run and returns from it; under CI it fails.
#[macro_export]
macro_rules! skip {
    ($($arg:tt)*) => {{
        $crate::not_running(&format!($($arg)*));
        return;
    }};
}

/// Unwraps what a test needs (`Result<T, impl Display>`), or skips the
/// test with the reason.
#[macro_export]
macro_rules! require {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(reason) => $crate::skip!("{}", reason),
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn ci_is_set_by_any_value_but_empty_0_and_false() {
        for (value, ci) in [
            (Some("1"), true),
            (Some("true"), true),
            (Some("yes"), true),
            (Some(""), false),
            (Some("0"), false),
            (Some("false"), false),
            (None, false),
        ] {
            assert_eq!(ci_set_by(value.map(OsStr::new)), ci, "CI={value:?}");
        }
    }

    #[test]
    fn a_skip_returns_before_the_rest_of_the_test() {
        if under_ci() {
            // Under CI the skip panics: that is the other half of the rule.
            let r = std::panic::catch_unwind(|| not_running("a reason"));
            assert!(r.is_err());
            return;
        }
        fn skipping(reached: &mut bool) {
            let missing: Result<(), String> = Err("a tool is missing".into());
            require!(missing);
            *reached = true;
        }
        fn running(got: &mut u32) {
            *got = require!(Ok::<u32, String>(7));
        }
        let mut reached = false;
        skipping(&mut reached);
        assert!(!reached, "the test went on after its skip");
        let mut got = 0;
        running(&mut got);
        assert_eq!(got, 7);
    }
}
