//! Podman's default subnet pools, from its own configuration (`containers.conf` and its drop-ins): its API does not report them, and Docker's daemon.json says nothing of Podman.

use std::path::{Path, PathBuf};

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

/// The files Podman reads, in order (a later one overrides an earlier one):
/// the distribution's, the system's, its drop-ins, then a rootless user's own.
pub(super) fn files(user_config: Option<&Path>) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("/usr/share/containers/containers.conf")];
    let mut dirs = vec![PathBuf::from("/etc/containers")];
    dirs.extend(user_config.map(|c| c.join("containers")));
    for dir in dirs {
        out.push(dir.join("containers.conf"));
        let mut drop_ins: Vec<PathBuf> = std::fs::read_dir(dir.join("containers.conf.d"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "conf"))
            .collect();
        drop_ins.sort();
        out.extend(drop_ins);
    }
    out
}

/// The `[network] default_subnet_pools` one file sets, if it sets them.
pub(super) fn from_conf(text: &str) -> Result<Option<Vec<AddressPool>>, String> {
    #[derive(serde::Deserialize)]
    struct Pool {
        base: String,
        size: u8,
    }
    #[derive(serde::Deserialize, Default)]
    struct Network {
        default_subnet_pools: Option<Vec<Pool>>,
    }
    #[derive(serde::Deserialize)]
    struct Conf {
        #[serde(default)]
        network: Network,
    }
    let conf: Conf = toml::from_str(text).map_err(|e| e.message().to_string())?;
    Ok(conf.network.default_subnet_pools.map(|pools| {
        pools
            .into_iter()
            .map(|p| AddressPool {
                base: p.base,
                size: p.size,
            })
            .collect()
    }))
}

/// The pools Podman uses here and the file that set them (or its stock pools).
pub(super) fn read(user_config: Option<&Path>) -> Result<(Vec<AddressPool>, String), String> {
    let mut found = (stock(), "Podman's stock pools".to_string());
    for path in files(user_config) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        match from_conf(&text) {
            Ok(Some(pools)) => found = (pools, path.display().to_string()),
            Ok(None) => {}
            Err(e) => return Err(format!("{}: {e}", path.display())),
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
}
