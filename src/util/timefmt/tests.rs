//! RFC 3339 read and printed as hal has always done: the accepted shape, Go's trimmed fraction, arithmetic that saturates.
use super::*;

#[test]
fn parses_docker_nanos_with_trimmed_zeros() {
    let a = parse("2024-01-01T00:00:00.12345Z").unwrap();
    let b = parse("2024-01-01T00:00:00.123456789Z").unwrap();
    assert!(a < b);
    assert_eq!(a.nanos(), 123_450_000);
    assert_eq!(a.secs(), 1_704_067_200);
}

#[test]
fn offsets_and_round_trip() {
    let a = parse("2026-11-30T13:03:11+01:00").unwrap();
    assert_eq!(a.rfc3339(), "2026-11-30T12:03:11Z");
    assert_eq!(parse(&a.rfc3339_nanos()).unwrap(), a);
    assert_eq!(Stamp::from_secs(0).rfc3339(), "1970-01-01T00:00:00Z");
    assert_eq!(
        parse("2000-02-29T00:00:00Z").unwrap().rfc3339(),
        "2000-02-29T00:00:00Z"
    );
}

#[test]
fn trimmed_as_docker_prints() {
    for text in [
        "2024-01-01T00:00:00.12345Z",
        "2024-01-01T00:00:00.123456789Z",
        "2024-01-01T00:00:00Z",
        "2024-01-01T00:00:00.1Z",
    ] {
        assert_eq!(parse(text).unwrap().rfc3339_trimmed(), text);
    }
    let t = parse("2024-01-01T00:00:00.5Z").unwrap();
    assert_eq!(t.whole_second().rfc3339_trimmed(), "2024-01-01T00:00:00Z");
}

#[test]
fn rejects_garbage() {
    for bad in [
        "",
        "2024-01-01",
        "2024-13-01T00:00:00Z",
        "2024-01-01T00:00:00",
        "abcd-ef-ghTij:kl:mnZ",
        "2024-01-01T00:00:00.Z",
    ] {
        assert!(parse(bad).is_none(), "{bad}");
    }
}
#[test]
fn the_accepted_shape_is_pinned() {
    let same = |a: &str, b: &str| assert_eq!(parse(a).unwrap(), parse(b).unwrap(), "{a}");
    same("2024-01-01 00:00:00z", "2024-01-01T00:00:00Z");
    same("2026-11-30T11:03:11-01:00", "2026-11-30T12:03:11Z");
    same(
        "2024-01-01T00:00:00.1234567891Z",
        "2024-01-01T00:00:00.123456789Z",
    );
    same("2024-02-29T23:59:59+00:00", "2024-02-29T23:59:59Z");
    for bad in [
        "2024-01-01T00:00Z",
        "2024-01-01T00:00:00+0100",
        "2024-01-01T00:00:00+01",
        "2024-01-01T00:00:00Z[UTC]",
        "+002024-01-01T00:00:00Z",
        "2024-01-01T00:00:00 Z",
        "2024-01-01t00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T00:00:00.5",
        " 2024-01-01T00:00:00Z",
        "2023-02-29T00:00:00Z",
    ] {
        assert!(parse(bad).is_none(), "{bad}");
    }
    assert!(parse_set("0001-01-01T00:00:00Z").is_none());
    assert!(parse_set("2024-01-01T00:00:00Z").is_some());
}

#[test]
fn printed_shapes_and_arithmetic_are_pinned() {
    let t = parse("2026-11-30T12:03:11.9Z").unwrap();
    assert_eq!(t.rfc3339(), "2026-11-30T12:03:11Z");
    assert_eq!(t.rfc3339_nanos(), "2026-11-30T12:03:11.900000000Z");
    assert_eq!(t.rfc3339_trimmed(), "2026-11-30T12:03:11.9Z");
    assert_eq!(t.clock(), "12:03:11");
    let later = t.plus(Duration::from_millis(1200));
    assert_eq!(later.rfc3339_nanos(), "2026-11-30T12:03:13.100000000Z");
    assert_eq!(later.since(t), Duration::from_millis(1200));
    assert_eq!(t.since(later), Duration::ZERO);
    assert_eq!(Stamp::default().rfc3339(), "1970-01-01T00:00:00Z");
    assert_eq!(
        Stamp::from_micros(-1).rfc3339_nanos(),
        "1969-12-31T23:59:59.999999000Z"
    );
    let sys = std::time::UNIX_EPOCH + Duration::new(1_700_000_000, 5);
    assert_eq!(
        Stamp::from_system(sys).rfc3339_nanos(),
        "2023-11-14T22:13:20.000000005Z"
    );
    let before = std::time::UNIX_EPOCH - Duration::from_secs(5);
    assert_eq!(Stamp::from_system(before), Stamp::default());
}
