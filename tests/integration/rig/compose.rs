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
pub(crate) struct Stack {
    /// Lines above `services:` (`name: …`, `include: …`).
    top: Vec<String>,
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
    /// `(service, condition, restart)` of each `depends_on` entry.
    deps: Vec<(String, &'static str, Option<bool>)>,
    env_file: Option<String>,
    volumes: Vec<String>,
    environment: Vec<(String, String)>,
    profiles: Vec<String>,
    replicas: Option<u32>,
    network_mode: Option<String>,
    /// Lines written as they are (e.g. a key compose refuses).
    lines: Vec<String>,
}

/// An empty stack: add services with [`Stack::service`].
pub(crate) fn stack() -> Stack {
    Stack::default()
}

impl Stack {
    /// Adds service `name`, idle (`sleep 100000`) in the fixture image; the
    /// calls that follow shape this service.
    pub(crate) fn service(mut self, name: &str) -> Stack {
        self.services.push(Service {
            name: name.to_string(),
            image: FIXTURE.to_string(),
            script: None,
            restart: None,
            health: None,
            deps: Vec::new(),
            env_file: None,
            volumes: Vec::new(),
            environment: Vec::new(),
            profiles: Vec::new(),
            replicas: None,
            network_mode: None,
            lines: Vec::new(),
        });
        self
    }

    fn last(&mut self) -> &mut Service {
        self.services
            .last_mut()
            .expect("call .service(NAME) before shaping a service")
    }

    /// The shell script the service runs (every `$` is the shell's).
    pub(crate) fn runs(self, script: &str) -> Stack {
        // `$$` is compose's escape for a literal `$`.
        self.runs_as_written(&script.replace('$', "$$"))
    }

    /// The script as compose reads it: `${VAR}` is compose's interpolation
    /// (from `.env`), `$$` the shell's `$`.
    pub(crate) fn runs_as_written(mut self, script: &str) -> Stack {
        self.last().script = Some(script.to_string());
        self
    }

    /// `restart: POLICY`: `no`, `always`, `unless-stopped`, `on-failure`.
    pub(crate) fn restart(mut self, policy: &str) -> Stack {
        self.last().restart = Some(policy.to_string());
        self
    }

    /// `restart: unless-stopped`: a service Docker brings back until someone stops it.
    pub(crate) fn keeps_running(self) -> Stack {
        self.restart("unless-stopped")
    }

    /// Runs for `secs` seconds, then turns healthy (checked every second), and stays up.
    pub(crate) fn healthy_after(self, secs: u32) -> Stack {
        let script = if secs == 0 {
            format!("touch /tmp/ready; {IDLE}")
        } else {
            format!("sleep {secs}; touch /tmp/ready; {IDLE}")
        };
        self.runs(&script).healthy_while("/tmp/ready")
    }

    /// A healthcheck: healthy while `file` exists (checked every second, 3 tries).
    pub(crate) fn healthy_while(self, file: &str) -> Stack {
        self.healthcheck(file, "interval: 1s\ntimeout: 2s\nretries: 3")
    }

    /// A healthcheck on `file` with its own `healthcheck:` lines (e.g. `retries: 1`).
    pub(crate) fn healthcheck(mut self, file: &str, lines: &str) -> Stack {
        self.last().health = Some((file.to_string(), lines.to_string()));
        self
    }

    /// Starts only once `other` is healthy (`condition: service_healthy`).
    pub(crate) fn depends_on_healthy(mut self, other: &str) -> Stack {
        self.last()
            .deps
            .push((other.to_string(), "service_healthy", None));
        self
    }

    /// Starts after `other` (`condition: service_started`), and with
    /// `restart: RESTART`: whether compose restarts it with `other`.
    pub(crate) fn depends_on_started(mut self, other: &str, restart: bool) -> Stack {
        self.last()
            .deps
            .push((other.to_string(), "service_started", Some(restart)));
        self
    }

    /// An `environment:` entry, its value quoted.
    pub(crate) fn environment(mut self, key: &str, value: &str) -> Stack {
        self.last()
            .environment
            .push((key.to_string(), value.to_string()));
        self
    }

    /// Started only with this compose profile (`profiles: [NAME]`).
    pub(crate) fn profile(mut self, name: &str) -> Stack {
        self.last().profiles.push(name.to_string());
        self
    }

    /// `deploy: replicas: N`.
    pub(crate) fn replicas(mut self, n: u32) -> Stack {
        self.last().replicas = Some(n);
        self
    }

    /// `network_mode: MODE`, e.g. `none`.
    pub(crate) fn network_mode(mut self, mode: &str) -> Stack {
        self.last().network_mode = Some(mode.to_string());
        self
    }

    /// A line under the service as written, e.g. a key compose refuses.
    pub(crate) fn line(mut self, yaml: &str) -> Stack {
        self.last().lines.push(yaml.to_string());
        self
    }

    /// A top-level line above `services:`, e.g. `name: other`.
    pub(crate) fn top(mut self, yaml: &str) -> Stack {
        self.top.push(yaml.to_string());
        self
    }

    /// Runs this image instead of the fixture.
    pub(crate) fn image(mut self, image: &str) -> Stack {
        self.last().image = image.to_string();
        self
    }

    pub(crate) fn env_file(mut self, file: &str) -> Stack {
        self.last().env_file = Some(file.to_string());
        self
    }

    /// A `volumes:` entry, e.g. `./:/m:ro`.
    pub(crate) fn volume(mut self, spec: &str) -> Stack {
        self.last().volumes.push(spec.to_string());
        self
    }
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.top {
            writeln!(f, "{line}")?;
        }
        writeln!(f, "services:")?;
        for s in &self.services {
            s.fmt(f)?;
        }
        Ok(())
    }
}

impl Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let script = self.script.as_deref().unwrap_or(IDLE);
        writeln!(f, "  {}:", self.name)?;
        writeln!(f, "    image: {}", self.image)?;
        writeln!(f, "    command: [\"sh\", \"-c\", {script:?}]")?;
        writeln!(f, "    stop_signal: SIGKILL")?;
        if let Some(policy) = &self.restart {
            let policy = if policy == "no" { "\"no\"" } else { policy };
            writeln!(f, "    restart: {policy}")?;
        }
        if let Some((file, lines)) = &self.health {
            writeln!(f, "    healthcheck:")?;
            writeln!(f, "      test: [\"CMD\", \"test\", \"-f\", {file:?}]")?;
            for line in lines.lines() {
                writeln!(f, "      {line}")?;
            }
        }
        if !self.deps.is_empty() {
            writeln!(f, "    depends_on:")?;
            for (d, condition, restart) in &self.deps {
                writeln!(f, "      {d}:\n        condition: {condition}")?;
                if let Some(restart) = restart {
                    writeln!(f, "        restart: {restart}")?;
                }
            }
        }
        if let Some(file) = &self.env_file {
            writeln!(f, "    env_file: {file}")?;
        }
        list(f, "volumes", &self.volumes)?;
        if !self.environment.is_empty() {
            writeln!(f, "    environment:")?;
            for (k, v) in &self.environment {
                writeln!(f, "      {k}: {v:?}")?;
            }
        }
        if !self.profiles.is_empty() {
            writeln!(f, "    profiles: [{}]", self.profiles.join(", "))?;
        }
        if let Some(n) = self.replicas {
            writeln!(f, "    deploy:\n      replicas: {n}")?;
        }
        if let Some(mode) = &self.network_mode {
            writeln!(f, "    network_mode: {mode}")?;
        }
        for line in &self.lines {
            writeln!(f, "    {line}")?;
        }
        Ok(())
    }
}

/// `    KEY:` and its `      - ITEM` lines, if there are items.
fn list(f: &mut fmt::Formatter<'_>, key: &str, items: &[String]) -> fmt::Result {
    if !items.is_empty() {
        writeln!(f, "    {key}:")?;
        for i in items {
            writeln!(f, "      - {i}")?;
        }
    }
    Ok(())
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
