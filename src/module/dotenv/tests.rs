//! `.env` texts read as compose-go's `dotenv` reads them (its fixtures' cases among them).

use super::*;

fn read(text: &str, env: &[(&str, &str)]) -> Result<BTreeMap<String, String>, DotenvError> {
    let mut env = |n: &str| {
        env.iter()
            .find(|(k, _)| *k == n)
            .map(|(_, v)| v.to_string())
    };
    parse(text, &mut env)
}

fn ok(text: &str, env: &[(&str, &str)]) -> BTreeMap<String, String> {
    read(text, env).unwrap()
}

#[test]
fn comments_export_and_quotes() {
    let v = ok(
        "\u{feff}# c\n  # indented comment\nexport A=1\nexport\tB=\"two words\"\nC='x'\nD=plain # note\nE=a#b\nF = spaced  \nG: yaml\nexported=3\n\n",
        &[],
    );
    assert_eq!(v["A"], "1");
    assert_eq!(v["B"], "two words");
    assert_eq!(v["C"], "x");
    assert_eq!(v["D"], "plain");
    assert_eq!(v["E"], "a#b", "only ` #` starts a comment");
    assert_eq!(v["F"], "spaced");
    assert_eq!(v["G"], "yaml");
    assert_eq!(
        v["exported"], "3",
        "`export` is a prefix only before a space"
    );
    assert_eq!(v.len(), 8);
}

#[test]
fn double_quotes_read_escapes_and_span_lines_single_quotes_do_not() {
    let v = ok(
        "A=\"a\\nb \\\"q\\\" \\\\ \\$HOME\"\nB='a\\nb $HOME'\nC=\"one\ntwo\" # after\nD='it\\'s'\n",
        &[("HOME", "/root")],
    );
    assert_eq!(v["A"], "a\nb \"q\" \\ $HOME");
    assert_eq!(v["B"], "a\\nb $HOME");
    assert_eq!(v["C"], "one\ntwo");
    assert_eq!(v["D"], "it's");
}

/// compose-go's `fixtures/substitutions-default.env`, and the forms of issue 33.
#[test]
fn values_interpolate_against_the_environment_then_the_lines_above() {
    let text = "OPTION_A=${OPTION_A:-1}\nOPTION_B=${OPTION_A}\nOPTION_C=$OPTION_B\nOPTION_D=${OPTION_A}_${OPTION_B}\nOPTION_E=${OPTION_NOT_DEFINED}\n";
    let v = ok(text, &[]);
    assert_eq!(
        (&*v["OPTION_A"], &*v["OPTION_B"], &*v["OPTION_C"]),
        ("1", "1", "1")
    );
    assert_eq!(v["OPTION_D"], "1_1");
    assert_eq!(v["OPTION_E"], "");
    // The environment is asked first, as compose does.
    let v = ok(text, &[("OPTION_A", "env")]);
    assert_eq!(v["OPTION_D"], "env_env");

    let cf = "COMPOSE_FILE=${COMPOSE_FILE:-compose.yaml:extra.yaml}\n";
    assert_eq!(ok(cf, &[])["COMPOSE_FILE"], "compose.yaml:extra.yaml");
    assert_eq!(
        ok(cf, &[("COMPOSE_FILE", "mine.yaml")])["COMPOSE_FILE"],
        "mine.yaml"
    );
    let v = ok(
        "E=\nA=${E-unset}|${E:-empty}|${NOPE-unset}\nB=\"${A}\"\nC='${A}'\n",
        &[],
    );
    assert_eq!(v["A"], "|empty|unset");
    assert_eq!(v["B"], "|empty|unset");
    assert_eq!(v["C"], "${A}");
}

#[test]
fn a_bare_name_takes_the_environments_value() {
    let v = ok("FROM_ENV\nNOT_IN_ENV\n", &[("FROM_ENV", "yes")]);
    assert_eq!(v.get("FROM_ENV").map(String::as_str), Some("yes"));
    assert!(!v.contains_key("NOT_IN_ENV"));
}

#[test]
fn what_compose_refuses_names_the_line() {
    let e = read("A=1\nB=${NEEDED:?set NEEDED}\n", &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 2: required variable NEEDED is missing a value: set NEEDED"
    );
    assert_eq!(read("\n\nA=\"open\n", &[]).unwrap_err().line, 3);
    assert_eq!(read("MY KEY=1\n", &[]).unwrap_err().line, 1);
    assert_eq!(read("A=1\nB%=2\n", &[]).unwrap_err().line, 2);
    assert_eq!(read("A=${\n", &[]).unwrap_err().line, 1);
}
