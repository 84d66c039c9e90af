//! compose.yaml files that read like what they describe:
//!
//! ```text
//! stack().service("db").healthy_after(2)
//!        .service("api").healthy_after(0).depends_on_healthy("db")
//! ```
//!
//! Every service runs a shell script in the fixture image and dies at once on
//! stop (`SIGKILL`), so tests do not wait out compose's grace period.

use std::fmt;

use super::FIXTURE;

/// The script a service runs unless told otherwise.
const IDLE: &str = "sleep 100000";

/// A compose project under construction; `Display` gives its compose.yaml.
#[derive(Clone, Debug, Default)]
pub struct Stack {
    services: Vec<Service>,
}

#[derive(Clone, Debug)]
struct Service {
    name: String,
    image: String,
    /// The command as compose reads it (`$$` is the shell's `$`).
    script: Option<String>,
    restart: Option<String>,
    /// The file whose presence makes the service healthy, with `healthcheck:` lines of its own.
    health: Option<(String, String)>,
    healthy_deps: Vec<String>,
    env_file: Option<String>,
    volumes: Vec<String>,
}

/// An empty stack: add services with [`Stack::service`].
pub fn stack() -> Stack {
    Stack::default()
}

impl Stack {
    /// Adds service `name`, idle (`sleep 100000`) in the fixture image; the
    /// calls that follow shape this service.
    pub fn service(mut self, name: &str) -> Stack {
        self.services.push(Service {
            name: name.to_string(),
            image: FIXTURE.to_string(),
            script: None,
            restart: None,
            health: None,
            healthy_deps: Vec::new(),
            env_file: None,
            volumes: Vec::new(),
        });
        self
    }

    fn last(&mut self) -> &mut Service {
        self.services
            .last_mut()
            .expect("call .service(NAME) before shaping a service")
    }

    /// The shell script the service runs (every `$` is the shell's).
    pub fn runs(self, script: &str) -> Stack {
        // `$$` is compose's escape for a literal `$`.
        self.runs_as_written(&script.replace('$', "$$"))
    }

    /// The script as compose reads it: `${VAR}` is compose's interpolation
    /// (from `.env`), `$$` the shell's `$`.
    pub fn runs_as_written(mut self, script: &str) -> Stack {
        self.last().script = Some(script.to_string());
        self
    }

    /// `restart: POLICY`: `no`, `always`, `unless-stopped`, `on-failure`.
    pub fn restart(mut self, policy: &str) -> Stack {
        self.last().restart = Some(policy.to_string());
        self
    }

    /// `restart: unless-stopped`: a service Docker brings back until someone stops it.
    pub fn keeps_running(self) -> Stack {
        self.restart("unless-stopped")
    }

    /// Runs for `secs` seconds, then turns healthy (checked every second), and stays up.
    pub fn healthy_after(self, secs: u32) -> Stack {
        let script = if secs == 0 {
            format!("touch /tmp/ready; {IDLE}")
        } else {
            format!("sleep {secs}; touch /tmp/ready; {IDLE}")
        };
        self.runs(&script).healthy_while("/tmp/ready")
    }

    /// A healthcheck: healthy while `file` exists (checked every second, 3 tries).
    pub fn healthy_while(self, file: &str) -> Stack {
        self.healthcheck(file, "interval: 1s\ntimeout: 2s\nretries: 3")
    }

    /// A healthcheck on `file` with its own `healthcheck:` lines (e.g. `retries: 1`).
    pub fn healthcheck(mut self, file: &str, lines: &str) -> Stack {
        self.last().health = Some((file.to_string(), lines.to_string()));
        self
    }

    /// Starts only once `other` is healthy (`condition: service_healthy`).
    pub fn depends_on_healthy(mut self, other: &str) -> Stack {
        self.last().healthy_deps.push(other.to_string());
        self
    }

    /// Runs this image instead of the fixture.
    pub fn image(mut self, image: &str) -> Stack {
        self.last().image = image.to_string();
        self
    }

    pub fn env_file(mut self, file: &str) -> Stack {
        self.last().env_file = Some(file.to_string());
        self
    }

    /// A `volumes:` entry, e.g. `./:/m:ro`.
    pub fn volume(mut self, spec: &str) -> Stack {
        self.last().volumes.push(spec.to_string());
        self
    }
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "services:")?;
        for s in &self.services {
            let script = s.script.as_deref().unwrap_or(IDLE);
            writeln!(f, "  {}:", s.name)?;
            writeln!(f, "    image: {}", s.image)?;
            writeln!(f, "    command: [\"sh\", \"-c\", {script:?}]")?;
            writeln!(f, "    stop_signal: SIGKILL")?;
            if let Some(policy) = &s.restart {
                let policy = if policy == "no" { "\"no\"" } else { policy };
                writeln!(f, "    restart: {policy}")?;
            }
            if let Some((file, lines)) = &s.health {
                writeln!(f, "    healthcheck:")?;
                writeln!(f, "      test: [\"CMD\", \"test\", \"-f\", {file:?}]")?;
                for line in lines.lines() {
                    writeln!(f, "      {line}")?;
                }
            }
            if !s.healthy_deps.is_empty() {
                writeln!(f, "    depends_on:")?;
                for d in &s.healthy_deps {
                    writeln!(f, "      {d}:\n        condition: service_healthy")?;
                }
            }
            if let Some(file) = &s.env_file {
                writeln!(f, "    env_file: {file}")?;
            }
            if !s.volumes.is_empty() {
                writeln!(f, "    volumes:")?;
                for v in &s.volumes {
                    writeln!(f, "      - {v}")?;
                }
            }
        }
        Ok(())
    }
}

/// One compose service running `script` in the fixture image (`$` is the
/// shell's), with `extra` YAML lines under it: for tests that write compose
/// text by hand rather than through [`stack`].
pub fn svc(name: &str, script: &str, extra: &str) -> String {
    let script = script.replace('$', "$$");
    format!(
        "  {name}:\n    image: {}\n    command: [\"sh\", \"-c\", {script:?}]\n    stop_signal: SIGKILL\n{extra}",
        crate::rig::FIXTURE
    )
}

/// A compose file of the given [`svc`]s.
pub fn compose(services: &[String]) -> String {
    format!("services:\n{}", services.join(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_reads_as_compose_yaml() {
        let yaml = stack()
            .service("db")
            .healthy_after(2)
            .keeps_running()
            .service("api")
            .runs("echo $HOSTNAME")
            .restart("no")
            .depends_on_healthy("db")
            .to_string();
        assert_eq!(
            yaml,
            format!(
                "services:
  db:
    image: {FIXTURE}
    command: [\"sh\", \"-c\", \"sleep 2; touch /tmp/ready; sleep 100000\"]
    stop_signal: SIGKILL
    restart: unless-stopped
    healthcheck:
      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]
      interval: 1s
      timeout: 2s
      retries: 3
  api:
    image: {FIXTURE}
    command: [\"sh\", \"-c\", \"echo $$HOSTNAME\"]
    stop_signal: SIGKILL
    restart: \"no\"
    depends_on:
      db:
        condition: service_healthy
"
            )
        );
    }
}
