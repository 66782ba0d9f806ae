//! Names for the errno values a failed I/O reports.

/// `5` -> `"EIO"`; unknown values become `"E<n>"`. `0` is not an errno but
/// a short transfer ([`iosurvey_stats::SHORT_TRANSFER`]): `"short"`.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        iosurvey_stats::SHORT_TRANSFER => "short",
        1 => "EPERM",
        2 => "ENOENT",
        4 => "EINTR",
        5 => "EIO",
        6 => "ENXIO",
        9 => "EBADF",
        11 => "EAGAIN",
        12 => "ENOMEM",
        13 => "EACCES",
        14 => "EFAULT",
        16 => "EBUSY",
        22 => "EINVAL",
        27 => "EFBIG",
        28 => "ENOSPC",
        30 => "EROFS",
        61 => "ENODATA",
        74 => "EBADMSG",
        95 => "EOPNOTSUPP",
        110 => "ETIMEDOUT",
        121 => "EREMOTEIO",
        122 => "EDQUOT",
        125 => "ECANCELED",
        _ => return format!("E{errno}"),
    };
    name.to_string()
}

/// How a report line names a failure: `EIO (errno 5)`, or for a short
/// transfer `short transfer (fewer bytes than asked, no errno)`.
pub fn failure_text(errno: i32) -> String {
    if errno == iosurvey_stats::SHORT_TRANSFER {
        "short transfer (fewer bytes than asked, no errno)".to_string()
    } else {
        format!("{} (errno {errno})", errno_name(errno))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names() {
        assert_eq!(super::errno_name(28), "ENOSPC");
        assert_eq!(super::errno_name(9999), "E9999");
        assert_eq!(super::errno_name(iosurvey_stats::SHORT_TRANSFER), "short");
        assert_eq!(super::failure_text(5), "EIO (errno 5)");
        assert!(super::failure_text(0).starts_with("short transfer"));
    }
}
