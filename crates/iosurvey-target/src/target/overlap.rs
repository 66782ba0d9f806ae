//! Targets of one run judged together: the same storage named twice (an
//! alias, a hard link, a partition and its disk, a loop device over
//! another target, a file through an overlay and on its layer) would be
//! counted twice, and written by two streams at once.

use super::claim::Identity;
use crate::guard::family::{loops_on_file, members, FileUses};
use crate::guard::Refusal;
use iosurvey_workload::TargetSpec;
use std::path::PathBuf;

/// Refuses block devices that overlap one another (a partition and its
/// disk, a loop device over another target), a file that backs a loop
/// device in a target's family, and two files that are one (through an
/// overlay and on its layer): one run would count the same storage twice.
pub fn check_overlap(specs: &[TargetSpec], identity: &[Option<Identity>]) -> Result<(), Refusal> {
    check_files_overlap(specs, identity)?;
    let devices: Vec<(usize, u64)> = identity
        .iter()
        .enumerate()
        .filter_map(|(i, id)| match id {
            Some(Identity::Block(rdev)) => Some((i, *rdev)),
            _ => None,
        })
        .collect();
    let overlap = |i: usize, j: usize| {
        let (first, second) = (specs[i.min(j)].path.clone(), specs[i.max(j)].path.clone());
        Err(Refusal::Overlap { first, second })
    };
    let families: Vec<_> = devices.iter().map(|&(_, rdev)| members(rdev)).collect();
    for (n, &(i, _)) in devices.iter().enumerate() {
        if let Some(&(j, _)) = devices[n + 1..]
            .iter()
            .find(|(_, r)| families[n].contains(r))
        {
            return overlap(i, j);
        }
    }
    if devices.is_empty() {
        return Ok(());
    }
    for (i, id) in identity.iter().enumerate() {
        let Some(Identity::File { dev, ino }) = id else {
            continue;
        };
        // A loop device whose backing cannot be told is judged when the
        // file is opened for writing; here only the known ones count.
        let backs = loops_on_file(*dev, *ino).0;
        let hit = devices
            .iter()
            .zip(&families)
            .find(|(_, fam)| backs.iter().any(|l| fam.contains(l)));
        if let Some((&(j, _), _)) = hit {
            return overlap(i, j);
        }
    }
    Ok(())
}

/// Refuses two file targets that are one file by different identities: a
/// file seen through an overlay and the same file on the overlay's layer.
fn check_files_overlap(specs: &[TargetSpec], identity: &[Option<Identity>]) -> Result<(), Refusal> {
    let files: Vec<(usize, (u64, u64))> = identity
        .iter()
        .enumerate()
        .filter_map(|(i, id)| match id {
            Some(Identity::File { dev, ino }) => Some((i, (*dev, *ino))),
            _ => None,
        })
        .collect();
    if files.len() < 2 {
        return Ok(());
    }
    let uses = FileUses::now();
    for (n, &(i, a)) in files.iter().enumerate() {
        if let Some(&(j, _)) = files[n + 1..].iter().find(|(_, b)| uses.same_file(a, *b)) {
            let (first, second) = (specs[i].path.clone(), specs[j].path.clone());
            return Err(Refusal::Overlap { first, second });
        }
    }
    Ok(())
}

/// Refuses, among targets of one host that several processes (MPI ranks)
/// were given, one target named twice (an alias, a hard link) and devices
/// that overlap, as the targets of one process are judged.
pub fn check_together(names: &[PathBuf], identity: &[Option<Identity>]) -> Result<(), Refusal> {
    for (i, id) in identity.iter().enumerate() {
        if let Some(j) = identity[..i].iter().position(|o| id.is_some() && o == id) {
            return Err(Refusal::SameTarget {
                first: names[j].clone(),
                second: names[i].clone(),
            });
        }
    }
    let specs: Vec<TargetSpec> = names
        .iter()
        .map(|p| TargetSpec {
            path: p.clone(),
            create_size: None,
        })
        .collect();
    check_overlap(&specs, identity)
}
