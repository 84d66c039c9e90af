//! Unit tests of container facts: the list, the inspect and what the cache may say without one.

use super::*;
use crate::module::run_state::Health;

fn listed(state: ContainerRun, run: Option<&str>) -> Listed {
    Listed {
        id: "c1".into(),
        state: Some(state),
        status_text: Some("Up 5 minutes".into()),
        run: run.map(str::to_string),
        ..Default::default()
    }
}

#[test]
fn health_is_the_engines_field_never_the_status_text() {
    use crate::module::status::Verdict;
    let mut l = listed(ContainerRun::Running, None);
    l.status_text = Some("Up 5 minutes".into());
    let inspect = Inspected {
        state: Some(ContainerRun::Running),
        health: Some(Some(Health::Unhealthy)),
        ..Default::default()
    };
    assert_eq!(of(&l, inspect).verdict(), Verdict::Unhealthy);
    // Text that says otherwise is not read.
    l.status_text = Some("Up 5 minutes (healthy)".into());
    let inspect = Inspected {
        state: Some(ContainerRun::Running),
        health: Some(Some(Health::Unhealthy)),
        ..Default::default()
    };
    assert_eq!(of(&l, inspect).verdict(), Verdict::Unhealthy);
    let now = Stamp::now();
    assert!(settled(&l, now).is_none(), "no health field: inspect");
    l.health = Some(Some(Health::Unhealthy));
    assert_eq!(settled(&l, now).unwrap().verdict(), Verdict::Unhealthy);
    l.health = Some(None);
    assert_eq!(settled(&l, now).unwrap().health, None);
}

#[test]
fn known_facts_hold_for_the_same_run_only() {
    use ContainerRun as S;
    let now = Stamp::now();
    let learnt = ContainerFacts {
        id: "c1".into(),
        run: Some(ContainerRun::Running),
        restart_count: 2,
        restart: RestartPolicy::Always,
        started_at: crate::util::timefmt::parse("2026-01-01T00:00:00.5Z"),
        ..Default::default()
    };
    let mut known = InspectCache::default();
    known.learn(&learnt, "e1".into());
    let same = known.facts(&listed(S::Running, Some("e1")), now).unwrap();
    assert_eq!(same.restart_count, 2);
    assert_eq!(same.started_at, learnt.started_at);
    assert!(known.facts(&listed(S::Running, Some("e9")), now).is_none());
    assert!(known.facts(&listed(S::Running, None), now).is_none());
    let mut young = listed(S::Running, Some("e1"));
    young.status_text = Some("Up 3 seconds".into());
    assert!(known.facts(&young, now).is_none(), "young: inspect");
    // No healthcheck: the cache describes it; one: an inspect, unless the
    // list's own field says the health.
    let mut sick = learnt.clone();
    sick.id = "c2".into();
    sick.health = Some(Health::Healthy);
    known.learn(&sick, "e2".into());
    let mut listed2 = listed(S::Running, Some("e2"));
    listed2.id = "c2".into();
    listed2.status_text = Some("Up 5 minutes (healthy)".into());
    assert!(known.facts(&listed2, now).is_none(), "health is re-read");
    listed2.health = Some(Some(Health::Unhealthy));
    let f = known.facts(&listed2, now).unwrap();
    assert_eq!(f.verdict(), crate::module::status::Verdict::Unhealthy);
    known.keep_only(&std::collections::HashSet::new());
    assert!(known.facts(&listed(S::Running, Some("e1")), now).is_none());
}

#[test]
fn the_cache_file_keeps_the_engines_words_and_an_older_one_still_reads() {
    // As an older hal wrote it: no max_retries, no healthcheck, times as the engine printed them.
    let old = r#"{"endpoint":"unix:///var/run/docker.sock","containers":{"c1":{"run":"e1","exit_code":0,"restart_policy":"unless-stopped","restart_count":1,"started_at":"2026-12-03T09:39:07.53173218Z","finished_at":null,"oom_killed":false}}}"#;
    let cache: InspectCache = serde_json::from_str(old).unwrap();
    let k = &cache.containers["c1"];
    assert_eq!(k.restart, RestartPolicy::UnlessStopped);
    assert_eq!(k.healthcheck, None);
    assert_eq!(
        k.started_at.map(Stamp::rfc3339_trimmed).as_deref(),
        Some("2026-12-03T09:39:07.53173218Z")
    );
    let again = serde_json::to_value(&cache).unwrap();
    let c1 = &again["containers"]["c1"];
    assert_eq!(c1["restart_policy"], "unless-stopped");
    assert_eq!(c1["started_at"], "2026-12-03T09:39:07.53173218Z");
    assert!(c1.get("max_retries").is_none(), "{c1}");
    // A retry limit is kept; a file that is not hal's is ignored whole.
    let mut limited = k.clone();
    limited.restart = RestartPolicy::OnFailure(3);
    let text = serde_json::to_string(&limited).unwrap();
    let back: KnownRun = serde_json::from_str(&text).unwrap();
    assert_eq!(back.restart, RestartPolicy::OnFailure(3));
    let dir = std::env::temp_dir().join(format!("hal-cache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(CACHE_FILE), r#"{"containers":{"c1":{"run":7}}}"#).unwrap();
    let ignored = InspectCache::load(&Store::new(dir.clone()), "unix:///var/run/docker.sock");
    assert!(ignored.containers.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `containers.json` as hal wrote it before the store wrote it: a running
/// container with an `on-failure` limit and a healthcheck, and a job that exited 0.
const WRITTEN_BEFORE: &str = concat!(
    r#"{"endpoint":"unix:///var/run/docker.sock","containers":{"#,
    r#""c1":{"run":"e1 e2","exit_code":0,"restart_policy":"on-failure","max_retries":3,"restart_count":2,"#,
    r#""started_at":"2026-12-03T09:39:07.53173218Z","finished_at":null,"oom_killed":false,"healthcheck":true},"#,
    r#""c2":{"run":"","exit_code":0,"restart_policy":"no","restart_count":0,"#,
    r#""started_at":"2026-12-03T09:00:00Z","finished_at":"2026-12-03T09:00:01.5Z","oom_killed":false,"healthcheck":false}}}"#,
);

#[test]
fn a_cache_file_an_older_hal_wrote_is_written_back_byte_for_byte() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("hal-cache-bytes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(dir.join(CACHE_FILE), WRITTEN_BEFORE).unwrap();
    let store = Store::new(dir.clone());
    let mut cache = InspectCache::load(&store, "unix:///var/run/docker.sock");
    assert_eq!(cache.containers.len(), 2);
    assert_eq!(cache.containers["c1"].restart, RestartPolicy::OnFailure(3));
    assert_eq!(
        cache.containers["c2"].finished_at,
        crate::util::timefmt::parse("2026-12-03T09:00:01.5Z")
    );
    // Another engine's file is not this one's.
    assert!(
        InspectCache::load(&store, "tcp://elsewhere:2375")
            .containers
            .is_empty()
    );
    cache.changed = true;
    std::fs::remove_file(dir.join(CACHE_FILE)).unwrap();
    cache.save(&store);
    let written = std::fs::read_to_string(dir.join(CACHE_FILE)).unwrap();
    assert_eq!(written, WRITTEN_BEFORE);
    // The engine's zero time (an older hal wrote it as told) reads as none.
    let zero = WRITTEN_BEFORE.replace(
        r#""finished_at":null"#,
        r#""finished_at":"0001-01-01T00:00:00Z""#,
    );
    std::fs::write(dir.join(CACHE_FILE), zero).unwrap();
    let cache = InspectCache::load(&store, "unix:///var/run/docker.sock");
    assert_eq!(cache.containers["c1"].finished_at, None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_job_that_exited_0_is_described_while_the_list_agrees() {
    use ContainerRun as S;
    let now = Stamp::now();
    let done = ContainerFacts {
        id: "c1".into(),
        run: Some(S::Exited),
        exit_code: Some(0),
        finished_at: Some(Stamp::from_secs(now.secs() - 3 * 3600)),
        ..Default::default()
    };
    let mut known = InspectCache::default();
    known.learn(&done, String::new());
    let mut l = listed(S::Exited, None);
    l.status_text = Some("Exited (0) 3 hours ago".into());
    let f = known.exited(&l, now).unwrap();
    assert_eq!((f.run, f.exit_code), (Some(S::Exited), Some(0)));
    assert_eq!(f.finished_at, done.finished_at);
    // Ran again since (a newer finish), or ended otherwise: inspect.
    l.status_text = Some("Exited (0) 5 minutes ago".into());
    assert!(known.exited(&l, now).is_none());
    l.status_text = Some("Exited (1) 3 hours ago".into());
    assert!(known.exited(&l, now).is_none());
    assert!(known.exited(&listed(S::Running, None), now).is_none());
    let failed = ContainerFacts {
        exit_code: Some(1),
        ..done.clone()
    };
    known.learn(&failed, String::new());
    l.status_text = Some("Exited (1) 3 hours ago".into());
    assert!(known.exited(&l, now).is_none(), "a failure is inspected");
}
