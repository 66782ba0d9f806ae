//! Names for the errno values a failed I/O reports.

/// `5` -> `"EIO"`; unknown values become `"E<n>"`.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
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

#[cfg(test)]
mod tests {
    #[test]
    fn names() {
        assert_eq!(super::errno_name(28), "ENOSPC");
        assert_eq!(super::errno_name(9999), "E9999");
    }
}
