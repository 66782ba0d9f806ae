//! The frame presets (DPX, HD, UHD, ...) and a frame's size on disk, kept
//! in `iosurvey-model` (the presenters print them too).

pub use iosurvey_model::video::{
    find_format, frame_bytes, FrameFormat, DPX_HEADER, FORMATS, FRAME_ALIGN, MAX_FRAME,
};
