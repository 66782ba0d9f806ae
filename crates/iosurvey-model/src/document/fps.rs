//! Reads a frame rate saved as a fraction (`{"num", "den"}`, schema version
//! 4 on) or as the float of older reports, which becomes the fraction of
//! the rate it was: one of the named rates (NTSC's 30000/1001 and its kin)
//! when it is that rate to within rounding, else the float in millionths.

use crate::video::VERDICT_RATES;
use crate::Fps;
use serde::{Deserialize, Deserializer};

/// How close an old report's float must be to a named rate to be it:
/// floats of 24000/1001 and the like were written to 17 figures.
const SAME_RATE: f64 = 1e-9;

/// `fps` as a fraction, or as an older report's float.
pub(crate) fn read_fps<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Fps>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Saved {
        Fraction(Fps),
        Float(f64),
    }
    Ok(match Option::<Saved>::deserialize(d)? {
        None => None,
        Some(Saved::Fraction(f)) => Some(f),
        Some(Saved::Float(v)) => Some(from_float(v)),
    })
}

/// The fraction an older report's `fps` float stood for.
pub fn from_float(v: f64) -> Fps {
    if let Some((_, named)) = VERDICT_RATES
        .iter()
        .find(|(_, r)| (r.value() - v).abs() < SAME_RATE)
    {
        return *named;
    }
    const MILLION: u64 = 1_000_000;
    let num = (v * MILLION as f64).round().max(0.0) as u64;
    let g = gcd(num, MILLION);
    Fps {
        num: num / g,
        den: MILLION / g,
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_floats_become_the_fractions_they_stood_for() {
        let ntsc = from_float(30000.0 / 1001.0);
        assert_eq!((ntsc.num, ntsc.den), (30000, 1001));
        let film = from_float(24.0);
        assert!(film.same_rate(Fps { num: 24, den: 1 }), "{film:?}");
        let odd = from_float(12.5);
        assert_eq!((odd.num, odd.den), (25, 2));
    }

    #[test]
    fn both_shapes_read() {
        #[derive(Deserialize)]
        struct Holder {
            #[serde(deserialize_with = "read_fps")]
            fps: Option<Fps>,
        }
        let read = |s: &str| serde_json::from_str::<Holder>(s).unwrap().fps;
        assert_eq!(read(r#"{"fps": null}"#), None);
        assert_eq!(
            read(r#"{"fps": {"num": 24000, "den": 1001}}"#),
            Some(Fps {
                num: 24000,
                den: 1001
            })
        );
        assert_eq!(
            read(r#"{"fps": 23.976023976023978}"#),
            Some(Fps {
                num: 24000,
                den: 1001
            })
        );
    }
}
