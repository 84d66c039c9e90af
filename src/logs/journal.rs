//! Reading the node's journal with `journalctl -o json`: entries matched by fields, as log lines.
//!
//! The journal is the node's log store whatever the init: Docker's `journald`
//! log driver writes there with no systemd as PID 1. So reading it is not the
//! init's job; this adapter runs `journalctl` (argument vectors only) for
//! anyone who knows which fields to match, and the init's reader uses its
//! entry parser too.

use std::collections::HashMap;
use std::process::Stdio;

use futures_util::stream::{BoxStream, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use crate::logs::line::{Line, MAX_LINE, Stream};
use crate::logs::stream::Window;
use crate::util::timefmt::Stamp;

/// A journal entry as JSON may be long (`--all` spells binary messages as byte arrays).
const MAX_JSON_LINE: usize = 8 * MAX_LINE;

/// Which entries to read: any of `groups` (each a list of `FIELD=value`
/// matches that must all hold), in `window`, with `fields` kept beside the message.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query {
    pub groups: Vec<Vec<String>>,
    pub fields: Vec<String>,
    pub window: Window,
    pub follow: bool,
}

/// One journal entry: the fields asked for, and its message as lines.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub fields: HashMap<String, String>,
    pub lines: Vec<Line>,
}

/// The journalctl arguments for a query (no group: nothing is read, see [`read`]).
pub(crate) fn args(q: &Query) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    for (i, g) in q.groups.iter().enumerate() {
        if i > 0 {
            a.push("+".into());
        }
        a.extend(g.iter().cloned());
    }
    let mut fields = vec!["MESSAGE".to_string(), "PRIORITY".to_string()];
    fields.extend(q.fields.iter().cloned());
    a.extend(["--no-pager", "--quiet", "--all", "--output", "json"].map(String::from));
    a.extend(["--output-fields".into(), fields.join(",")]);
    match (q.window.tail, q.follow) {
        (Some(n), _) => a.extend(["--lines".into(), n.to_string()]),
        (None, true) => a.extend(["--lines".into(), "all".into()]),
        (None, false) => {}
    }
    if let Some(s) = q.window.since {
        a.extend(["--since".into(), format!("@{}", s.secs())]);
    }
    if let Some(u) = q.window.until {
        a.extend(["--until".into(), format!("@{}", u.secs())]);
    }
    if q.follow {
        a.push("--follow".into());
    }
    a
}

/// One `journalctl -o json` line as an entry, keeping the string `fields` named.
pub(crate) fn parse_entry(json: &[u8], fields: &[String]) -> Option<Entry> {
    let Ok(serde_json::Value::Object(entry)) = serde_json::from_slice(json) else {
        return None;
    };
    let lines = entry_lines(&entry);
    let kept = fields
        .iter()
        .filter_map(|f| Some((f.clone(), entry.get(f)?.as_str()?.to_string())))
        .collect();
    Some(Entry {
        fields: kept,
        lines,
    })
}

/// An entry's message as log lines: split at newlines, PRIORITY 0–3 counted as
/// stderr. An entry without a message gives none.
pub(crate) fn entry_lines(entry: &serde_json::Map<String, serde_json::Value>) -> Vec<Line> {
    let message = match entry.get("MESSAGE") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(bytes)) => {
            let raw: Vec<u8> = bytes
                .iter()
                .filter_map(|b| b.as_u64().and_then(|n| u8::try_from(n).ok()))
                .collect();
            String::from_utf8_lossy(&raw).into_owned()
        }
        _ => return Vec::new(),
    };
    let time = entry
        .get("__REALTIME_TIMESTAMP")
        .and_then(|v| v.as_str())
        .and_then(|s| s.parse::<i64>().ok())
        .map_or_else(Stamp::now, Stamp::from_micros);
    let stream = match entry
        .get("PRIORITY")
        .and_then(|v| v.as_str())
        .and_then(|s| s.parse::<u8>().ok())
    {
        Some(p) if p <= 3 => Stream::Stderr,
        _ => Stream::Stdout,
    };
    let body = message.strip_suffix('\n').unwrap_or(&message);
    body.split('\n')
        .map(|l| Line {
            time,
            stream,
            message: truncate(l.strip_suffix('\r').unwrap_or(l)),
        })
        .collect()
}

fn truncate(s: &str) -> String {
    if s.len() <= MAX_LINE {
        return s.to_string();
    }
    let mut end = MAX_LINE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// The entries a query matches, oldest first; with `follow`, until dropped.
/// `journalctl` is killed when the stream is dropped; its failure ends the
/// stream with an error carrying its last words.
pub(crate) fn read(q: Query) -> BoxStream<'static, anyhow::Result<Entry>> {
    if q.groups.is_empty() {
        return futures_util::stream::empty().boxed();
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<anyhow::Result<Entry>>(256);
    tokio::spawn(async move {
        if let Err(e) = pump(&q, &tx).await {
            let _ = tx
                .send(Err(e.context("read the journal (journalctl)")))
                .await;
        }
    });
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|x| (x, rx)) })
        .boxed()
}

/// Runs journalctl and sends its entries until it ends or the reader goes.
async fn pump(
    q: &Query,
    tx: &tokio::sync::mpsc::Sender<anyhow::Result<Entry>>,
) -> anyhow::Result<()> {
    let mut child = tokio::process::Command::new("journalctl")
        .args(args(q))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .env("LC_ALL", "C")
        .env("SYSTEMD_COLORS", "0")
        .env("SYSTEMD_PAGER", "")
        .spawn()?;
    let (Some(out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
        anyhow::bail!("no output pipe");
    };
    let err_task = tokio::spawn(async move {
        let mut text = String::new();
        let _ = (&mut err).take(64 * 1024).read_to_string(&mut text).await;
        text
    });
    let mut reader = tokio::io::BufReader::new(out);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // An over-long entry is cut, fails to parse and is skipped: memory stays bounded.
        let mut capped = (&mut reader).take(MAX_JSON_LINE as u64);
        let n = tokio::select! {
            () = tx.closed() => return Ok(()),
            n = capped.read_until(b'\n', &mut buf) => n?,
        };
        if n == 0 {
            break;
        }
        if let Some(entry) = parse_entry(&buf, &q.fields)
            && tx.send(Ok(entry)).await.is_err()
        {
            return Ok(());
        }
    }
    let status = child.wait().await?;
    if !status.success() {
        let text = err_task.await.unwrap_or_default();
        let words: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let why = words[words.len().saturating_sub(2)..].join("; ");
        if why.is_empty() {
            anyhow::bail!("journalctl exited with {status}");
        }
        anyhow::bail!("{why}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_or_groups_and_window() {
        let q = Query {
            groups: vec![
                vec!["A=1".into(), "B=2".into()],
                vec!["CONTAINER_ID_FULL=x".into()],
            ],
            fields: vec!["A".into()],
            window: Window {
                tail: None,
                since: Some(Stamp::from_secs(5)),
                until: Some(Stamp::from_secs(9)),
            },
            follow: true,
        };
        let a = args(&q);
        assert_eq!(a[..4], ["A=1", "B=2", "+", "CONTAINER_ID_FULL=x"]);
        assert!(
            a.windows(2)
                .any(|w| w == ["--output-fields", "MESSAGE,PRIORITY,A"])
        );
        assert!(a.windows(2).any(|w| w == ["--since", "@5"]));
        assert!(a.windows(2).any(|w| w == ["--until", "@9"]));
        assert!(a.windows(2).any(|w| w == ["--lines", "all"]));
        assert_eq!(a.last().map(String::as_str), Some("--follow"));
    }

    #[test]
    fn entries_keep_asked_fields() {
        let e = parse_entry(
            br#"{"__REALTIME_TIMESTAMP":"1700000000000000","MESSAGE":"a\nb","PRIORITY":"3","S":"web","N":[1]}"#,
            &["S".to_string(), "N".to_string(), "X".to_string()],
        )
        .unwrap();
        assert_eq!(e.fields.len(), 1);
        assert_eq!(e.fields["S"], "web");
        assert_eq!(e.lines.len(), 2);
        assert_eq!(e.lines[1].message, "b");
        assert_eq!(e.lines[0].stream, Stream::Stderr);
        assert!(parse_entry(b"nope", &[]).is_none());
    }
}
