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

/// How a preset's pixels are packed into bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    /// Whole bytes a pixel, rows unpadded: 2 for 8-bit 4:2:2 (UYVY), 4 for
    /// 8-bit 4:4:4:4 and for 10-bit DPX RGB. A 10-bit DPX pixel is its
    /// three 10-bit components in one 32-bit word (SMPTE 268M's "filled"
    /// packing, 2 bits spare): 2048x1556 is 12,746,752 picture bytes.
    PerPixel(u64),
    /// v210 (10-bit 4:2:2 Y'CbCr, the SDI capture format of QuickTime,
    /// Blackmagic and AJA): every 6 pixels (12 samples) in four 32-bit
    /// little-endian words, 16 bytes, three samples a word; each row starts
    /// on a 128-byte boundary, padded with zeros (wiki.multimedia.cx/V210,
    /// FFmpeg's v210 codec). 1920 wide: 320 groups, 5120 bytes a row,
    /// already a multiple of 128: 5,529,600 bytes a 1080-row frame.
    V210,
}

/// v210's row alignment in bytes.
pub const V210_ROW_ALIGN: u64 = 128;

impl Packing {
    /// The bytes of one row of `width` pixels.
    pub fn row_bytes(self, width: u64) -> u64 {
        match self {
            Packing::PerPixel(b) => width * b,
            Packing::V210 => (width.div_ceil(6) * 16).div_ceil(V210_ROW_ALIGN) * V210_ROW_ALIGN,
        }
    }
}

impl std::fmt::Display for Packing {
    /// `2` (bytes a pixel) or `v210`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Packing::PerPixel(b) => write!(f, "{b}"),
            Packing::V210 => f.write_str("v210"),
        }
    }
}

/// A frame preset: picture size and how its pixels are packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameFormat {
    pub name: &'static str,
    /// Other names accepted by `--format` (frametest's `sd`, `hd`, `2k`, `4k`).
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub width: u64,
    pub height: u64,
    pub packing: Packing,
    /// A DPX file: carries a header ([`DPX_HEADER`] unless `--header`).
    pub dpx: bool,
}

impl FrameFormat {
    /// Picture bytes, without any header.
    pub fn picture_bytes(&self) -> u64 {
        self.packing.row_bytes(self.width) * self.height
    }

    /// `720x576x2` (bytes a pixel) or `1920x1080 v210`, for messages.
    pub fn geometry(&self) -> String {
        match self.packing {
            Packing::PerPixel(b) => format!("{}x{}x{b}", self.width, self.height),
            Packing::V210 => format!("{}x{} v210", self.width, self.height),
        }
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
        packing: Packing::PerPixel(bytes_per_pixel),
        dpx,
    }
}

/// A v210 preset (10-bit 4:2:2, never a DPX file).
const fn v210(
    name: &'static str,
    aliases: &'static [&'static str],
    description: &'static str,
    width: u64,
    height: u64,
) -> FrameFormat {
    FrameFormat {
        name,
        aliases,
        description,
        width,
        height,
        packing: Packing::V210,
        dpx: false,
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
    // 1920 / 6 = 320 groups of 16 bytes: 5120-byte rows (40 x 128),
    // 5,529,600 bytes a frame.
    v210(
        "hd-v210",
        &["hd1080-v210"],
        "HD 1080, 10-bit 4:2:2 v210",
        1920,
        1080,
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
    // wherever a size is taken, so never a preset's name. 10-bit RGB,
    // three components in a 32-bit word: 2048 x 1556 x 4 = 12,746,752
    // picture bytes. SMPTE 268M's own headers (file information 768 bytes,
    // image information 640, orientation 256, film 256, television 128)
    // come to 2048 bytes; frametest writes a 64 KiB header instead
    // ([`DPX_HEADER`], `--header` to change it): 12,812,288 bytes a frame,
    // frametest's `-w12512` KB.
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
    // 3840 / 6 = 640 groups: 10240-byte rows (80 x 128), 22,118,400 bytes
    // a frame.
    v210("uhd-v210", &[], "UHD 2160p, 10-bit 4:2:2 v210", 3840, 2160),
    preset(
        "uhd-4444",
        &[],
        "UHD 2160p, 8-bit 4:4:4:4",
        3840,
        2160,
        4,
        false,
    ),
    // 4096 x 3112 x 4 = 50,987,008 picture bytes + 64 KiB: 51,052,544.
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
