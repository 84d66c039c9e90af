//! Output decisions made once: JSON or human, colour, progress, and whether a person can be asked.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::error::{Exit, HalError};
use crate::module::progress::Progress;
use crate::module::status::Detail;

/// What the person asked for with `--color`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// The output flags, as given on the command line.
#[derive(Copy, Clone, Debug)]
pub struct Asked {
    pub json: bool,
    pub quiet: bool,
    pub yes: bool,
    pub color: ColorChoice,
}

/// Whom the output is for: decided once, from `--json`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// Tables and lines for a person.
    Human,
    /// One JSON document on stdout (or one object per line for streams), nothing else there.
    Json,
}

/// The one printer: every command's output goes through it.
#[derive(Clone)]
pub struct Ui {
    format: Format,
    pub quiet: bool,
    /// Colour on stdout.
    pub color: bool,
    /// Colour on stderr.
    pub color_err: bool,
    /// Spinners and bars on stderr.
    pub progress: bool,
    /// stdin and stderr are terminals, so a person can answer a question.
    pub interactive: bool,
    pub yes: bool,
    bars: MultiProgress,
    /// What is drawn for each module now: its spinner, and its pull's layer bars.
    drawn: Arc<Mutex<HashMap<String, Drawn>>>,
}

#[derive(Default)]
struct Drawn {
    spinner: Option<ProgressBar>,
    layers: HashMap<String, ProgressBar>,
}

impl Ui {
    pub fn new(g: Asked) -> Ui {
        let out_tty = std::io::stdout().is_terminal();
        let err_tty = std::io::stderr().is_terminal();
        let in_tty = std::io::stdin().is_terminal();
        let decide = |tty: bool| match g.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && !no_color_env(),
        };
        let progress = err_tty && !g.json && !g.quiet && !dumb_term();
        Ui {
            format: if g.json { Format::Json } else { Format::Human },
            quiet: g.quiet,
            color: !g.json && decide(out_tty),
            color_err: decide(err_tty),
            progress,
            interactive: in_tty && err_tty,
            yes: g.yes,
            bars: MultiProgress::with_draw_target(if progress {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            }),
            drawn: Arc::default(),
        }
    }

    /// How much a status must read: scripts get exact start times and restart
    /// counts; the table only needs what the list call already says about
    /// settled containers.
    pub fn status_detail(&self) -> Detail {
        if self.format == Format::Json {
            Detail::Full
        } else {
            Detail::Settled
        }
    }

    /// Whom the output is for.
    pub fn format(&self) -> Format {
        self.format
    }

    /// A command's result: the JSON document for scripts, or the text `human`
    /// makes for people (on stdout, as is).
    pub fn show(&self, json: impl FnOnce() -> String, human: impl FnOnce() -> String) {
        match self.format {
            Format::Json => println!("{}", json()),
            Format::Human => print!("{}", human()),
        }
    }

    /// `{"schema": 1, "modules": [...]}` for scripts, or the text `human` makes.
    pub fn document<T: Serialize>(&self, modules: &[T], human: impl FnOnce() -> String) {
        self.show(|| crate::output::render::modules_json(modules), human);
    }

    /// There is nothing to show: an empty document for scripts, `why` on
    /// stderr for people (unless quiet).
    pub fn nothing(&self, why: &str) {
        match self.format {
            Format::Json => println!("{}", crate::output::render::modules_json::<()>(&[])),
            Format::Human if !self.quiet => eprintln!("hal: {why}"),
            Format::Human => {}
        }
    }

    /// A line for people on stdout (not with `--json` or `-q`).
    pub fn say(&self, text: &str) {
        if self.format == Format::Human && !self.quiet {
            println!("{text}");
        }
    }

    /// A line for people on stderr (not with `--json` or `-q`).
    pub fn note(&self, text: &str) {
        if self.format == Format::Human && !self.quiet {
            eprintln!("{text}");
        }
    }

    /// Something that went wrong, on stderr for everyone: `hal: {text}`.
    pub fn problem(&self, text: &str) {
        eprintln!("hal: {text}");
    }

    /// A module's error for people (`hal: what: why`); under `--json` the
    /// document carries it instead.
    pub fn fail(&self, e: &anyhow::Error) {
        if self.format == Format::Human {
            crate::error::report(e);
        }
    }

    /// The error that ended the command: `hal: what: why` on stderr for
    /// everyone and, under `--json`, the error document on stdout, so that a
    /// script's `jq` gets its input. Returns the exit code it maps to.
    pub fn error(&self, e: &anyhow::Error) -> Exit {
        crate::error::report(e);
        let exit = crate::error::exit_of(e);
        if self.format == Format::Json {
            error_document(exit.code(), &crate::error::OneLine(e).to_string());
        }
        exit
    }

    /// A spinner on stderr, or a hidden one when progress is off.
    pub fn spinner(&self, message: String) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let bar = self.bars.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed:.dim}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    }

    /// A byte bar for pulls, or a hidden one.
    pub fn bar(&self, len: u64, message: String) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let bar = self.bars.add(ProgressBar::new(len));
        bar.set_style(
            ProgressStyle::with_template("{msg:30} [{bar:30}] {bytes}/{total_bytes}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_message(message);
        bar
    }

    /// Prints a warning on stderr without disturbing progress bars.
    pub fn warn(&self, text: &str) {
        let line = if self.color_err {
            format!("\x1b[33mhal: warning:\x1b[0m {text}")
        } else {
            format!("hal: warning: {text}")
        };
        let _ = self.bars.println(&line).or_else(|_| {
            eprintln!("{line}");
            Ok::<(), std::io::Error>(())
        });
        if !self.progress {
            // MultiProgress::println is silent when hidden.
            eprintln!("{line}");
        }
    }

    /// Asks once; `--yes` answers for the person. With no terminal, the
    /// question cannot be asked, and that is a usage error (exit 2).
    pub fn confirm(&self, question: &str) -> Result<bool, HalError> {
        if self.yes {
            return Ok(true);
        }
        if !self.interactive {
            return Err(HalError::Usage(format!(
                "{question}: confirmation needed, but no terminal is attached: pass --yes (or set HAL_YES=1)"
            )));
        }
        dialoguer::Confirm::new()
            .with_prompt(question)
            .default(false)
            .interact()
            .map_err(|e| HalError::Usage(format!("{question}: {e}")))
    }
}

impl Progress for Ui {
    fn step(&self, module: &str, what: &str) {
        if !self.progress {
            return;
        }
        let Ok(mut drawn) = self.drawn.lock() else {
            return;
        };
        let d = drawn.entry(module.to_string()).or_default();
        match &d.spinner {
            Some(s) => s.set_message(format!("{module}: {what}")),
            None => d.spinner = Some(self.spinner(format!("{module}: {what}"))),
        }
    }

    fn layer(&self, module: &str, layer: &str, status: &str, bytes: Option<(u64, u64)>) {
        if !self.progress {
            return;
        }
        let Ok(mut drawn) = self.drawn.lock() else {
            return;
        };
        let d = drawn.entry(module.to_string()).or_default();
        let bar = d
            .layers
            .entry(layer.to_string())
            .or_insert_with(|| self.bar(0, format!("{module}: {layer}")));
        bar.set_message(format!("{module}: {layer} {status}"));
        if let Some((current, total)) = bytes {
            bar.set_length(total);
            bar.set_position(current);
        }
        if status.starts_with("pull complete") || status.starts_with("already exists") {
            bar.finish_and_clear();
        }
    }

    fn done(&self, module: &str) {
        let Ok(mut drawn) = self.drawn.lock() else {
            return;
        };
        if let Some(d) = drawn.remove(module) {
            d.spinner.iter().for_each(ProgressBar::finish_and_clear);
            d.layers.values().for_each(ProgressBar::finish_and_clear);
        }
    }
}

/// Prints the error document on stdout: for [`Ui::error`], and for `main`'s
/// usage errors, which happen before there is a printer.
pub fn error_document(exit_code: u8, message: &str) {
    println!("{}", crate::output::render::error_json(exit_code, message));
}

fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) || dumb_term()
}

fn dumb_term() -> bool {
    std::env::var("TERM").is_ok_and(|t| t == "dumb")
}

/// ANSI colour for text, when `on`.
pub fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}
