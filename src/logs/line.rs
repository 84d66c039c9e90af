//! Log lines: splitting Docker's timestamped frames into whole lines, bounded in size.

use crate::util::timefmt::{self, Stamp};

/// A line longer than this is cut and passed on, so one chatty source cannot grow memory.
pub const MAX_LINE: usize = 1 << 20;

/// Which stream a line came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One whole log line from one source.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub time: Stamp,
    pub stream: Stream,
    pub message: String,
}

/// Reassembles the frames of one container stream into lines. Docker sends one
/// frame per line, but splits lines over 16 KiB into several frames, each with
/// its own timestamp and only the last ending in a newline.
#[derive(Debug, Default)]
pub struct Assembler {
    pending: Vec<u8>,
    pending_time: Option<Stamp>,
    pending_stream: Option<Stream>,
}

impl Assembler {
    /// Feeds one frame; returns the lines it completes.
    pub fn push(&mut self, stream: Stream, frame: &[u8]) -> Vec<Line> {
        let mut out = Vec::new();
        self.push_into(stream, frame, &mut out);
        out
    }

    /// Feeds one frame; appends the lines it completes to `out`.
    pub fn push_into(&mut self, stream: Stream, frame: &[u8], out: &mut impl Extend<Line>) {
        let mut rest = frame;
        while !rest.is_empty() {
            let (piece, tail, complete) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], &rest[i + 1..], true),
                None => (rest, &rest[rest.len()..], false),
            };
            rest = tail;
            let (time, mut body) = split_ts_bytes(piece);
            // The common case: a whole line in one frame, nothing held.
            if complete && self.pending.is_empty() && body.len() < MAX_LINE {
                out.extend(std::iter::once(Line {
                    time: time.unwrap_or_else(Stamp::now),
                    stream,
                    message: text_of(body),
                }));
                continue;
            }
            if self.pending.is_empty() {
                self.pending_time = time;
                self.pending_stream = Some(stream);
            }
            // A line over MAX_LINE is passed on in MAX_LINE pieces: nothing is lost,
            // and memory stays bounded.
            let mut cut = false;
            while self.pending.len() + body.len() >= MAX_LINE {
                cut = true;
                let room = MAX_LINE - self.pending.len();
                self.pending.extend_from_slice(&body[..room]);
                body = &body[room..];
                let t = self.pending_time;
                out.extend(std::iter::once(self.take(stream)));
                self.pending_time = t;
                self.pending_stream = Some(stream);
            }
            self.pending.extend_from_slice(body);
            // A newline right after a cut adds no empty line.
            if complete && !(cut && self.pending.is_empty()) {
                out.extend(std::iter::once(self.take(stream)));
            }
        }
    }

    /// Returns a partial line still held (at the end of a stream).
    pub fn finish(&mut self) -> Option<Line> {
        if self.pending.is_empty() {
            return None;
        }
        let stream = self.pending_stream.unwrap_or(Stream::Stdout);
        Some(self.take(stream))
    }

    fn take(&mut self, stream: Stream) -> Line {
        let message = text_of(&self.pending);
        self.pending.clear();
        Line {
            time: self.pending_time.take().unwrap_or_else(Stamp::now),
            stream: self.pending_stream.take().unwrap_or(stream),
            message,
        }
    }
}

/// A line's bytes as text: invalid UTF-8 replaced, a trailing CR dropped.
fn text_of(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

fn split_ts_bytes(piece: &[u8]) -> (Option<Stamp>, &[u8]) {
    let head_len = piece.iter().position(|&b| b == b' ').unwrap_or(piece.len());
    if (20..=40).contains(&head_len)
        && let Ok(head) = std::str::from_utf8(&piece[..head_len])
        && let Some(t) = timefmt::parse(head)
    {
        let body = piece.get(head_len + 1..).unwrap_or(&[]);
        return (Some(t), body);
    }
    (None, piece)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_frames_become_lines() {
        let mut a = Assembler::default();
        let lines = a.push(Stream::Stdout, b"2024-01-01T00:00:01.5Z hello\n");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].message, "hello");
        assert_eq!(lines[0].time.secs(), 1_704_067_201);
        assert!(a.finish().is_none());
    }

    #[test]
    fn partial_frames_are_joined_with_first_timestamp() {
        let mut a = Assembler::default();
        assert!(
            a.push(Stream::Stderr, b"2024-01-01T00:00:01Z abc")
                .is_empty()
        );
        let lines = a.push(Stream::Stderr, b"2024-01-01T00:00:02Z def\n");
        assert_eq!(lines[0].message, "abcdef");
        assert_eq!(lines[0].time.secs(), 1_704_067_201);
        assert_eq!(lines[0].stream, Stream::Stderr);
    }

    #[test]
    fn non_utf8_and_huge_lines_are_safe() {
        let mut a = Assembler::default();
        let lines = a.push(Stream::Stdout, b"2024-01-01T00:00:01Z \xff\xfe ok\n");
        assert_eq!(lines[0].message, "\u{fffd}\u{fffd} ok");
        let big = vec![b'x'; MAX_LINE + 10];
        let lines = a.push(Stream::Stdout, &big);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].message.len(), MAX_LINE);
        assert_eq!(a.finish().unwrap().message.len(), 10);
    }
}
