use super::*;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn edge(from: &str, to: &str, strength: Strength, tie: Tie) -> Edge {
    Edge {
        from: from.into(),
        to: to.into(),
        strength,
        tie,
        origin: Origin::Config {
            key: "requires",
            line: Some(3),
        },
    }
}

/// gw ← tun (namespace), gw ← db (network), db ← app (declared), app after cache.
fn node() -> Graph {
    Graph::new(vec![
        edge("tun", "gw", Strength::Requires, Tie::Namespace),
        edge("db", "gw", Strength::Requires, Tie::Network),
        edge("app", "db", Strength::Requires, Tie::Declared),
        edge("app", "cache", Strength::After, Tie::Declared),
        edge("tun2", "tun", Strength::Requires, Tie::Namespace),
    ])
}

#[test]
fn pull_in_follows_requires_only() {
    let g = node();
    assert_eq!(g.pull_in(&names(&["app"])), names(&["app", "db", "gw"]));
    assert_eq!(g.pull_in(&names(&["tun2"])), names(&["tun2", "tun", "gw"]));
    assert_eq!(g.pull_in(&names(&["cache"])), names(&["cache"]));
}

#[test]
fn push_out_finds_every_dependent() {
    let g = node();
    assert_eq!(
        g.push_out(&names(&["gw"])),
        names(&["gw", "tun", "db", "tun2", "app"])
    );
    assert_eq!(g.push_out(&names(&["app"])), names(&["app"]));
    assert_eq!(g.required_by("gw").len(), 2);
    assert_eq!(g.requires("app").len(), 1);
}

#[test]
fn layers_order_by_both_strengths_and_stop_reverses() {
    let g = node();
    let all = names(&["app", "cache", "db", "gw", "tun", "tun2"]);
    assert_eq!(
        g.layers(&all, false),
        vec![
            names(&["cache", "gw"]),
            names(&["db", "tun"]),
            names(&["app", "tun2"])
        ]
    );
    let stop = g.layers(&all, true);
    assert_eq!(stop[0], names(&["app", "tun2"]));
    assert_eq!(stop.last().unwrap(), &names(&["cache", "gw"]));
    // Modules outside the call are not waited for.
    assert_eq!(g.layers(&names(&["app"]), false), vec![names(&["app"])]);
}

#[test]
fn restart_with_takes_namespace_dependents_only() {
    let g = node();
    assert_eq!(g.restart_with("gw"), names(&["tun", "tun2"]));
    assert!(g.restart_with("db").is_empty());
}

#[test]
fn cycles_are_named_with_their_origins() {
    let mut edges = node().edges().to_vec();
    edges.push(Edge {
        from: "gw".into(),
        to: "app".into(),
        strength: Strength::Requires,
        tie: Tie::Network,
        origin: Origin::Compose {
            file: "/s/gw/compose.yaml".into(),
            key: "networks.appnet".into(),
        },
    });
    let g = Graph::new(edges);
    let c = g.cycle().unwrap();
    assert_eq!(c, names(&["app", "db", "gw", "app"]));
    let words = g.describe_cycle(&c);
    assert!(words.starts_with("a cycle: app → db → gw → app"), "{words}");
    assert!(
        words.contains("gw → app: /s/gw/compose.yaml: networks.appnet"),
        "{words}"
    );
    assert!(node().cycle().is_none());
}

#[test]
fn compose_ties_become_edges_and_strangers_warnings() {
    let file = PathBuf::from("/s/tun/compose.yaml");
    let u = |tie, name: &str, key: &str| Use {
        tie,
        name: name.into(),
        file: file.clone(),
        key: key.into(),
    };
    let ties: BTreeMap<String, Ties> = [
        (
            "gw".to_string(),
            Ties {
                containers: names(&["gw-main"]),
                networks: names(&["gwnet", "gw_default"]),
                uses: vec![u(Tie::Network, "gwnet", "networks.gwnet")],
            },
        ),
        (
            "tun".to_string(),
            Ties {
                containers: names(&["tun-vpn-1"]),
                networks: vec![],
                uses: vec![
                    u(Tie::Namespace, "gw-main", "services.vpn.network_mode"),
                    u(Tie::Link, "elsewhere", "services.vpn.external_links"),
                ],
            },
        ),
    ]
    .into_iter()
    .collect();
    let (edges, unowned) = infer(&ties);
    assert_eq!(edges.len(), 1, "{edges:?}");
    assert_eq!(
        (edges[0].from.as_str(), edges[0].to.as_str()),
        ("tun", "gw")
    );
    assert_eq!(edges[0].tie, Tie::Namespace);
    assert_eq!(edges[0].strength, Strength::Requires);
    assert_eq!(unowned.len(), 1);
    assert_eq!(unowned[0].what.name, "elsewhere");
}
