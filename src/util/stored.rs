//! How a time or a span is written in hal's files and JSON documents: one `Stamp` and one `Duration` in memory, the older shapes on disk kept byte for byte, each behind `#[serde(with = …)]`.
//!
//! | helper | shape | where |
//! |---|---|---|
//! | `rfc3339` | `2026-11-30T12:03:11Z`, to the second | `status --json`, the node's view |
//! | `rfc3339_trimmed` | Go's: the fraction without trailing zeros | a kept run's end, a container's start, the inspect cache's times |
//! | `rfc3339_nanos` | nine digits of fraction | a kept run's lines |
//! | `unix_ms` | `i64` Unix milliseconds | the state file's records |
//! | `unix_s` | `i64` Unix seconds | the container ledger |
//! | `span` | `2m`, `1h30m`, as the config writes it | `status --json`'s `limit.interval` |
//! | `span_ms` | `u64` milliseconds | a hold's backoff |
//!
//! A number out of the years jiff holds reads clamped, never as an error: any
//! file hal has written reads.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::util::timefmt::{self, Stamp};

fn read_text<'de, D: Deserializer<'de>>(d: D) -> Result<Stamp, D::Error> {
    let text = String::deserialize(d)?;
    timefmt::parse(&text).ok_or_else(|| D::Error::custom(format!("not an RFC 3339 time: {text:?}")))
}

/// RFC 3339 to the second (`Stamp::rfc3339`). Written only.
pub(crate) mod rfc3339 {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(t: &Stamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&t.rfc3339())
    }

    pub(crate) mod option {
        use super::*;

        pub(crate) fn serialize<S: Serializer>(t: &Option<Stamp>, s: S) -> Result<S::Ok, S::Error> {
            t.map(Stamp::rfc3339).serialize(s)
        }
    }
}

/// RFC 3339 as Go prints it (`Stamp::rfc3339_trimmed`).
pub(crate) mod rfc3339_trimmed {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(t: &Stamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&t.rfc3339_trimmed())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Stamp, D::Error> {
        read_text(d)
    }

    /// Or `null`. Read as an engine's time (`timefmt::parse_set`): Go's
    /// zero time, the engine's "never" that an older hal wrote as it was
    /// told, reads as `None`, as does text that is no time.
    pub(crate) mod option {
        use super::*;

        pub(crate) fn serialize<S: Serializer>(t: &Option<Stamp>, s: S) -> Result<S::Ok, S::Error> {
            t.map(Stamp::rfc3339_trimmed).serialize(s)
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Stamp>, D::Error> {
            Ok(Option::<String>::deserialize(d)?
                .as_deref()
                .and_then(timefmt::parse_set))
        }
    }
}

/// RFC 3339 with nine digits of fraction (`Stamp::rfc3339_nanos`).
pub(crate) mod rfc3339_nanos {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(t: &Stamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&t.rfc3339_nanos())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Stamp, D::Error> {
        read_text(d)
    }
}

/// Unix milliseconds (rounded down).
pub(crate) mod unix_ms {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(t: &Stamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(t.millis())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Stamp, D::Error> {
        i64::deserialize(d).map(Stamp::from_millis)
    }

    pub(crate) mod option {
        use super::*;

        pub(crate) fn serialize<S: Serializer>(t: &Option<Stamp>, s: S) -> Result<S::Ok, S::Error> {
            t.map(Stamp::millis).serialize(s)
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Stamp>, D::Error> {
            Ok(Option::<i64>::deserialize(d)?.map(Stamp::from_millis))
        }
    }

    pub(crate) mod list {
        use super::*;

        pub(crate) fn serialize<S: Serializer>(t: &[Stamp], s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(t.iter().map(|t| t.millis()))
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Stamp>, D::Error> {
            Ok(Vec::<i64>::deserialize(d)?
                .into_iter()
                .map(Stamp::from_millis)
                .collect())
        }
    }
}

/// Unix seconds (rounded down).
pub(crate) mod unix_s {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(t: &Stamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(t.secs())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Stamp, D::Error> {
        i64::deserialize(d).map(Stamp::from_secs)
    }
}

/// A span as the config writes it (`util::duration::format`: `120s` reads
/// `2m`); zero, a figure not filled in (the config takes no zero window), as
/// empty text, as it has always read. Written only.
pub(crate) mod span {
    use super::*;
    use std::time::Duration;

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        match d.is_zero() {
            true => s.serialize_str(""),
            false => s.serialize_str(&crate::util::duration::format(*d)),
        }
    }
}

/// A span in whole milliseconds.
pub(crate) mod span_ms {
    use super::*;
    use std::time::Duration;

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    //! Each shape read from the bytes hal has written, and written back the same.

    use std::time::Duration;

    use serde::{Deserialize, Serialize};

    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Old {
        #[serde(with = "unix_ms")]
        ms: Stamp,
        #[serde(with = "unix_ms::option")]
        free: Option<Stamp>,
        #[serde(with = "unix_ms::list")]
        starts: Vec<Stamp>,
        #[serde(with = "span_ms")]
        backoff_ms: Duration,
        #[serde(with = "unix_s")]
        created: Stamp,
        #[serde(with = "rfc3339_trimmed")]
        at: Stamp,
        #[serde(with = "rfc3339_nanos")]
        time: Stamp,
    }

    #[test]
    fn every_shape_reads_and_is_written_back_byte_for_byte() {
        let text = r#"{"ms":1764900060500,"free":null,"starts":[-1,0,1764900000000],"backoff_ms":30000,"created":1764900000,"at":"2026-01-01T03:12:00.25Z","time":"2026-01-01T03:11:59.000000001Z"}"#;
        let old: Old = serde_json::from_str(text).unwrap();
        assert_eq!(old.ms.nanos(), 500_000_000);
        assert_eq!(old.backoff_ms, Duration::from_secs(30));
        assert_eq!(serde_json::to_string(&old).unwrap(), text);
        let text = text.replace("\"free\":null", "\"free\":1764900600000");
        let old: Old = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&old).unwrap(), text);
    }

    #[test]
    fn published_shapes_are_as_before() {
        #[derive(Serialize)]
        struct Doc {
            #[serde(with = "rfc3339::option")]
            since: Option<Stamp>,
            #[serde(with = "rfc3339_trimmed::option")]
            started: Option<Stamp>,
            #[serde(with = "span")]
            interval: Duration,
            #[serde(with = "span")]
            unfilled: Duration,
        }
        let t = timefmt::parse("2026-01-01T03:12:00.25Z");
        let doc = Doc {
            since: t,
            started: t,
            interval: Duration::from_secs(5400),
            unfilled: Duration::ZERO,
        };
        assert_eq!(
            serde_json::to_string(&doc).unwrap(),
            r#"{"since":"2026-01-01T03:12:00Z","started":"2026-01-01T03:12:00.25Z","interval":"1h30m","unfilled":""}"#
        );
    }

    #[test]
    fn a_number_out_of_range_reads_clamped() {
        let old: Vec<Stamp> = unix_ms::list::deserialize(&mut serde_json::Deserializer::from_str(
            "[9223372036854775807,-9223372036854775808]",
        ))
        .unwrap();
        assert!(old[0] > old[1]);
    }
}
