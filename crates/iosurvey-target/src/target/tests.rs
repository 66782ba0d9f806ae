//! Tests of the target layer: probing, layout, the guard on files, directories.

use super::*;
use crate::guard::WritePolicy;
use std::sync::atomic::AtomicBool;

#[test]
fn creates_a_fully_written_file_of_nonzero_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t");
    let spec = TargetSpec {
        path: path.clone(),
        create_size: Some(5 << 20),
    };
    let t = open_target(&spec, OpenOptions::default()).unwrap();
    assert!(matches!(t.created, Created::File));
    assert_eq!(t.size, 5 << 20);
    assert_eq!(t.kind, TargetKind::File);
    let data = std::fs::read(&path).unwrap();
    assert_eq!(data.len(), 5 << 20);
    assert!(data.chunks(4096).all(|b| b.iter().any(|&x| x != 0)));
    t.remove_if_created().unwrap();
    assert!(!path.exists());
}

#[test]
fn refuses_sparse_files_and_directories_and_missing_paths() {
    let dir = tempfile::tempdir().unwrap();
    let sparse = dir.path().join("sparse");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let spec = |p: &Path| TargetSpec {
        path: p.to_path_buf(),
        create_size: None,
    };
    assert!(matches!(
        open_target(&spec(&sparse), OpenOptions::default()),
        Err(TargetError::Holes { .. })
    ));
    assert!(matches!(
        open_target(&spec(dir.path()), OpenOptions::default()),
        Err(TargetError::DirectoryNeedsSize(_))
    ));
    assert!(matches!(
        open_target(&spec(&dir.path().join("none")), OpenOptions::default()),
        Err(TargetError::NotFound(_))
    ));
}

#[test]
fn a_directory_gets_a_marked_test_file_that_later_runs_may_write() {
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec {
        path: dir.path().to_path_buf(),
        create_size: Some(1 << 20),
    };
    let write = OpenOptions {
        write: true,
        trim: false,
        ..Default::default()
    };
    let t = open_target(&spec, write).unwrap();
    assert!(matches!(t.created, Created::File));
    assert_eq!(t.path, test_file_in(dir.path()));
    assert!(created_by_iosurvey(&t.path) || !xattrs_supported(dir.path()));
    // A second run on the file itself: ours, so no --allow-destroy.
    let again = TargetSpec {
        path: t.path.clone(),
        create_size: None,
    };
    if created_by_iosurvey(&t.path) {
        // While this run holds it, another is refused, with --shared too
        // (this run did not give --shared).
        assert!(matches!(
            open_target(&again, write),
            Err(TargetError::Refused(Refusal::InUse(_)))
        ));
        let shared = Claim {
            shared: true,
            expect: None,
        };
        assert!(matches!(
            open_target_claimed(&again, write, &shared),
            Err(TargetError::Refused(Refusal::InUseUnshared(_)))
        ));
    }
    t.remove_if_created().unwrap();
    // The trash made ahead for the test file's directory goes at the end
    // of the run.
    crate::guard::trash::release_reserved();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

fn xattrs_supported(dir: &Path) -> bool {
    let probe = dir.join("xattr-probe");
    std::fs::write(&probe, b"x").unwrap();
    let ok =
        rustix::fs::setxattr(&probe, "user.probe", b"1", rustix::fs::XattrFlags::empty()).is_ok();
    std::fs::remove_file(probe).unwrap();
    ok
}

#[test]
fn foreign_files_are_written_only_with_allow_destroy_and_never_when_readonly() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("theirs");
    std::fs::write(&f, vec![1u8; 8192]).unwrap();
    let spec = TargetSpec {
        path: f.clone(),
        create_size: None,
    };
    let mut opts = OpenOptions {
        write: true,
        trim: false,
        ..Default::default()
    };
    assert!(matches!(
        open_target(&spec, opts),
        Err(TargetError::Refused(Refusal::ForeignFile(_)))
    ));
    assert!(matches!(
        plan_geometry(&spec, opts),
        Err(TargetError::Refused(_))
    ));
    opts.policy.allow_destroy = true;
    assert!(open_target(&spec, opts).is_ok());
    opts.policy.readonly = true;
    assert!(matches!(
        open_target(&spec, opts),
        Err(TargetError::Refused(Refusal::ReadOnly(_)))
    ));
}

#[test]
fn a_stop_during_layout_removes_the_half_written_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("half");
    let stop = AtomicBool::new(true);
    let spec = TargetSpec {
        path: f.clone(),
        create_size: Some(64 << 20),
    };
    let opts = OpenOptions {
        stop: Some(&stop),
        ..Default::default()
    };
    assert!(matches!(
        open_target(&spec, opts),
        Err(TargetError::Interrupted(_))
    ));
    assert!(!f.exists());
}

fn new_file(path: &Path, size: u64) -> TargetSpec {
    TargetSpec {
        path: path.to_path_buf(),
        create_size: Some(size),
    }
}

#[test]
fn nothing_is_created_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(&elsewhere, &dangling).unwrap();
    let write = OpenOptions {
        write: true,
        trim: false,
        ..Default::default()
    };
    for opts in [OpenOptions::default(), write] {
        assert!(matches!(
            open_target(&new_file(&dangling, 1 << 20), opts),
            Err(TargetError::Refused(Refusal::DanglingSymlink(_)))
        ));
        assert!(matches!(
            plan_geometry(&new_file(&dangling, 1 << 20), opts),
            Err(TargetError::Refused(Refusal::DanglingSymlink(_)))
        ));
    }
    assert!(!elsewhere.exists());

    // A symlink planted at the name of the test file of a directory.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"user data").unwrap();
    std::os::unix::fs::symlink(&victim, test_file_in(dir.path())).unwrap();
    assert!(matches!(
        open_target(&new_file(dir.path(), 1 << 20), write),
        Err(TargetError::Refused(Refusal::Exists(_)))
    ));
    assert_eq!(std::fs::read(&victim).unwrap(), b"user data");
}

#[test]
fn readonly_lays_out_nothing_even_for_reads() {
    let dir = tempfile::tempdir().unwrap();
    let ro = OpenOptions {
        policy: WritePolicy {
            readonly: true,
            ..Default::default()
        },
        ..Default::default()
    };
    for p in [dir.path().join("new"), dir.path().to_path_buf()] {
        assert!(matches!(
            open_target(&new_file(&p, 1 << 20), ro),
            Err(TargetError::Refused(Refusal::ReadOnlyLayout(_)))
        ));
        assert!(matches!(
            plan_geometry(&new_file(&p, 1 << 20), ro),
            Err(TargetError::Refused(Refusal::ReadOnlyLayout(_)))
        ));
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn the_open_refuses_what_planning_did_not_see() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    std::fs::write(&f, vec![1u8; 8192]).unwrap();
    let spec = TargetSpec {
        path: f.clone(),
        create_size: None,
    };
    let planned = plan_target(&spec, OpenOptions::default(), &Claim::default()).unwrap();
    assert_eq!(planned.geometry.size, 8192);
    // Another file put in its place after planning.
    let other = dir.path().join("other");
    std::fs::write(&other, vec![2u8; 8192]).unwrap();
    std::fs::rename(&other, &f).unwrap();
    let claim = Claim {
        shared: false,
        expect: Some(planned.identity),
    };
    assert!(matches!(
        open_target_claimed(&spec, OpenOptions::default(), &claim),
        Err(TargetError::Refused(Refusal::Changed(_)))
    ));
}

#[test]
fn a_test_file_replaced_by_another_is_not_removed() {
    let dir = tempfile::tempdir().unwrap();
    let t = open_target(&new_file(dir.path(), 1 << 20), OpenOptions::default()).unwrap();
    assert!(matches!(t.created, Created::File));
    let theirs = dir.path().join("theirs");
    std::fs::write(&theirs, b"user data").unwrap();
    std::fs::rename(&theirs, &t.path).unwrap();
    assert!(t.remove_if_created().is_err());
    assert_eq!(std::fs::read(&t.path).unwrap(), b"user data");
}

#[test]
fn a_test_file_is_removed_through_its_directory_not_its_path() {
    let root = tempfile::tempdir().unwrap();
    let a = root.path().join("a");
    std::fs::create_dir(&a).unwrap();
    let spec = TargetSpec {
        path: a.clone(),
        create_size: Some(1 << 20),
    };
    let t = open_target(&spec, OpenOptions::default()).unwrap();
    let name = test_file_name();
    // The directory is moved away and another put at its path, holding a
    // user's file under the test file's name.
    let b = root.path().join("b");
    std::fs::rename(&a, &b).unwrap();
    std::fs::create_dir(&a).unwrap();
    std::fs::write(a.join(&name), b"user data").unwrap();
    t.remove_if_created().unwrap();
    assert!(!b.join(&name).exists(), "the test file itself is removed");
    assert_eq!(std::fs::read(a.join(&name)).unwrap(), b"user data");
}
