//! The video frame presets (DPX, HD, UHD, ...), a frame's size on disk, and
//! the frame rates the real-time verdict judges: plain data that the video
//! mode plans with and the video presenters print.

use crate::Fps;

/// Frames are laid out on this boundary (frametest's 4096), or on the
/// target's O_DIRECT alignment when that is larger.
pub const FRAME_ALIGN: u64 = 4096;
/// The DPX header frametest adds by default.
pub const DPX_HEADER: u64 = 64 << 10;
/// The largest frame: one I/O buffer per frame piece must fit in memory
/// per thread.
pub const MAX_FRAME: u64 = 1 << 30;

/// A frame preset: picture size and bytes per pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameFormat {
    pub name: &'static str,
    /// Other names accepted by `--format` (frametest's `sd`, `hd`, `2k`, `4k`).
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub width: u64,
    pub height: u64,
    /// 2 for 8-bit 4:2:2, 4 for 4:4:4:4 and 10-bit DPX RGB.
    pub bytes_per_pixel: u64,
    /// A DPX file: carries a header ([`DPX_HEADER`] unless `--header`).
    pub dpx: bool,
}

impl FrameFormat {
    /// Picture bytes, without any header.
    pub fn picture_bytes(&self) -> u64 {
        self.width * self.height * self.bytes_per_pixel
    }

    /// The header used when `--header` is not given.
    pub fn default_header(&self) -> u64 {
        if self.dpx {
            DPX_HEADER
        } else {
            0
        }
    }

    /// Bytes per frame with the default header, aligned as written.
    pub fn frame_bytes(&self) -> u64 {
        frame_bytes(self.picture_bytes(), self.default_header(), FRAME_ALIGN)
    }
}

const fn preset(
    name: &'static str,
    aliases: &'static [&'static str],
    description: &'static str,
    width: u64,
    height: u64,
    bytes_per_pixel: u64,
    dpx: bool,
) -> FrameFormat {
    FrameFormat {
        name,
        aliases,
        description,
        width,
        height,
        bytes_per_pixel,
        dpx,
    }
}

/// Every preset, smallest first.
pub const FORMATS: &[FrameFormat] = &[
    preset(
        "ntsc-422",
        &["sd"],
        "NTSC SD, 8-bit 4:2:2",
        720,
        486,
        2,
        false,
    ),
    preset("pal-422", &[], "PAL SD, 8-bit 4:2:2", 720, 576, 2, false),
    preset(
        "ntsc-4444",
        &[],
        "NTSC SD, 8-bit 4:4:4:4",
        720,
        486,
        4,
        false,
    ),
    preset("pal-4444", &[], "PAL SD, 8-bit 4:4:4:4", 720, 576, 4, false),
    preset(
        "hd720-422",
        &[],
        "HD 720p, 8-bit 4:2:2",
        1280,
        720,
        2,
        false,
    ),
    preset(
        "hd-422",
        &["hd", "hd1080-422"],
        "HD 1080, 8-bit 4:2:2",
        1920,
        1080,
        2,
        false,
    ),
    preset(
        "hd-4444",
        &["hd1080-4444"],
        "HD 1080, 8-bit 4:4:4:4",
        1920,
        1080,
        4,
        false,
    ),
    // DPX by its name: `2k` and `4k` are sizes (2048 and 4096 bytes)
    // wherever a size is taken, so never a preset's name.
    preset(
        "dpx-2k",
        &[],
        "DPX 2K full aperture, 10-bit RGB",
        2048,
        1556,
        4,
        true,
    ),
    preset(
        "uhd-422",
        &[],
        "UHD 2160p, 8-bit 4:2:2",
        3840,
        2160,
        2,
        false,
    ),
    preset(
        "uhd-4444",
        &[],
        "UHD 2160p, 8-bit 4:4:4:4",
        3840,
        2160,
        4,
        false,
    ),
    preset(
        "dpx-4k",
        &[],
        "DPX 4K full aperture, 10-bit RGB",
        4096,
        3112,
        4,
        true,
    ),
    preset(
        "8k-422",
        &["uhd2-422"],
        "8K UHD 4320p, 8-bit 4:2:2",
        7680,
        4320,
        2,
        false,
    ),
];

/// The preset called `name` (or one of its aliases), case-insensitively.
pub fn find_format(name: &str) -> Option<&'static FrameFormat> {
    FORMATS.iter().find(|f| {
        f.name.eq_ignore_ascii_case(name) || f.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    })
}

/// Picture plus header, rounded up to `align`; `u64::MAX` when that does
/// not fit, so a size near 2^64 is refused as too large instead of
/// wrapping round to a small one.
pub fn frame_bytes(picture: u64, header: u64, align: u64) -> u64 {
    let align = align.max(1);
    picture
        .checked_add(header)
        .and_then(|b| b.div_ceil(align).checked_mul(align))
        .unwrap_or(u64::MAX)
}

/// The frame rates the verdict table judges, with their usual names.
pub const VERDICT_RATES: [(&str, Fps); 8] = [
    (
        "23.976",
        Fps {
            num: 24000,
            den: 1001,
        },
    ),
    ("24", Fps { num: 24, den: 1 }),
    ("25", Fps { num: 25, den: 1 }),
    (
        "29.97",
        Fps {
            num: 30000,
            den: 1001,
        },
    ),
    ("30", Fps { num: 30, den: 1 }),
    ("50", Fps { num: 50, den: 1 }),
    (
        "59.94",
        Fps {
            num: 60000,
            den: 1001,
        },
    ),
    ("60", Fps { num: 60, den: 1 }),
];
