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
}
