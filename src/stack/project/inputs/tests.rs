//! The files and variables compose reads for a project, found in made-up project directories the way compose finds them.

use super::*;

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hal-inputs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn put(dir: &Path, file: &str, text: &str) {
    let p = dir.join(file);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn rel(dir: &Path, files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|f| f.strip_prefix(dir).unwrap().display().to_string())
        .collect()
}

#[test]
fn every_file_compose_reads_is_listed() {
    let d = tmp("all");
    put(
        &d,
        "compose.yaml",
        "name: other\ninclude:\n  - path: sub/inc.yaml\nservices:\n  web:\n    image: x\n    env_file: env/app.env\n    extends:\n      file: base.yaml\n      service: b\n  db:\n    env_file:\n      - path: ./env/db.env\n        required: false\n      - ${CONF:-conf}/more.env\nconfigs:\n  c:\n    file: ./c.txt\nsecrets:\n  s:\n    file: ./s.txt\n",
    );
    put(
        &d,
        "compose.override.yaml",
        "services:\n  web:\n    ports: ['8080:80']\n",
    );
    put(&d, "base.yaml", "services:\n  b:\n    command: x\n");
    put(
        &d,
        "sub/inc.yaml",
        "services:\n  inc:\n    env_file: inc.env\n",
    );
    put(&d, "sub/inc.env", "A=1\n");
    put(&d, "env/app.env", "A=1\n");
    put(&d, "conf/more.env", "A=1\n");
    put(&d, "c.txt", "");
    put(&d, "s.txt", "");
    put(&d, ".env", "X=1\n");
    put(&d, "notes.txt", "not read");
    let i = read(&d).unwrap();
    assert_eq!(
        rel(&d, &i.files),
        [
            ".env",
            "base.yaml",
            "c.txt",
            "compose.override.yaml",
            "compose.yaml",
            "conf/more.env",
            "env/app.env",
            "env/db.env",
            "s.txt",
            "sub/inc.env",
            "sub/inc.yaml",
        ]
    );
    assert_eq!(
        rel(&d, &i.compose_files),
        ["compose.yaml", "compose.override.yaml"]
    );
    assert_eq!(i.own_name(), Some(("other", "name:")));
    assert!(i.vars.contains_key("CONF"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn compose_file_in_dotenv_replaces_the_defaults() {
    let d = tmp("cf");
    put(&d, "compose.yaml", "services: {a: {image: x}}\n");
    put(&d, "compose.override.yaml", "services: {a: {image: y}}\n");
    put(&d, "one.yml", "services: {a: {image: x}}\n");
    put(&d, "two.yml", "services: {b: {image: x}}\n");
    put(
        &d,
        ".env",
        "COMPOSE_PATH_SEPARATOR=;\nCOMPOSE_FILE=one.yml;two.yml\nCOMPOSE_PROFILES=a, b\n",
    );
    let i = read(&d).unwrap();
    assert_eq!(rel(&d, &i.compose_files), ["one.yml", "two.yml"]);
    put(&d, ".env", "COMPOSE_FILE=one.yml:gone.yml\n");
    let e = read(&d).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:1: compose file {} is not there",
            d.join(".env").display(),
            d.join("gone.yml").display()
        )
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Issue 33: `.env` values are interpolated as compose reads them; one compose refuses names its line.
#[test]
fn compose_file_in_dotenv_may_be_a_default_form() {
    let d = tmp("cfdef");
    put(&d, "one.yml", "services: {a: {image: x}}\n");
    put(&d, "two.yml", "services: {b: {image: x}}\n");
    put(
        &d,
        ".env",
        "SEP=;\nCOMPOSE_PATH_SEPARATOR=${SEP}\nCOMPOSE_FILE=${HAL_T_UNSET_CF:-one.yml;two.yml}\n",
    );
    let i = read(&d).unwrap();
    assert_eq!(rel(&d, &i.compose_files), ["one.yml", "two.yml"]);
    assert_eq!(i.vars["COMPOSE_FILE"].as_deref(), Some("one.yml;two.yml"));
    assert!(i.vars.contains_key("HAL_T_UNSET_CF"), "{:?}", i.vars);
    put(
        &d,
        ".env",
        "A=1\nCOMPOSE_FILE=${HAL_T_UNSET_CF:?say which}\n",
    );
    let e = read(&d).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2: required variable HAL_T_UNSET_CF is missing a value: say which",
            d.join(".env").display()
        )
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_missing_env_file_or_include_names_file_and_line() {
    let d = tmp("miss");
    put(
        &d,
        "compose.yaml",
        "services:\n  a:\n    image: x\n    env_file: env/app.env\n",
    );
    let e = read(&d).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "{}:4: env_file ",
            d.join("compose.yaml").display()
        )),
        "{e}"
    );
    put(&d, "compose.yaml", "include:\n  - inc.yaml\nservices: {}\n");
    let e = read(&d).unwrap_err();
    assert!(e.to_string().contains(":2: include target "), "{e}");
    put(&d, "compose.yaml", "services:\n  a: [\n");
    assert!(matches!(
        read(&d),
        Err(InputError::Unreadable { line: Some(_), .. })
    ));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn variables_anywhere_in_a_document_or_dotenv_are_inputs() {
    let d = tmp("vars");
    put(
        &d,
        "compose.yaml",
        "services:\n  web:\n    image: app:${HAL_T_TAG:-1}\n    command: echo $HAL_T_WORD $$NOT_A_VAR\n    environment:\n      ${HAL_T_KEY}: x\n",
    );
    put(&d, ".env", "HAL_T_TAG=${HAL_T_BASE}\n");
    let vars = read(&d).unwrap().vars;
    for v in ["HAL_T_TAG", "HAL_T_WORD", "HAL_T_KEY", "HAL_T_BASE"] {
        assert!(vars.contains_key(v), "{v} is not an input: {vars:?}");
    }
    assert!(!vars.contains_key("NOT_A_VAR"), "`$$` is no variable");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Compose (go-yaml v3) expands `<<: *anchor` and reads `yes`/`on` as strings.
#[test]
fn merge_keys_expand_and_yes_on_stay_strings() {
    let d = tmp("merge");
    put(
        &d,
        "compose.yaml",
        "name: yes\nx-common: &common\n  image: app:${HAL_T_MERGED}\n  env_file: common.env\nservices:\n  on:\n    <<: *common\n    tty: on\n  web:\n    <<: [*common]\n    env_file: web.env\n",
    );
    put(&d, "common.env", "A=1\n");
    put(&d, "web.env", "A=1\n");
    let i = read(&d).unwrap();
    assert_eq!(i.name.as_deref(), Some("yes"));
    assert_eq!(
        rel(&d, &i.files),
        ["common.env", "compose.yaml", "web.env"],
        "the service that merges `*common` reads its env_file; the one that overrides it does not"
    );
    assert!(i.vars.contains_key("HAL_T_MERGED"));
    // Without the merge, `on` names no env_file and common.env is no input.
    put(
        &d,
        "compose.yaml",
        "x-common: &common\n  env_file: common.env\nservices:\n  on:\n    image: x\n",
    );
    assert_eq!(rel(&d, &read(&d).unwrap().files), ["compose.yaml"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn what_a_project_uses_from_others_is_noted_with_its_key() {
    use crate::module::deps::Tie;
    let d = tmp("ties");
    put(
        &d,
        "compose.yaml",
        "networks:\n  own: {}\n  named:\n    name: ${NET:-gwnet}\n  ext:\n    external: true\n    name: shared\n  old:\n    external:\n      name: legacy\n  bare:\n    external: true\nservices:\n  vpn:\n    image: x\n    container_name: gw-main\n    network_mode: \"container:other-main\"\n  web:\n    image: x\n    volumes_from: [\"container:data:ro\", \"svc\"]\n    pid: \"container:pidns\"\n    ipc: \"container:ipcns\"\n    external_links: [\"cache:redis\"]\n    extends:\n      file: base.yaml\n      service: b\n",
    );
    put(
        &d,
        "base.yaml",
        "services:\n  b:\n    network_mode: \"container:not-mine\"\n",
    );
    let inputs = read(&d).unwrap();
    let t = inputs.ties("proj");
    assert_eq!(
        t.containers,
        vec!["gw-main", "proj-web-1", "proj_web_1"],
        "{t:?}"
    );
    let mut nets = t.networks.clone();
    nets.sort();
    assert_eq!(nets, vec!["gwnet", "proj_own"]);
    let uses: Vec<(Tie, &str, &str)> = t
        .uses
        .iter()
        .map(|u| (u.tie, u.name.as_str(), u.key.as_str()))
        .collect();
    assert_eq!(
        uses,
        vec![
            (Tie::Network, "shared", "networks.ext"),
            (Tie::Network, "legacy", "networks.old"),
            (Tie::Network, "bare", "networks.bare"),
            (Tie::Namespace, "other-main", "services.vpn.network_mode"),
            (Tie::Namespace, "pidns", "services.web.pid"),
            (Tie::Namespace, "ipcns", "services.web.ipc"),
            (Tie::Namespace, "data", "services.web.volumes_from"),
            (Tie::Link, "cache", "services.web.external_links"),
        ],
        "an extends target's services are not the project's"
    );
    assert!(t.uses.iter().all(|u| u.file == d.join("compose.yaml")));
    std::fs::remove_dir_all(&d).unwrap();
}
