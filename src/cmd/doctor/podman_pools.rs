//! Podman's default subnet pools, from its own configuration (`containers.conf` and its drop-ins): its API does not report them, and Docker's daemon.json says nothing of Podman.

use std::path::{Path, PathBuf};

use super::pools::{Unreadable, Written, pools_of};
use crate::stack::AddressPool;

/// Podman 4's pools when no file sets `default_subnet_pools`: 10.89.0.0/16 up to
/// 10.255.0.0/16, /24 subnets each.
pub(super) fn stock() -> Vec<AddressPool> {
    (89..=255)
        .map(|b| AddressPool {
            base: format!("10.{b}.0.0/16"),
            size: 24,
        })
        .collect()
}

/// Where Podman's configuration is read from: its two system directories, a
/// rootless user's own, and the environment's overrides (containers.conf(5)).
pub(super) struct Places {
    /// `/usr/share/containers`: the distribution's.
    pub share: PathBuf,
    /// `/etc/containers`: the administrator's.
    pub etc: PathBuf,
    /// `$XDG_CONFIG_HOME/containers` (else `~/.config/containers`): a rootless user's.
    pub user: Option<PathBuf>,
    /// The user id Podman runs as: 0 reads `containers.rootful.conf.d`, any
    /// other `containers.rootless.conf.d` and its `UID/` subdirectory.
    pub uid: u32,
    /// `CONTAINERS_CONF`: this file alone, instead of every other.
    pub conf: Option<PathBuf>,
    /// `CONTAINERS_CONF_OVERRIDE`: read last, over everything.
    pub conf_override: Option<PathBuf>,
}

impl Places {
    /// This node's, for hal's own user (`user_config`: `None` for root).
    pub(super) fn here(user_config: Option<&Path>) -> Places {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Places {
            share: PathBuf::from("/usr/share/containers"),
            etc: PathBuf::from("/etc/containers"),
            user: user_config.map(|c| c.join("containers")),
            uid: crate::util::sys::euid(),
            conf: var("CONTAINERS_CONF"),
            conf_override: var("CONTAINERS_CONF_OVERRIDE"),
        }
    }
}

/// The files Podman reads, in containers.conf(5)'s order (a later one
/// overrides an earlier one): `CONTAINERS_CONF` alone when set; else, in the
/// distribution's directory, then the administrator's, `containers.conf`, its
/// `containers.conf.d/`, then `containers.rootful.conf.d/` (root) or
/// `containers.rootless.conf.d/` and its `UID/`; then a rootless user's
/// `containers.conf` and `containers.conf.d/`; `CONTAINERS_CONF_OVERRIDE`
/// last. Drop-ins are the `.conf` files of a directory, in name order.
pub(super) fn files(p: &Places) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(conf) = &p.conf {
        out.push(conf.clone());
    } else {
        for dir in [&p.share, &p.etc] {
            out.push(dir.join("containers.conf"));
            out.extend(drop_ins(&dir.join("containers.conf.d")));
            if p.uid == 0 {
                out.extend(drop_ins(&dir.join("containers.rootful.conf.d")));
            } else {
                let rootless = dir.join("containers.rootless.conf.d");
                out.extend(drop_ins(&rootless));
                out.extend(drop_ins(&rootless.join(p.uid.to_string())));
            }
        }
        if let Some(dir) = &p.user {
            out.push(dir.join("containers.conf"));
            out.extend(drop_ins(&dir.join("containers.conf.d")));
        }
    }
    out.extend(p.conf_override.clone());
    out
}

/// The `.conf` files of `dir`, in name order (none when it is absent).
fn drop_ins(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "conf"))
        .collect();
    found.sort();
    found
}

/// The `[network] default_subnet_pools` one file sets, if it sets them.
pub(super) fn from_conf(text: &str) -> Result<Option<Vec<AddressPool>>, toml::de::Error> {
    #[derive(serde::Deserialize, Default)]
    struct Network {
        default_subnet_pools: Option<Vec<Written>>,
    }
    #[derive(serde::Deserialize)]
    struct Conf {
        #[serde(default)]
        network: Network,
    }
    let conf: Conf = toml::from_str(text)?;
    Ok(conf.network.default_subnet_pools.map(pools_of))
}

/// The pools Podman uses here and the file that set them (or its stock pools).
pub(super) fn read(places: &Places) -> Result<(Vec<AddressPool>, String), Unreadable> {
    let mut found = (stock(), "Podman's stock pools".to_string());
    for path in files(places) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        match from_conf(&text) {
            Ok(Some(pools)) => found = (pools, path.display().to_string()),
            Ok(None) => {}
            Err(e) => {
                return Err(Unreadable {
                    path,
                    why: e.message().to_string(),
                });
            }
        }
    }
    Ok(found)
}

/// What to set to hold `want` networks of /24.
pub(super) fn widen_hint(want: u64) -> String {
    let sixteens = want.div_ceil(256).clamp(1, 64);
    format!(
        "widen the pools: in /etc/containers/containers.conf.d/pools.conf set [network] \
default_subnet_pools = [{{ base = \"10.192.0.0/{}\", size = 24 }}] (a range your networks do not use), \
then restart the Podman service",
        16 - sixteens.next_power_of_two().ilog2()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_are_read_from_containers_conf() {
        let pools = from_conf(
            "[containers]\nlog_driver = \"k8s-file\"\n[network]\ndefault_subnet_pools = [\n  { base = \"10.202.0.0/16\", size = 24 },\n]\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(pools[0].base, "10.202.0.0/16");
        assert_eq!(pools[0].size, 24);
        assert_eq!(from_conf("[engine]\nruntime = \"runc\"\n").unwrap(), None);
        assert!(from_conf("[network\n").is_err());
        assert_eq!(stock().len(), 167);
        assert!(widen_hint(600).contains("10.192.0.0/14"));
    }

    /// A fake root holding every place Podman reads, each file setting its
    /// own pool: the order read, and the file whose pools win.
    struct Fake {
        root: PathBuf,
    }

    impl Fake {
        fn new(tag: &str) -> Fake {
            let root =
                std::env::temp_dir().join(format!("hal-podman-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            for f in [
                "share/containers.conf",
                "share/containers.conf.d/20-b.conf",
                "share/containers.conf.d/10-a.conf",
                "share/containers.conf.d/notes.txt",
                "share/containers.rootful.conf.d/a.conf",
                "share/containers.rootless.conf.d/a.conf",
                "share/containers.rootless.conf.d/1000/a.conf",
                "etc/containers.conf",
                "etc/containers.conf.d/a.conf",
                "etc/containers.rootful.conf.d/a.conf",
                "etc/containers.rootless.conf.d/a.conf",
                "etc/containers.rootless.conf.d/1000/a.conf",
                "home/.config/containers/containers.conf",
                "home/.config/containers/containers.conf.d/a.conf",
                "env/only.conf",
                "env/override.conf",
            ] {
                let path = root.join(f);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(
                    &path,
                    format!(
                        "[network]\ndefault_subnet_pools = [{{ base = \"{f}\", size = 24 }}]\n"
                    ),
                )
                .unwrap();
            }
            Fake { root }
        }

        fn places(&self, uid: u32, rootless: bool, env: bool) -> Places {
            Places {
                share: self.root.join("share"),
                etc: self.root.join("etc"),
                user: rootless.then(|| self.root.join("home/.config/containers")),
                uid,
                conf: env.then(|| self.root.join("env/only.conf")),
                conf_override: env.then(|| self.root.join("env/override.conf")),
            }
        }

        /// `files`' order, as paths below the fake root.
        fn order(&self, p: &Places) -> Vec<String> {
            files(p)
                .iter()
                .map(|f| f.strip_prefix(&self.root).unwrap().display().to_string())
                .collect()
        }
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    /// containers.conf(5) and containers-config(5): the distribution's, then
    /// the administrator's, each file then its drop-ins in name order, then
    /// rootful (uid 0) or rootless (and its UID/) drop-ins, then the user's.
    #[test]
    fn files_are_read_in_containers_conf_5s_order() {
        let fake = Fake::new("order");
        assert_eq!(
            fake.order(&fake.places(0, false, false)),
            [
                "share/containers.conf",
                "share/containers.conf.d/10-a.conf",
                "share/containers.conf.d/20-b.conf",
                "share/containers.rootful.conf.d/a.conf",
                "etc/containers.conf",
                "etc/containers.conf.d/a.conf",
                "etc/containers.rootful.conf.d/a.conf",
            ]
        );
        assert_eq!(
            fake.order(&fake.places(1000, true, false)),
            [
                "share/containers.conf",
                "share/containers.conf.d/10-a.conf",
                "share/containers.conf.d/20-b.conf",
                "share/containers.rootless.conf.d/a.conf",
                "share/containers.rootless.conf.d/1000/a.conf",
                "etc/containers.conf",
                "etc/containers.conf.d/a.conf",
                "etc/containers.rootless.conf.d/a.conf",
                "etc/containers.rootless.conf.d/1000/a.conf",
                "home/.config/containers/containers.conf",
                "home/.config/containers/containers.conf.d/a.conf",
            ]
        );
        // CONTAINERS_CONF alone, CONTAINERS_CONF_OVERRIDE over it.
        assert_eq!(
            fake.order(&fake.places(1000, true, true)),
            ["env/only.conf", "env/override.conf"]
        );
        // The last file that sets the pools wins, and is named.
        let (pools, source) = read(&fake.places(1000, true, false)).unwrap();
        assert_eq!(
            pools[0].base,
            "home/.config/containers/containers.conf.d/a.conf"
        );
        assert!(
            source.ends_with("home/.config/containers/containers.conf.d/a.conf"),
            "{source}"
        );
        let (pools, _) = read(&fake.places(0, false, true)).unwrap();
        assert_eq!(pools[0].base, "env/override.conf");
    }

    /// `Places::here` takes the user's directory and the environment's files as given.
    #[test]
    fn here_reads_the_users_config_dir() {
        let p = Places::here(Some(Path::new("/home/u/.config")));
        assert_eq!(p.user, Some(PathBuf::from("/home/u/.config/containers")));
        assert_eq!(p.share, PathBuf::from("/usr/share/containers"));
        assert_eq!(p.etc, PathBuf::from("/etc/containers"));
        assert_eq!(Places::here(None).user, None);
    }
}
