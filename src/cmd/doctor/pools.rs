//! Docker's default address pools: how many networks they hold, how many are taken, and whether every stack fits.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use super::check::Check;
use crate::stack::{AddressPool, NetworkFacts};

/// Where the local daemon's config lives (rootful Docker).
pub(super) const DAEMON_JSON: &str = "/etc/docker/daemon.json";

/// The pools a stock dockerd uses when `default-address-pools` is not set:
/// 172.17-31.0.0/16 as /16s and 192.168.0.0/16 as /20s, 31 networks in all.
pub(super) fn stock() -> Vec<AddressPool> {
    let mut pools: Vec<AddressPool> = (17..=31)
        .map(|n| AddressPool {
            base: format!("172.{n}.0.0/16"),
            size: 16,
        })
        .collect();
    pools.push(AddressPool {
        base: "192.168.0.0/16".into(),
        size: 20,
    });
    pools
}

/// An IPv4 network in CIDR notation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Cidr {
    addr: u32,
    prefix: u8,
}

impl Cidr {
    /// Parses `10.200.0.0/16`; `None` for IPv6 or anything malformed.
    pub(super) fn parse(text: &str) -> Option<Cidr> {
        let (addr, prefix) = text.trim().split_once('/')?;
        let addr: Ipv4Addr = addr.parse().ok()?;
        let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 32)?;
        Some(Cidr {
            addr: u32::from(addr),
            prefix,
        })
    }

    fn mask(self) -> u32 {
        u32::MAX
            .checked_shl(32 - u32::from(self.prefix))
            .unwrap_or(0)
    }

    /// Whether `inner` lies entirely inside this network.
    pub(super) fn contains(self, inner: Cidr) -> bool {
        inner.prefix >= self.prefix && (inner.addr & self.mask()) == (self.addr & self.mask())
    }
}

/// How many networks the IPv4 pools hold: each gives 2^(size - prefix) subnets.
pub(super) fn capacity(pools: &[AddressPool]) -> u64 {
    pools
        .iter()
        .filter_map(|p| {
            let base = Cidr::parse(&p.base)?;
            let bits = p.size.checked_sub(base.prefix).filter(|_| p.size <= 32)?;
            1u64.checked_shl(u32::from(bits))
        })
        .sum()
}

/// How many existing networks took their IPv4 subnet from one of the pools.
pub(super) fn used(pools: &[AddressPool], networks: &[NetworkFacts]) -> u64 {
    let bases: Vec<Cidr> = pools.iter().filter_map(|p| Cidr::parse(&p.base)).collect();
    let inside =
        |subnet: &String| Cidr::parse(subnet).is_some_and(|s| bases.iter().any(|b| b.contains(s)));
    let count = networks
        .iter()
        .flat_map(|n| n.subnets.iter())
        .filter(|s| inside(s))
        .count();
    u64::try_from(count).unwrap_or(u64::MAX)
}

/// A pool as daemon.json and Podman's containers.conf both write it.
#[derive(serde::Deserialize)]
pub(super) struct Written {
    base: String,
    size: u8,
}

/// The pools a file wrote.
pub(super) fn pools_of(written: Vec<Written>) -> Vec<AddressPool> {
    written
        .into_iter()
        .map(|p| AddressPool {
            base: p.base,
            size: p.size,
        })
        .collect()
}

/// A file of pools that cannot be read: the file, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: {why}", path.display())]
pub(super) struct Unreadable {
    pub path: PathBuf,
    pub why: String,
}

/// The `default-address-pools` that daemon.json sets, if it sets them.
pub(super) fn from_daemon_json(text: &str) -> Result<Option<Vec<AddressPool>>, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Daemon {
        #[serde(rename = "default-address-pools")]
        pools: Option<Vec<Written>>,
    }
    let daemon: Daemon = serde_json::from_str(text)?;
    Ok(daemon.pools.filter(|p| !p.is_empty()).map(pools_of))
}

/// The pools in `path`, or `None` when the file is absent or does not set them.
pub(super) fn read_daemon_json(path: &Path) -> Result<Option<Vec<AddressPool>>, Unreadable> {
    let unreadable = |why: String| Unreadable {
        path: path.to_path_buf(),
        why,
    };
    match std::fs::read_to_string(path) {
        Ok(text) => from_daemon_json(&text).map_err(|e| unreadable(e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unreadable(e.to_string())),
    }
}

/// Whether `need` more networks fit, given `used` of `capacity` subnets from `source`.
#[cfg(test)]
pub(super) fn verdict(capacity: u64, used: u64, need: u64, source: &str) -> Check {
    verdict_with(capacity, used, need, source, widen_hint)
}

/// [`verdict`], with the engine's own way to widen its pools.
pub(super) fn verdict_with(
    capacity: u64,
    used: u64,
    need: u64,
    source: &str,
    widen: fn(u64) -> String,
) -> Check {
    let free = capacity.saturating_sub(used);
    let detail = format!(
        "{used} of {capacity} subnets in use ({source}), {free} free; {need} needed by stacks without a network"
    );
    if free >= need {
        return Check::pass("address-pools", detail);
    }
    Check::fail(
        "address-pools",
        format!(
            "{detail}: starting them fails with \"could not find an available, non-overlapping IPv4 address pool\""
        ),
        widen(used + need),
    )
}

/// What to add to daemon.json to hold `want` networks of /24.
pub(super) fn widen_hint(want: u64) -> String {
    let sixteens = want.div_ceil(256).clamp(1, 64);
    let example = if sixteens == 1 {
        "{\"base\": \"10.200.0.0/16\", \"size\": 24}".to_string()
    } else {
        format!(
            "{{\"base\": \"10.192.0.0/{}\", \"size\": 24}}",
            16 - sixteens.next_power_of_two().ilog2()
        )
    };
    format!(
        "widen the pools: in {DAEMON_JSON} set \"default-address-pools\": [{example}] \
(a range your networks do not use; /24 subnets, 256 per /16), then restart dockerd"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(subnets: &[&str]) -> NetworkFacts {
        NetworkFacts {
            name: "n".into(),
            project: None,
            subnets: subnets.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn stock_pools_hold_31_networks() {
        assert_eq!(capacity(&stock()), 31);
    }

    #[test]
    fn capacity_counts_subnets_of_each_pool() {
        let pools = from_daemon_json(
            r#"{"default-address-pools":[{"base":"10.200.0.0/16","size":24},{"base":"10.201.0.0/16","size":24}]}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(capacity(&pools), 512);
        let odd = [AddressPool {
            base: "10.0.0.0/24".into(),
            size: 16,
        }];
        assert_eq!(capacity(&odd), 0);
        assert_eq!(from_daemon_json("{}").unwrap(), None);
        assert!(from_daemon_json("{").is_err());
    }

    #[test]
    fn used_counts_ipv4_subnets_inside_the_pools() {
        let nets = [
            net(&["172.17.0.0/16"]),
            net(&["192.168.16.0/20", "fd00::/64"]),
            net(&["10.9.0.0/24"]),
            net(&[]),
        ];
        assert_eq!(used(&stock(), &nets), 2);
    }

    #[test]
    fn cidr_containment() {
        let base = Cidr::parse("10.200.0.0/16").unwrap();
        assert!(base.contains(Cidr::parse("10.200.7.0/24").unwrap()));
        assert!(!base.contains(Cidr::parse("10.201.0.0/24").unwrap()));
        assert!(!base.contains(Cidr::parse("10.0.0.0/8").unwrap()));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains(base));
        assert_eq!(Cidr::parse("fd00::/64"), None);
        assert_eq!(Cidr::parse("10.0.0.0/33"), None);
    }

    #[test]
    fn stock_pools_run_out_near_30_stacks() {
        let cap = capacity(&stock());
        assert!(verdict(cap, 1, 30, "stock").ok);
        let full = verdict(cap, 1, 31, "stock");
        assert!(!full.ok);
        assert!(
            full.detail.contains("non-overlapping IPv4 address pool"),
            "{full:?}"
        );
        assert!(full.hint.unwrap().contains("default-address-pools"));
    }

    #[test]
    fn hint_names_the_setting() {
        assert!(
            widen_hint(40).contains(
                "\"default-address-pools\": [{\"base\": \"10.200.0.0/16\", \"size\": 24}]"
            )
        );
        assert!(widen_hint(600).contains("10.192.0.0/14"));
    }
}
