//! Words from the command line resolved against the inventory: a module's
//! name, a quoted shell pattern, or `MODULE/SERVICE`, each refused with the
//! error the user can act on (no such module, no match, invalid name).

use crate::error::HalError;
use crate::module::inventory::Inventory;
use crate::module::pattern::is_pattern;
use crate::module::target::Target;
use crate::module::{Kind, Module};

impl Inventory {
    /// Resolves words given on the command line to whole modules, in order,
    /// without duplicates: names and quoted shell patterns (`'mail*'`). An
    /// unusable name is refused before anything is touched; `MODULE/SERVICE`
    /// is refused too, for the verbs that act on whole modules only.
    pub(crate) fn resolve(&self, names: &[String]) -> Result<Vec<Module>, HalError> {
        let targets = self.targets(names)?;
        if let Some(t) = targets.iter().find(|t| t.service.is_some()) {
            return Err(HalError::Usage(format!(
                "{}: this command acts on whole modules; name the module ({})",
                t.label(),
                t.module.name
            )));
        }
        Ok(targets.into_iter().map(|t| t.module).collect())
    }

    /// Resolves words given on the command line to targets, in order, without
    /// duplicates: a module name, a quoted shell pattern (every module it
    /// matches, by name), or `MODULE/SERVICE` (one service of a stack). A
    /// pattern that matches nothing is "no such module" (exit 4), naming it;
    /// so is a service of a host module. Whether a stack has the service is
    /// for its backend to say: that takes compose or the engine.
    ///
    /// A pattern takes what `--all` takes, narrowed by name: never an
    /// `invalid` directory, which a verb could only fail on (named, one is
    /// reported as before).
    pub(crate) fn targets(&self, words: &[String]) -> Result<Vec<Target>, HalError> {
        self.select(words, false)
    }

    /// As [`Inventory::targets`], but a pattern also takes `invalid`
    /// modules: `status` shows them, as it does with no name at all.
    pub(crate) fn targets_to_show(&self, words: &[String]) -> Result<Vec<Target>, HalError> {
        self.select(words, true)
    }

    fn select(&self, words: &[String], invalid_too: bool) -> Result<Vec<Target>, HalError> {
        let mut out: Vec<Target> = Vec::new();
        let mut add = |t: Target| {
            if !out.contains(&t) {
                out.push(t);
            }
        };
        for word in words {
            let (name, service) = crate::module::target::split(word);
            if is_pattern(name) {
                if service.is_some() {
                    return Err(HalError::Usage(format!(
                        "{word}: a pattern selects whole modules; MODULE/SERVICE takes one module's name"
                    )));
                }
                let hits: Vec<&Module> = self
                    .modules
                    .iter()
                    .filter(|m| crate::module::pattern::matches(name, &m.name))
                    .filter(|m| invalid_too || !matches!(m.kind, Kind::Invalid { .. }))
                    .collect();
                if hits.is_empty() {
                    return Err(HalError::NoMatch {
                        pattern: name.to_string(),
                        root: self.root.display().to_string(),
                    });
                }
                hits.into_iter().for_each(|m| add(Target::whole(m.clone())));
                continue;
            }
            let Some(m) = self.get(name) else {
                if let Some(reason) = crate::module::name::problem(name) {
                    // Quoted as typed: `../x`, not the `..` it was split to.
                    return Err(HalError::InvalidName {
                        name: word.clone(),
                        reason,
                    });
                }
                return Err(HalError::NoSuchModule {
                    name: name.to_string(),
                    root: self.root.display().to_string(),
                    suggestion: crate::module::name::nearest(name, self.names())
                        .map(str::to_string),
                });
            };
            let service = match service {
                None => None,
                Some(s) => {
                    if let Some(reason) = crate::module::name::service_problem(s) {
                        return Err(HalError::InvalidName {
                            name: word.clone(),
                            reason,
                        });
                    }
                    if let Kind::Host { unit, .. } = &m.kind {
                        return Err(HalError::NoServices {
                            module: m.name.clone(),
                            unit: unit.clone(),
                        });
                    }
                    Some(s.to_string())
                }
            };
            add(Target {
                module: m.clone(),
                service,
            });
        }
        Ok(out)
    }
}
