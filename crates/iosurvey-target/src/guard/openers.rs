//! Other processes that hold a file open: a FUSE filesystem on an image
//! (fuse2fs), a VM on its disk image, any program writing it. Writing a
//! file they hold writes under them. Found by identity, through every
//! process's `/proc/PID/fd` and `/proc/PID/map_files` (what is mapped),
//! read once. iosurvey's own processes are left out: its own, and other
//! runs of the same program (MPI ranks, `--shared` runs), which its run
//! lock judges instead.

use super::devno::Devno;
use rustix::fs::FileType;

/// A regular file a process other than iosurvey holds open (or mapped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Opener {
    pub pid: u32,
    pub comm: String,
    /// The file's `st_dev` and inode.
    pub file: (Devno, u64),
}

/// The identity of a process's program (`/proc/PID/exe`).
fn exe_of(pid: &str) -> Option<(Devno, u64)> {
    let st = rustix::fs::stat(format!("/proc/{pid}/exe").as_str()).ok()?;
    Some((st.st_dev, st.st_ino))
}

/// The regular files held open or mapped by every process on the host
/// but iosurvey's own.
pub(crate) fn openers() -> Vec<Opener> {
    let own = exe_of("self");
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in procs.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        // A process that ended meanwhile says nothing.
        let Some(exe) = exe_of(&name) else { continue };
        if own == Some(exe) {
            continue;
        }
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let comm = comm.trim_end().to_string();
        for dir in ["fd", "map_files"] {
            for file in files_in(&format!("/proc/{pid}/{dir}")) {
                let comm = comm.clone();
                out.push(Opener { pid, comm, file });
            }
        }
    }
    out
}

/// A process other than iosurvey that holds a `flock` lock on the file
/// of `st_dev` `dev` and inode `ino` (`/proc/locks`), with its name: the
/// lock a run is refused for is then not another run's. The lock belongs
/// to the open file, and `/proc/locks` names the process that took it:
/// when that one has ended (`flock FILE CMD` killed, its CMD left
/// holding the file), a process other than iosurvey holding the file
/// open is named. `None` when every holder is an iosurvey process, or
/// none can be told.
pub(crate) fn foreign_flock_holder(dev: Devno, ino: u64) -> Option<(u32, String)> {
    let own = exe_of("self");
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pids: Vec<u32> = locks
        .lines()
        .filter_map(|l| flock_pid(l, dev, ino))
        .collect();
    let comm = |pid: u32| {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        comm.trim_end().to_string()
    };
    let alive: Vec<(u32, Option<(Devno, u64)>)> = pids
        .iter()
        .map(|&pid| (pid, exe_of(&pid.to_string())))
        .collect();
    if let Some(&(pid, _)) = alive.iter().find(|(_, e)| e.is_some() && *e != own) {
        return Some((pid, comm(pid)));
    }
    if alive.iter().any(|(_, e)| e.is_none()) {
        return openers()
            .into_iter()
            .find(|o| o.file == (dev, ino))
            .map(|o| (o.pid, o.comm));
    }
    None
}

/// The pid of a granted `flock` lock on (`dev`, `ino`) that line `l` of
/// `/proc/locks` says (`1: FLOCK  ADVISORY  WRITE 2461 08:01:1234 0 EOF`;
/// a waiter's line has `->` after the number and holds nothing).
fn flock_pid(l: &str, dev: Devno, ino: u64) -> Option<u32> {
    let mut f = l.split_whitespace().skip(1);
    if f.next()? != "FLOCK" {
        return None;
    }
    let pid = f.nth(2)?.parse().ok()?;
    let mut id = f.next()?.rsplitn(2, ':');
    let file_ino: u64 = id.next()?.parse().ok()?;
    let (maj, min) = id.next()?.split_once(':')?;
    let file_dev = rustix::fs::makedev(
        u32::from_str_radix(maj, 16).ok()?,
        u32::from_str_radix(min, 16).ok()?,
    );
    (file_dev == dev && file_ino == ino).then_some(pid)
}

/// The regular files the links in `dir` (a process's fd or map_files)
/// lead to.
fn files_in(dir: &str) -> Vec<(Devno, u64)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| rustix::fs::stat(e.path().as_path()).ok())
        .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
        .map(|st| (st.st_dev, st.st_ino))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_holding_a_file_is_found_and_this_process_is_not() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("held");
        std::fs::write(&f, b"x").unwrap();
        let _mine = std::fs::File::open(&f).unwrap();
        let st = rustix::fs::stat(&f).unwrap();
        let id = (st.st_dev, st.st_ino);
        assert!(!openers().iter().any(|o| o.file == id));
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec 3<\"$0\"; echo ready; exec sleep 30")
            .arg(&f)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let out = child.stdout.take().unwrap();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).unwrap();
        let found = openers().into_iter().find(|o| o.file == id);
        let _ = child.kill();
        let _ = child.wait();
        let found = found.expect("the child's descriptor");
        assert_eq!(found.pid, child.id());
        // Named `sh` until it has exec'd `sleep`.
        assert!(["sh", "sleep"].contains(&found.comm.as_str()), "{found:?}");
    }

    #[test]
    fn a_flock_line_of_proc_locks_names_its_holder_and_file() {
        let dev = rustix::fs::makedev(0x103, 0x2a);
        let l = "3: FLOCK  ADVISORY  WRITE 2461 103:2a:7340 0 EOF";
        assert_eq!(flock_pid(l, dev, 7340), Some(2461));
        assert_eq!(flock_pid(l, dev, 7341), None);
        assert_eq!(flock_pid(l, rustix::fs::makedev(0x103, 0x2b), 7340), None);
        let waiter = "3: -> FLOCK  ADVISORY  WRITE 2462 103:2a:7340 0 EOF";
        assert_eq!(flock_pid(waiter, dev, 7340), None);
        let posix = "4: POSIX  ADVISORY  WRITE 2463 103:2a:7340 0 EOF";
        assert_eq!(flock_pid(posix, dev, 7340), None);
    }

    #[test]
    fn a_foreign_flock_is_found_with_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let st = rustix::fs::stat(&p).unwrap();
        // Our own lock is an iosurvey process's: none foreign.
        let f = std::fs::File::open(&p).unwrap();
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive).unwrap();
        assert_eq!(foreign_flock_holder(st.st_dev, st.st_ino), None);
        drop(f);
        let mut holder = std::process::Command::new("flock")
            .arg("-x")
            .arg(&p)
            .args(["sleep", "30"])
            .spawn()
            .unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let mut found = None;
        while found.is_none() && std::time::Instant::now() < until {
            found = foreign_flock_holder(st.st_dev, st.st_ino);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = holder.kill();
        let _ = holder.wait();
        let (pid, comm) = found.expect("flock's lock found");
        assert_eq!(pid, holder.id());
        assert_eq!(comm, "flock");
    }
}
