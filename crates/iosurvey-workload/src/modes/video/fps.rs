//! Frame rates: the ones the verdict judges, and parsing `24`, `29.97` or
//! `30000/1001` exactly.

use crate::model::Fps;
pub use iosurvey_model::video::VERDICT_RATES;

/// Parses a frame rate: `24`, `29.97`, or a fraction such as `30000/1001`.
/// The NTSC names 23.976, 29.97 and 59.94 mean their exact fractions.
pub fn parse_fps(s: &str) -> Result<Fps, String> {
    let bad =
        || format!("invalid frame rate '{s}': give frames per second (24, 29.97, 30000/1001)");
    let s = s.trim();
    if let Some((_, exact)) = VERDICT_RATES.iter().find(|(name, _)| *name == s) {
        return Ok(*exact);
    }
    let fps = if let Some((n, d)) = s.split_once('/') {
        let num: u64 = n.trim().parse().map_err(|_| bad())?;
        let den: u64 = d.trim().parse().map_err(|_| bad())?;
        Fps { num, den }
    } else {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty() && frac.is_empty() || frac.len() > 6 {
            return Err(bad());
        }
        let digits = format!("{int}{frac}");
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let num: u64 = digits.parse().map_err(|_| bad())?;
        Fps {
            num,
            den: 10u64.pow(frac.len() as u32),
        }
    };
    if fps.num == 0 || fps.den == 0 {
        return Err(format!("frame rate '{s}' must be greater than zero"));
    }
    if fps.value() > 1_000_000.0 {
        return Err(format!("frame rate '{s}' is above 1000000 fps"));
    }
    Ok(fps)
}
