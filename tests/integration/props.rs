//! Property tests: the parsers that read hostile input (config, names, state file, durations, times,
//! log frames) never panic and keep their promises. `fuzz/run.sh` runs them far longer.

use proptest::prelude::*;

use crate::lib_paths::{
    Assembler, Config, MAX_LINE, RestartLimit, Stream, duration, is_valid_name, parse_state,
    timefmt,
};

fn config() -> ProptestConfig {
    // PROPTEST_CASES (set by fuzz/run.sh) makes the long runs.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(256);
    ProptestConfig::with_cases(cases)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn config_parser_never_panics(text in ".{0,400}") {
        let _ = Config::parse(&text, std::path::Path::new("fuzz.toml"));
    }

    #[test]
    fn config_parser_never_panics_on_near_valid_toml(
        key in "(services_dir|pull|restart|burst|interval|unit|scope|after|on_failure|timeout|critical|x)",
        table in "(defaults|module\\.[a-z]{1,3}|module\\.A|module|)",
        value in "(\"[a-z0-9 ;$]{0,8}\"|[0-9]{1,25}|-1|true|\\[\"[a-z]{0,3}\"\\]|\\{ burst = [0-9]{1,12}, interval = \"[0-9]{0,4}[a-z]{0,3}\" \\})",
    ) {
        let text = if table.is_empty() { format!("{key} = {value}\n") } else { format!("[{table}]\n{key} = {value}\n") };
        match Config::parse(&text, std::path::Path::new("/etc/hal/hal.toml")) {
            Ok(_) => {}
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("config /etc/hal/hal.toml: "), "{}", msg);
                prop_assert!(!msg.contains('\n') || msg.lines().count() < 8, "{}", msg);
            }
        }
    }

    #[test]
    fn valid_names_are_safe(name in "\\PC{0,40}") {
        if is_valid_name(&name) {
            prop_assert!(!name.contains('/') && !name.contains("..") && !name.is_empty());
            prop_assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'));
        }
    }

    #[test]
    fn state_reader_never_panics(text in ".{0,300}") {
        let _ = parse_state(&text);
    }

    #[test]
    fn state_reader_never_panics_on_json_shapes(
        starts in proptest::collection::vec(any::<i64>(), 0..5),
        desired in "(\"up\"|\"down\"|\"sideways\"|null|3)",
        schema in any::<u32>(),
    ) {
        let text = format!("{{\"schema\":{schema},\"modules\":{{\"web\":{{\"starts\":{starts:?},\"desired\":{desired}}}}}}}");
        if let Ok(state) = parse_state(&text) {
            let limit = RestartLimit { burst: 5, interval: std::time::Duration::from_secs(120) };
            let rec = &state.modules["web"];
            let u = rec.limit_use(limit, timefmt::Stamp::from_secs(1_000_000));
            prop_assert!(u.used as usize <= starts.len());
        }
    }

    #[test]
    fn durations_never_panic_and_round_trip(text in "[0-9a-z ]{0,12}") {
        if let Ok(d) = duration::parse(&text) {
            prop_assert_eq!(duration::parse(&duration::format(d)).unwrap(), d);
        }
    }

    #[test]
    fn timestamps_never_panic(text in "[0-9TZ:.+ -]{0,40}") {
        if let Some(t) = timefmt::parse(&text) {
            prop_assert_eq!(timefmt::parse(&t.rfc3339_nanos()), Some(t));
        }
    }

    #[test]
    fn log_frames_never_panic_and_lose_nothing(
        frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..20),
    ) {
        let mut a = Assembler::default();
        let mut lines = Vec::new();
        for f in &frames {
            lines.extend(a.push(Stream::Stdout, f));
        }
        lines.extend(a.finish());
        for l in &lines {
            prop_assert!(l.message.len() <= MAX_LINE * 3, "a line grew past the cap");
        }
        let newlines: usize = frames.iter().map(|f| f.iter().filter(|&&b| b == b'\n').count()).sum();
        prop_assert!(lines.len() <= newlines + 1);
    }
}

#[test]
fn a_line_over_one_mebibyte_is_cut_into_bounded_pieces() {
    let mut a = Assembler::default();
    let mut big = b"2024-01-01T00:00:00Z ".to_vec();
    big.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE + 5));
    big.push(b'\n');
    let lines = a.push(Stream::Stdout, &big);
    assert_eq!(lines.len(), 4);
    assert!(lines.iter().all(|l| l.message.len() <= MAX_LINE));
    let total: usize = lines.iter().map(|l| l.message.len()).sum();
    assert_eq!(total, 3 * MAX_LINE + 5);
}
