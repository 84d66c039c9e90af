//! A socket to the real engine that is cut at a chosen request: every connection through it
//! closes at once, that request unanswered, and the socket stops accepting (a dockerd gone mid-call).

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The real engine's socket, where the proxy forwards.
const ENGINE: &str = "/var/run/docker.sock";

/// What the proxy shares between its connections.
struct Shared {
    /// Every connection through it, both ends, to close at the cut.
    open: Mutex<Vec<UnixStream>>,
    cut: AtomicBool,
    /// A request whose head contains this is the cut.
    trigger: String,
}

impl Shared {
    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        if let Ok(open) = self.open.lock() {
            for s in open.iter() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }
}

/// Listens at `sock`, forwarding to the engine until a request contains
/// `trigger`: then every connection closes, that request unanswered, and
/// connections after it are closed unread.
pub(crate) fn cut_at(sock: &Path, trigger: &str) {
    let listener = UnixListener::bind(sock).unwrap();
    let shared = Arc::new(Shared {
        open: Mutex::new(Vec::new()),
        cut: AtomicBool::new(false),
        trigger: trigger.to_string(),
    });
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            if shared.cut.load(Ordering::SeqCst) {
                let _ = client.shutdown(Shutdown::Both);
                continue;
            }
            let Ok(engine) = UnixStream::connect(ENGINE) else {
                continue;
            };
            if let Ok(mut open) = shared.open.lock() {
                open.extend(
                    [client.try_clone(), engine.try_clone()]
                        .into_iter()
                        .flatten(),
                );
            }
            let (Ok(mut from_engine), Ok(mut to_client)) = (engine.try_clone(), client.try_clone())
            else {
                continue;
            };
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_engine, &mut to_client);
                let _ = to_client.shutdown(Shutdown::Both);
            });
            let shared = shared.clone();
            std::thread::spawn(move || requests(client, engine, &shared));
        }
    });
}

/// Copies the client's requests to the engine, cutting everything at the trigger.
/// hal's requests are GETs and small POSTs, so each read is scanned with the
/// end of the one before (a trigger split across two reads is still seen).
fn requests(mut client: UnixStream, mut engine: UnixStream, shared: &Shared) {
    let mut seen: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = match client.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let keep = seen.len().saturating_sub(shared.trigger.len());
        seen.drain(..keep);
        seen.extend_from_slice(&buf[..n]);
        let hit = seen
            .windows(shared.trigger.len())
            .any(|w| w == shared.trigger.as_bytes());
        if hit || shared.cut.load(Ordering::SeqCst) {
            shared.cut();
            return;
        }
        if engine.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = engine.shutdown(Shutdown::Write);
}
