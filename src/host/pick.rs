//! Which init runs this node's units: the one place that names it, and the [`Inits`] everyone else asks.

use std::sync::Arc;

use crate::error::HalError;
use crate::host::init::{Init, systemd};
use crate::module::config::{Config, Scope};

/// The init that manages units of `scope` on this node: the one line to
/// change (or make a choice) when hal learns another init.
pub(crate) fn for_scope(scope: Scope) -> Arc<dyn Init> {
    Arc::new(systemd::Systemd::new(scope))
}

/// The node's inits, one per scope. The runner and the commands hold one and
/// ask it for a unit's init; nothing else picks one.
#[derive(Clone)]
pub(crate) struct Inits {
    user: Arc<dyn Init>,
    system: Arc<dyn Init>,
}

impl Default for Inits {
    /// The inits [`for_scope`] picks.
    fn default() -> Inits {
        Inits::with(for_scope(Scope::User), for_scope(Scope::System))
    }
}

impl Inits {
    /// Given inits (the unit tests give scripted ones).
    pub(crate) fn with(user: Arc<dyn Init>, system: Arc<dyn Init>) -> Inits {
        Inits { user, system }
    }

    /// The init of `scope`.
    pub(crate) fn init(&self, scope: Scope) -> Arc<dyn Init> {
        match scope {
            Scope::User => self.user.clone(),
            Scope::System => self.system.clone(),
        }
    }

    /// Every `unit = ` of the config checked against its init's naming rule;
    /// the error names the file, line and key, as a parse error does.
    pub(crate) fn check_units(&self, config: &Config) -> Result<(), HalError> {
        for (name, m) in &config.modules {
            let Some(unit) = &m.unit else { continue };
            if let Some(why) = self.init(m.scope.unwrap_or_default()).unit_problem(unit) {
                return Err(config.key_error(&format!("module.{name}.unit"), why));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_unit_names_name_file_line_and_key() {
        let text = "[module.ok]\nunit = \"a.service\"\n[module.n]\nunit = \"x; rm -rf /\"\n";
        let cfg = Config::parse(text, std::path::Path::new("/etc/hal/hal.toml")).unwrap();
        let e = Inits::default().check_units(&cfg).unwrap_err().to_string();
        assert_eq!(
            e,
            "config /etc/hal/hal.toml: line 4, key module.n.unit: \"x; rm -rf /\" is not a unit name (expected e.g. \"notifier.service\")"
        );
        let good = "[module.ok]\nunit = \"getty@tty1.service\"\nscope = \"system\"\n";
        let cfg = Config::parse(good, std::path::Path::new("h.toml")).unwrap();
        assert!(Inits::default().check_units(&cfg).is_ok());
    }
}
