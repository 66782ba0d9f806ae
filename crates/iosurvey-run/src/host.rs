//! The machine a run happens on, for the record.

pub use iosurvey_model::HostInfo;

/// Probing the running machine (`HostInfo` itself is plain data in
/// `iosurvey-model`).
pub trait HostProbe {
    /// Reads the running machine's details.
    fn current() -> HostInfo;
}

impl HostProbe for HostInfo {
    fn current() -> HostInfo {
        let u = rustix::system::uname();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let si = rustix::system::sysinfo();
        HostInfo {
            hostname: u.nodename().to_string_lossy().into_owned(),
            kernel: u.release().to_string_lossy().into_owned(),
            os: u.sysname().to_string_lossy().into_owned(),
            arch: u.machine().to_string_lossy().into_owned(),
            cpu_model,
            cpus: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            memory_bytes: si.totalram as u64 * u64::from(si.mem_unit),
        }
    }
}

/// The process's CPU time at one moment: the total exact to the
/// nanosecond (`CLOCK_PROCESS_CPUTIME_ID`, every thread), and the user and
/// system times the kernel reports in `/proc/self/stat`, which count in
/// 10 ms ticks and serve only to split the total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuSample {
    pub total_ns: u64,
    pub user_tick_ns: u64,
    pub system_tick_ns: u64,
}

impl CpuSample {
    /// The CPU time now.
    pub fn now() -> CpuSample {
        let (user_tick_ns, system_tick_ns) = tick_cpu_ns();
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        CpuSample {
            total_ns: (t.tv_sec as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(t.tv_nsec as u64),
            user_tick_ns,
            system_tick_ns,
        }
    }

    /// User and system time from `earlier` to this sample. They add up to
    /// the exact total, so they never exceed the CPU really used, however
    /// short the window; the total is split as the ticks counted in the
    /// window split, or, when no tick fell in it, as the process's ticks
    /// so far split.
    pub fn since(&self, earlier: &CpuSample) -> (u64, u64) {
        let total = self.total_ns.saturating_sub(earlier.total_ns);
        let du = self.user_tick_ns.saturating_sub(earlier.user_tick_ns);
        let ds = self.system_tick_ns.saturating_sub(earlier.system_tick_ns);
        let (wu, ws) = if du + ds > 0 {
            (du, ds)
        } else if self.user_tick_ns + self.system_tick_ns > 0 {
            (self.user_tick_ns, self.system_tick_ns)
        } else {
            (1, 1)
        };
        let user = (u128::from(total) * u128::from(wu) / u128::from(wu + ws)) as u64;
        (user, total - user)
    }
}

/// Process user and system CPU time in nanoseconds, from /proc/self/stat
/// (10 ms resolution).
fn tick_cpu_ns() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15; after ')' they are 11 and 12.
    // Linux reports them in USER_HZ, which is 100 on every architecture.
    (tick(11) * 10_000_000, tick(12) * 10_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_details_are_filled_in() {
        let h = HostInfo::current();
        assert!(!h.kernel.is_empty());
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
    }

    #[test]
    fn cpu_time_grows_with_work() {
        // 60 ms of this thread's own CPU time, not of wall time: on a
        // loaded machine 60 ms of wall time may hold much less CPU.
        let thread_ns = || {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
        };
        let c0 = CpuSample::now();
        let mut x = 0u64;
        let start = thread_ns();
        while thread_ns() - start < 60_000_000 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
        }
        std::hint::black_box(x);
        let c1 = CpuSample::now();
        let (user, system) = c1.since(&c0);
        assert!(user + system >= 50_000_000, "{user} + {system}");
        assert_eq!(user + system, c1.total_ns - c0.total_ns);
    }

    #[test]
    fn a_window_shorter_than_a_tick_never_shows_more_cpu_than_was_used() {
        // One tick (10 ms) fell in a window in which 200 us of CPU ran:
        // the split follows the tick, the sum stays the exact 200 us.
        let a = CpuSample {
            total_ns: 1_000_000,
            user_tick_ns: 30_000_000,
            system_tick_ns: 40_000_000,
        };
        let b = CpuSample {
            total_ns: 1_200_000,
            user_tick_ns: 30_000_000,
            system_tick_ns: 50_000_000,
        };
        assert_eq!(b.since(&a), (0, 200_000));
        // No tick in the window: split as the process's ticks so far.
        let c = CpuSample {
            total_ns: 1_700_000,
            ..b
        };
        assert_eq!(c.since(&b), (187_500, 312_500));
    }
}
