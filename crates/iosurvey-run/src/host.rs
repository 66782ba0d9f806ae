//! The machine a run happens on, for the record.

use serde::{Deserialize, Serialize};

/// Host, kernel and CPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub os: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpus: u32,
    pub memory_bytes: u64,
}

impl HostInfo {
    /// Reads the running machine's details.
    pub fn current() -> HostInfo {
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

/// Process user and system CPU time in nanoseconds, from /proc/self/stat.
pub fn process_cpu_ns() -> (u64, u64) {
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
        let (u0, _) = process_cpu_ns();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed().as_millis() < 60 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
        }
        std::hint::black_box(x);
        let (u1, _) = process_cpu_ns();
        assert!(u1 > u0, "{u0} -> {u1}");
    }
}
