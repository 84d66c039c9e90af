//! A socket to the real engine that notes every request through it: what hal
//! itself asks (its list calls, counted) apart from what compose asks, told by
//! the client's `User-Agent` (compose and the docker CLI send one, hal's own
//! GETs none).

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The real engine's socket, where the proxy forwards.
const ENGINE: &str = "/var/run/docker.sock";

/// One request as it went through: its first line, and whether hal sent it.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub line: String,
    pub hal: bool,
}

/// A counting proxy, listening until the test ends.
pub(crate) struct Counter {
    sock: PathBuf,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Counter {
    /// Listens at `dir/count.sock`, forwarding to the engine.
    pub(crate) fn start(dir: &Path) -> Counter {
        let sock = dir.join("count.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let noted = seen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(engine) = UnixStream::connect(ENGINE) else {
                    continue;
                };
                let (Ok(mut from_engine), Ok(mut to_client)) =
                    (engine.try_clone(), client.try_clone())
                else {
                    continue;
                };
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from_engine, &mut to_client);
                    let _ = to_client.shutdown(Shutdown::Both);
                });
                let noted = noted.clone();
                std::thread::spawn(move || requests(client, engine, &noted));
            }
        });
        Counter { sock, seen }
    }

    /// What `-H` takes to go through the proxy.
    pub(crate) fn host(&self) -> String {
        format!("unix://{}", self.sock.display())
    }

    /// The requests noted since the last take, forgotten.
    pub(crate) fn take(&self) -> Vec<Request> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }

    /// The first lines of hal's own requests since the last take, forgotten.
    fn hals(&self) -> Vec<String> {
        self.take()
            .into_iter()
            .filter(|r| r.hal)
            .map(|r| r.line)
            .collect()
    }

    /// hal's own container-list calls since the last take, and what it asked
    /// (for the message of a failed count).
    pub(crate) fn lists(&self) -> (usize, String) {
        let asked = self.hals();
        let lists = asked
            .iter()
            .filter(|l| l.contains("/containers/json?"))
            .count();
        (lists, asked.join("\n"))
    }

    /// The containers hal itself inspected since the last take, one id per
    /// call in the order asked, and what it asked (for the message of a
    /// failed count).
    pub(crate) fn inspects(&self) -> (Vec<String>, String) {
        let asked = self.hals();
        let ids = asked.iter().filter_map(|l| inspected(l)).collect();
        (ids, asked.join("\n"))
    }
}

/// The container a request line inspects (`GET /…/containers/{id}/json`).
fn inspected(line: &str) -> Option<String> {
    let path = line.strip_prefix("GET ")?.split_whitespace().next()?;
    let path = path.split('?').next().unwrap_or(path);
    let mut parts = path.rsplit('/');
    let (json, id, containers) = (parts.next()?, parts.next()?, parts.next()?);
    (json == "json" && containers == "containers" && id != "json").then(|| id.to_string())
}

/// Copies the client's requests to the engine, noting each request's head.
/// A connection whose first request is not hal's is copied unread (its bodies
/// may be streamed); hal's requests are GETs and small bodies of a stated length.
fn requests(mut client: UnixStream, mut engine: UnixStream, noted: &Mutex<Vec<Request>>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut body = 0usize;
    let mut read = [0u8; 8192];
    let mut theirs = false;
    loop {
        let n = match client.read(&mut read) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Noted before it goes: hal cannot have its answer, and end, first.
        if !theirs {
            theirs = note(&mut buf, &mut body, &read[..n], noted);
        }
        if engine.write_all(&read[..n]).is_err() {
            break;
        }
    }
    let _ = engine.shutdown(Shutdown::Write);
}

/// Notes the request heads that `read` completes (past the body still owed
/// of the one before); whether the connection turned out not to be hal's.
fn note(buf: &mut Vec<u8>, body: &mut usize, read: &[u8], noted: &Mutex<Vec<Request>>) -> bool {
    let skip = (*body).min(read.len());
    *body -= skip;
    buf.extend_from_slice(&read[skip..]);
    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let request = of_head(&head);
        let theirs = !request.hal;
        noted.lock().unwrap().push(request);
        let whole = end + 4 + content_length(&head);
        if buf.len() >= whole {
            buf.drain(..whole);
        } else {
            *body = whole - buf.len();
            buf.clear();
        }
        if theirs {
            return true;
        }
    }
    false
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then_some(v.trim())
    })
}

fn of_head(head: &str) -> Request {
    let agent = header(head, "user-agent").unwrap_or("");
    Request {
        line: head.lines().next().unwrap_or("").to_string(),
        hal: !(agent.starts_with("compose") || agent.starts_with("Docker-Client")),
    }
}

fn content_length(head: &str) -> usize {
    header(head, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Whether a `hal watch` runs anywhere on the machine (another test's): a
/// stop then looks again 3 s after it (`run/settle.rs`), one status read more
/// per module stopped.
pub(crate) fn watch_live() -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|e| {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            return false;
        };
        let mut args = cmdline.split(|b| *b == 0).filter(|a| !a.is_empty());
        let Some(prog) = args.next() else {
            return false;
        };
        let base = prog.rsplit(|b| *b == b'/').next().unwrap_or(prog);
        base == b"hal" && args.find(|a| !a.starts_with(b"-")) == Some(b"watch".as_slice())
    })
}
