//! The local time zone without a zone library: `TZ`, or `/etc/localtime` read as TZif (RFC 8536), to turn local wall-clock times into instants.
//!
//! Read as the C library does: `TZ` unset means `/etc/localtime` (UTC when it
//! is missing), `TZ=""` means UTC, `TZ=:NAME` or `TZ=NAME` names a file under
//! the zone database (`TZDIR`, else `/usr/share/zoneinfo`) or an absolute
//! path, and otherwise `TZ` is a POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`.
//! After a TZif file's last transition its footer rule applies, as RFC 8536 says.

use std::path::{Path, PathBuf};

use crate::util::timefmt::days_from_civil;

/// Why a TZif file or a POSIX `TZ` rule cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ZoneError {
    #[error("not a TZif file (too short)")]
    TooShort,
    #[error("not a TZif file")]
    NotTzif,
    #[error("TZif file is cut short")]
    CutShort,
    #[error("bad type index")]
    BadTypeIndex,
    #[error("no local time types")]
    NoTypes,
    #[error("{0:?} is not a time zone rule")]
    NotARule(String),
    #[error("{0:?}: a daylight-saving zone needs its rules (,Mm.w.d,Mm.w.d)")]
    NoDstRules(String),
}

/// A zone: UTC offsets by instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Zone {
    /// (instant, offset east of UTC in seconds), ascending.
    transitions: Vec<(i64, i32)>,
    /// The offset before the first transition.
    initial: i32,
    /// What applies after the last transition (or always, with none).
    rule: Option<Rule>,
}

/// A POSIX `TZ` rule: a fixed offset, or standard and daylight time between two edges.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Rule {
    Fixed(i32),
    Dst {
        std: i32,
        dst: i32,
        start: Edge,
        end: Edge,
    },
}

/// `Mm.w.d/time`: day `d` (0 = Sunday) of week `w` (5 = last) of month `m`, at `time` local seconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Edge {
    month: i64,
    week: i64,
    weekday: i64,
    time: i64,
}

impl Zone {
    pub(crate) fn utc() -> Zone {
        Zone::fixed(0)
    }

    /// A zone always `offset` seconds east of UTC.
    pub(crate) fn fixed(offset: i32) -> Zone {
        Zone {
            transitions: Vec::new(),
            initial: offset,
            rule: Some(Rule::Fixed(offset)),
        }
    }

    /// The zone this process's local time is in (see the module's note). The
    /// error is text, as `when::parse`'s zone argument takes it.
    pub(crate) fn local() -> Result<Zone, String> {
        let dir = std::env::var_os("TZDIR")
            .filter(|d| !d.is_empty())
            .map_or_else(|| PathBuf::from("/usr/share/zoneinfo"), PathBuf::from);
        match std::env::var("TZ") {
            Err(std::env::VarError::NotPresent) => match std::fs::read("/etc/localtime") {
                Ok(bytes) => Zone::from_tzif(&bytes).map_err(|e| format!("/etc/localtime: {e}")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Zone::utc()),
                Err(e) => Err(format!("/etc/localtime: {e}")),
            },
            Err(std::env::VarError::NotUnicode(_)) => Err("TZ is not valid UTF-8".into()),
            Ok(tz) => Zone::named(&tz, &dir),
        }
    }

    /// The zone `TZ` names, with the zone database in `dir`.
    pub(crate) fn named(tz: &str, dir: &Path) -> Result<Zone, String> {
        let name = tz.strip_prefix(':').unwrap_or(tz);
        if name.is_empty() || name == "UTC" || name == "UTC0" {
            return Ok(Zone::utc());
        }
        let file = if name.starts_with('/') {
            PathBuf::from(name)
        } else {
            dir.join(name)
        };
        if !name.contains("..")
            && let Ok(bytes) = std::fs::read(&file)
        {
            return Zone::from_tzif(&bytes).map_err(|e| format!("{}: {e}", file.display()));
        }
        parse_rule(name)
            .map(|rule| Zone {
                transitions: Vec::new(),
                initial: rule.std(),
                rule: Some(rule),
            })
            .map_err(|e| format!("TZ={tz:?}: no such zone file in {}, and {e}", dir.display()))
    }

    /// Reads a TZif file (versions 1 to 4).
    pub(crate) fn from_tzif(b: &[u8]) -> Result<Zone, ZoneError> {
        let head = header(b, 0)?;
        // Version 2 and later repeat the data with 64-bit times after the first block.
        let wide = head.version >= b'2';
        let at = if wide { 44 + head.block_len(4, 8) } else { 0 };
        let head = header(b, at)?;
        let (tsize, lsize) = if wide { (8, 12) } else { (4, 8) };
        let mut p = at + 44;
        let times = take(b, &mut p, head.timecnt * tsize)?;
        let idx = take(b, &mut p, head.timecnt)?;
        let infos = take(b, &mut p, head.typecnt * 6)?;
        take(
            b,
            &mut p,
            head.charcnt + head.leapcnt * lsize + head.isstdcnt + head.isutcnt,
        )?;
        let offset_of = |k: usize| -> Result<i32, ZoneError> {
            let i = infos.get(k * 6..k * 6 + 4).ok_or(ZoneError::BadTypeIndex)?;
            Ok(i32::from_be_bytes([i[0], i[1], i[2], i[3]]))
        };
        if head.typecnt == 0 {
            return Err(ZoneError::NoTypes);
        }
        let mut transitions = Vec::with_capacity(head.timecnt);
        for k in 0..head.timecnt {
            let t = &times[k * tsize..(k + 1) * tsize];
            let when = if wide {
                i64::from_be_bytes([t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]])
            } else {
                i64::from(i32::from_be_bytes([t[0], t[1], t[2], t[3]]))
            };
            transitions.push((when, offset_of(usize::from(idx[k]))?));
        }
        let rule = if wide {
            let footer = b.get(p..).unwrap_or_default();
            let text = String::from_utf8_lossy(footer);
            let text = text.trim_matches('\n');
            (!text.is_empty()).then(|| parse_rule(text)).transpose()?
        } else {
            None
        };
        Ok(Zone {
            transitions,
            initial: offset_of(0)?,
            rule,
        })
    }

    /// Seconds east of UTC at the instant `utc` (Unix seconds).
    pub(crate) fn offset_at(&self, utc: i64) -> i32 {
        match self.transitions.iter().rposition(|&(t, _)| t <= utc) {
            None if self.transitions.is_empty() => self.rule.map_or(self.initial, |r| r.at(utc)),
            None => self.initial,
            Some(k) if k + 1 == self.transitions.len() => {
                self.rule.map_or(self.transitions[k].1, |r| r.at(utc))
            }
            Some(k) => self.transitions[k].1,
        }
    }

    /// The instant of a local wall-clock time (given as seconds, as if it were
    /// UTC). In a gap or an overlap (a clock change), one of the near instants.
    pub(crate) fn to_utc(&self, local: i64) -> i64 {
        let guess = local - i64::from(self.offset_at(local));
        let t = local - i64::from(self.offset_at(guess));
        local - i64::from(self.offset_at(t))
    }

    /// The local wall-clock seconds (as if UTC) of an instant.
    pub(crate) fn to_local(&self, utc: i64) -> i64 {
        utc + i64::from(self.offset_at(utc))
    }
}

impl Rule {
    fn std(self) -> i32 {
        match self {
            Rule::Fixed(o) | Rule::Dst { std: o, .. } => o,
        }
    }

    fn at(self, utc: i64) -> i32 {
        let Rule::Dst {
            std,
            dst,
            start,
            end,
        } = self
        else {
            return self.std();
        };
        let year =
            crate::util::timefmt::civil_from_days((utc + i64::from(std)).div_euclid(86_400)).0;
        let begins = start.local(year) - i64::from(std);
        let ends = end.local(year) - i64::from(dst);
        let in_dst = if begins < ends {
            begins <= utc && utc < ends
        } else {
            !(ends <= utc && utc < begins)
        };
        if in_dst { dst } else { std }
    }
}

impl Edge {
    /// Local seconds (as if UTC) of this edge in `year`.
    fn local(self, year: i64) -> i64 {
        let first = days_from_civil(year, self.month, 1);
        let next = if self.month == 12 {
            days_from_civil(year + 1, 1, 1)
        } else {
            days_from_civil(year, self.month + 1, 1)
        };
        // 1970-01-01 was a Thursday (4).
        let wd_first = (first + 4).rem_euclid(7);
        let mut day = first + (self.weekday - wd_first).rem_euclid(7) + (self.week - 1) * 7;
        while day >= next {
            day -= 7;
        }
        day * 86_400 + self.time
    }
}

struct Header {
    version: u8,
    isutcnt: usize,
    isstdcnt: usize,
    leapcnt: usize,
    timecnt: usize,
    typecnt: usize,
    charcnt: usize,
}

impl Header {
    fn block_len(&self, tsize: usize, lsize: usize) -> usize {
        self.timecnt * (tsize + 1)
            + self.typecnt * 6
            + self.charcnt
            + self.leapcnt * lsize
            + self.isstdcnt
            + self.isutcnt
    }
}

fn header(b: &[u8], at: usize) -> Result<Header, ZoneError> {
    let h = b.get(at..at + 44).ok_or(ZoneError::TooShort)?;
    if &h[..4] != b"TZif" {
        return Err(ZoneError::NotTzif);
    }
    let n = |k: usize| {
        let c = &h[20 + 4 * k..24 + 4 * k];
        u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize
    };
    Ok(Header {
        version: h[4],
        isutcnt: n(0),
        isstdcnt: n(1),
        leapcnt: n(2),
        timecnt: n(3),
        typecnt: n(4),
        charcnt: n(5),
    })
}

fn take<'a>(b: &'a [u8], p: &mut usize, len: usize) -> Result<&'a [u8], ZoneError> {
    let s = b.get(*p..*p + len).ok_or(ZoneError::CutShort)?;
    *p += len;
    Ok(s)
}

/// Parses a POSIX `TZ` rule: `STD offset [DST [offset] [,start[/time],end[/time]]]`.
fn parse_rule(text: &str) -> Result<Rule, ZoneError> {
    let bad = || ZoneError::NotARule(text.to_string());
    let mut s = text;
    name(&mut s).ok_or_else(bad)?;
    // POSIX offsets count west of UTC; hal counts east.
    let std = -signed_time(&mut s).ok_or_else(bad)?;
    if s.is_empty() {
        return Ok(Rule::Fixed(i32::try_from(std).map_err(|_| bad())?));
    }
    name(&mut s).ok_or_else(bad)?;
    let dst = if s.starts_with(',') || s.is_empty() {
        std + 3600
    } else {
        -signed_time(&mut s).ok_or_else(bad)?
    };
    let rules = s
        .strip_prefix(',')
        .ok_or_else(|| ZoneError::NoDstRules(text.to_string()))?;
    let (a, b) = rules.split_once(',').ok_or_else(bad)?;
    let (start, end) = (edge(a).ok_or_else(bad)?, edge(b).ok_or_else(bad)?);
    Ok(Rule::Dst {
        std: i32::try_from(std).map_err(|_| bad())?,
        dst: i32::try_from(dst).map_err(|_| bad())?,
        start,
        end,
    })
}

/// A zone abbreviation: three or more letters, or `<...>`.
fn name(s: &mut &str) -> Option<()> {
    if let Some(rest) = s.strip_prefix('<') {
        let (_, after) = rest.split_once('>')?;
        *s = after;
        return Some(());
    }
    let n = s.bytes().take_while(u8::is_ascii_alphabetic).count();
    (n >= 3).then(|| *s = &s[n..])
}

/// `[+-]h[:mm[:ss]]` in seconds.
fn signed_time(s: &mut &str) -> Option<i64> {
    let neg = s.starts_with('-');
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let n = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b':')
        .count();
    let (time, rest) = body.split_at(n);
    let mut secs = 0i64;
    let parts: Vec<&str> = time.split(':').collect();
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    for (k, p) in parts.iter().enumerate() {
        let v: i64 = p.parse().ok()?;
        secs += v * [3600, 60, 1][k];
    }
    *s = rest;
    Some(if neg { -secs } else { secs })
}

/// `Mm.w.d[/time]` (the only form tzdata writes).
fn edge(text: &str) -> Option<Edge> {
    let (date, time) = match text.split_once('/') {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let mut it = date.strip_prefix('M')?.split('.');
    let (month, week, weekday) = (
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
    );
    if it.next().is_some()
        || !(1..=12).contains(&month)
        || !(1..=5).contains(&week)
        || !(0..=6).contains(&weekday)
    {
        return None;
    }
    let time = match time {
        Some(mut t) => {
            let v = signed_time(&mut t)?;
            t.is_empty().then_some(v)?
        }
        None => 7200,
    };
    Some(Edge {
        month,
        week,
        weekday,
        time,
    })
}

#[cfg(test)]
mod tests;
