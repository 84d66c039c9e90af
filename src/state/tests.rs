//! The store's unit tests: limits, holds, odd state files.
use crate::module::config::RestartLimit;
use crate::module::status::Desired;
use crate::util::timefmt::Stamp;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use super::*;

fn store(tag: &str) -> Store {
    let dir = std::env::temp_dir().join(format!("hal-store-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    Store::new(dir)
}

fn limit(burst: u32, secs: u64) -> RestartLimit {
    RestartLimit {
        burst,
        interval: Duration::from_secs(secs),
    }
}

#[tokio::test]
async fn counts_until_burst_then_refuses_until_window_passes() {
    let s = store("limit");
    let t0 = Stamp::from_secs(1000);
    for i in 0..3 {
        let (u, _) = s
            .count_start("web", limit(3, 60), false, t0.plus(Duration::from_secs(i)))
            .await
            .unwrap();
        assert_eq!(u.used, i as u32 + 1);
    }
    let err = s
        .count_start("web", limit(3, 60), false, t0.plus(Duration::from_secs(10)))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("start limit hit: 3 starts in 1m"), "{text}");
    assert!(text.contains("free again at 00:17:40 UTC"), "{text}");
    assert!(
        s.count_start("web", limit(3, 60), true, t0.plus(Duration::from_secs(10)))
            .await
            .is_ok()
    );
    // Four starts counted (one forced): still held until two leave the window.
    assert!(
        s.count_start("web", limit(3, 60), false, t0.plus(Duration::from_secs(59)))
            .await
            .is_err()
    );
    assert!(
        s.count_start("web", limit(3, 60), false, t0.plus(Duration::from_secs(62)))
            .await
            .is_ok()
    );
    s.reset("web").await.unwrap();
    let (st, _) = s.read();
    assert!(st.modules["web"].starts.is_empty());
    std::fs::remove_dir_all(s.dir()).unwrap();
}

#[tokio::test]
async fn corrupt_file_is_reported_and_rebuilt() {
    let s = store("corrupt");
    s.ensure_dir().unwrap();
    std::fs::write(s.dir().join(STATE_FILE), b"{not json").unwrap();
    let (st, w) = s.read();
    assert_eq!(st, StateFile::default());
    assert!(w.unwrap().contains("corrupt"));
    let w = s.set_desired("web", Desired::Up).await.unwrap();
    assert!(w.is_some());
    let (st, w) = s.read();
    assert!(w.is_none());
    assert_eq!(st.modules["web"].desired, Some(Desired::Up));
    let mode = std::fs::metadata(s.dir().join(STATE_FILE))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    std::fs::remove_dir_all(s.dir()).unwrap();
}

#[tokio::test]
async fn planted_symlink_is_not_followed() {
    let s = store("symlink");
    s.ensure_dir().unwrap();
    let target = s.dir().join("elsewhere");
    std::fs::write(&target, b"precious").unwrap();
    std::os::unix::fs::symlink(&target, s.dir().join(LOCK_FILE)).unwrap();
    assert!(s.set_desired("web", Desired::Up).await.is_err());
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    std::fs::remove_dir_all(s.dir()).unwrap();
}

#[tokio::test]
async fn update_tallies_say_the_last_check_and_the_rollbacks() {
    use crate::state::records::CheckRecord;
    let s = store("tallies");
    let check = |available: &[&str], error: Option<&str>| CheckRecord {
        at: Stamp::EPOCH,
        available: available.iter().map(ToString::to_string).collect(),
        error: error.map(str::to_string),
    };
    let checks = [
        ("new", Some(check(&["app"], None)), 2),
        ("same", Some(check(&[], None)), 0),
        (
            "unreachable",
            Some(check(&[], Some("connection refused"))),
            0,
        ),
        ("never", None, 0),
    ];
    s.update(move |st| {
        for (name, c, rollbacks) in checks {
            let r = st.modules.entry(name.to_string()).or_default();
            r.update_check = c;
            r.rollbacks = rollbacks;
        }
    })
    .await
    .unwrap();
    let t = s.update_tallies();
    let said = |n: &str| (t[n].available, t[n].rollbacks);
    assert_eq!(said("new"), (Some(true), 2));
    assert_eq!(said("same"), (Some(false), 0));
    assert_eq!(said("unreachable"), (None, 0));
    assert_eq!(said("never"), (None, 0));
    std::fs::remove_dir_all(s.dir()).unwrap();
}

#[test]
fn parse_state_never_panics_on_odd_shapes() {
    for t in [
        "",
        "null",
        "{\"modules\": 3}",
        "{\"schema\": 99}",
        "{\"modules\":{\"a\":{\"starts\":[\"x\"]}}}",
    ] {
        assert!(parse_state(t).is_err(), "{t}");
    }
    assert!(parse_state("{}").is_ok());
}
