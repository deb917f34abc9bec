//! Durations as users write them: `30s`, `5m`, `1h30m`, `250ms`, or a bare number of seconds.

use std::time::Duration;

/// The longest duration any setting takes (a run, a phase, a think time, a period): a year.
/// Longer values are typos (`1e30`), and clocks and timers overflow on them.
pub const MAX_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

/// Parses a duration; the error says what is accepted.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!(
            "'{text}' is negative; durations are positive, e.g. 30s or 5m"
        ));
    }
    let too_long = || {
        format!("'{text}' is longer than a year, the longest duration tidebench takes; write e.g. 30s, 5m or 12h")
    };
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            if secs > MAX_DURATION.as_secs_f64() {
                return Err(too_long());
            }
            return Ok(Duration::from_secs_f64(secs));
        }
    }
    let d = humantime::parse_duration(t)
        .map_err(|_| format!("'{text}' is not a duration; write e.g. 30s, 5m, 1h or 250ms"))?;
    if d > MAX_DURATION {
        return Err(too_long());
    }
    Ok(d)
}

/// Shortest readable form: `30s`, `5m`, `1h 30m`.
pub fn format_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0s".to_string();
    }
    humantime::format_duration(d).to_string()
}

/// serde adapter so plans and configs carry `"30s"` rather than `{secs, nanos}`.
pub mod serde_duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_duration(&text).map_err(serde::de::Error::custom)
    }

    /// The same for an optional duration (absent: `None`).
    pub mod option {
        use std::time::Duration;

        use serde::{Deserialize, Deserializer, Serializer};

        pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
            match d {
                Some(d) => super::serialize(d, s),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
            let text = Option::<String>::deserialize(d)?;
            text.map(|t| super::super::parse_duration(&t).map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("12").unwrap(), Duration::from_secs(12));
        assert!(parse_duration("-3s").unwrap_err().contains("negative"));
        assert!(parse_duration("soon")
            .unwrap_err()
            .contains("not a duration"));
        for huge in [
            "1e30",
            "18446744073709551615",
            "18446744073709551615s",
            "400days",
        ] {
            assert!(
                parse_duration(huge)
                    .unwrap_err()
                    .contains("longer than a year"),
                "{huge}"
            );
        }
        assert_eq!(
            parse_duration("365days").unwrap(),
            Duration::from_secs(365 * 86400)
        );
    }

    #[test]
    fn formats_round_trip() {
        for text in ["30s", "5m", "1h 30m", "250ms"] {
            let d = parse_duration(text).unwrap();
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
    }
}
