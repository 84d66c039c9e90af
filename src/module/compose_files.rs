//! The names compose looks for before any compose file: its default file names, and how
//! `COMPOSE_FILE` names others. Module discovery needs them (a directory with only `.env`
//! is a stack), so they live below `stack/`, which reads the rest of compose's inputs;
//! `load.rs` reads the directory's `.env` and looks for the files.

/// The compose file names compose looks for, in its order of preference
/// (discovery and the stack backend both read this one list).
pub(crate) const COMPOSE_FILES: [&str; 4] = [
    "compose.yaml",
    "compose.yml",
    "docker-compose.yaml",
    "docker-compose.yml",
];

/// The files `COMPOSE_FILE` names, split as compose splits it
/// (`COMPOSE_PATH_SEPARATOR`, else `:`), empty parts left out: `var` looks a
/// variable up (the process's environment, then the directory's `.env`).
/// `None` when it names none. Whether each is a file is for the loader
/// (`load.rs`) to find out.
pub(crate) fn named(var: impl Fn(&str) -> Option<String>) -> Option<Vec<String>> {
    let list = var("COMPOSE_FILE").filter(|v| !v.is_empty())?;
    let sep = var("COMPOSE_PATH_SEPARATOR")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| ":".to_string());
    Some(
        list.split(sep.as_str())
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::named;

    #[test]
    fn compose_file_is_split_by_its_separator_and_empty_parts_are_left_out() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(named(vars(&[])), None);
        assert_eq!(named(vars(&[("COMPOSE_FILE", "")])), None);
        assert_eq!(
            named(vars(&[("COMPOSE_FILE", "a.yaml::b.yaml")])),
            Some(vec!["a.yaml".to_string(), "b.yaml".into()])
        );
        assert_eq!(
            named(vars(&[
                ("COMPOSE_FILE", "a.yaml;b:c.yaml"),
                ("COMPOSE_PATH_SEPARATOR", ";")
            ])),
            Some(vec!["a.yaml".to_string(), "b:c.yaml".into()])
        );
    }
}
