//! What a mode was asked for beyond its points (display choices, not
//! results), kept in the document so that a saved run is presented as it
//! was: diskperf's label, scale and frame rate; ORION's run level, cache
//! warm-up and own options; quick's profile.

/// Display choices of the command (not results), kept in the report
/// (`diskperf`) so that a saved report is presented as the run was.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DiskperfSettings {
    /// Echoed in the header (diskperf's `-n`).
    pub label: Option<String>,
    /// Every rate is multiplied by this (diskperf's `-s`).
    pub scale: f64,
    /// Frames per second: adds a block of "x real time" figures, taking the
    /// first request size as one frame.
    pub fps: Option<f64>,
    /// The frame preset the first size came from, e.g. `hd-444 (1920x1080x4)`.
    pub frame: Option<String>,
}

impl Default for DiskperfSettings {
    fn default() -> Self {
        DiskperfSettings {
            label: None,
            scale: 1.0,
            fps: None,
            frame: None,
        }
    }
}

/// What `matrix` was asked for beyond its points, kept in the report so
/// that its summary says it as ORION does.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct MatrixSettings {
    /// ORION's run level: `simple`, `normal`, `advanced`, `oltp` or `dss`.
    pub run: String,
    /// The cache warm-up given (`-cache_size` or `--cache-warm`); `None`
    /// when none was (ORION's "Not Entered").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Cache>,
    /// ORION's own options from the command line, in ORION's spelling and
    /// units (`-run advanced -size_small 4`), for the summary's
    /// `Commandline:`: iosurvey's own flags and the targets left out. Left
    /// out in reports older than it (the summary then shows the line as
    /// typed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orion_command_line: Option<Vec<String>>,
}

/// What `quick` ran: the profile of the card (whose rows are the points'
/// tests, so a reader draws any profile from the points alone).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct QuickSettings {
    /// The profile's name (`cdm8`, `cdm8-nvme`, `cdm7`).
    pub profile: String,
    /// What the profile is, e.g. `CrystalDiskMark 8 and KDiskMark default`.
    pub description: String,
}

/// A cache warm-up as given.
#[derive(
    Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Cache {
    /// Bytes moved unmeasured (ORION's `-cache_size`, in MB there).
    Bytes(u64),
    /// Nanoseconds of unmeasured load.
    Time(u64),
}
