//! The progress area on a terminal: a spinner per running module (and a bar per pulled
//! layer), never more lines than fit on the screen, with a `+N more running` line for the rest.
//!
//! indicatif's `MultiProgress` cannot redraw more lines than the terminal has (it leaves
//! copies behind, indicatif #636), so the area holds at most the terminal's height minus
//! a margin, measured again whenever a line is added. Modules beyond that are counted,
//! not drawn, and take a line as soon as one frees up. Every line is cut to the
//! terminal's width, so none wraps into two.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Lines of the screen the area leaves alone: the finished lines above it and the
/// shell's prompt stay in view.
const MARGIN: usize = 4;
/// The fewest lines an area has, on a terminal too small to say.
const FLOOR: usize = 3;

/// The spinners and bars of one command, on stderr (or nowhere).
pub(crate) struct Area {
    bars: MultiProgress,
    /// Lines the area may hold, including `+N more`; `None`: as many as the terminal
    /// has, minus [`MARGIN`].
    fixed: Option<usize>,
    state: Mutex<AreaState>,
}

#[derive(Default)]
struct AreaState {
    /// Running modules, in the order they first said something.
    running: Vec<Running>,
    /// The `+N more running` line, while some running module has no line.
    more: Option<ProgressBar>,
}

struct Running {
    module: String,
    what: String,
    since: Instant,
    spinner: Option<ProgressBar>,
    layers: Vec<(String, ProgressBar)>,
}

impl Area {
    /// An area drawn on stderr, or a hidden one (nothing is drawn, nothing is kept).
    pub(crate) fn new(drawn: bool) -> Area {
        Area {
            bars: MultiProgress::with_draw_target(if drawn {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            }),
            fixed: None,
            state: Mutex::default(),
        }
    }

    /// An area of at most `lines` lines drawn on `target` (for tests).
    #[cfg(test)]
    fn with_target(target: ProgressDrawTarget, lines: usize) -> Area {
        Area {
            bars: MultiProgress::with_draw_target(target),
            fixed: Some(lines.max(FLOOR)),
            state: Mutex::default(),
        }
    }

    /// Makes the area `lines` high, as a resized terminal would (for tests).
    #[cfg(test)]
    fn resize(&mut self, lines: usize) {
        self.fixed = Some(lines.max(FLOOR));
    }

    /// Runs `f` (which prints whole lines) with the area wiped, then draws it again
    /// below what `f` printed.
    pub(crate) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bars.suspend(f)
    }

    /// How many lines the area may hold now.
    fn capacity(&self) -> usize {
        self.fixed.unwrap_or_else(|| {
            console::Term::stderr()
                .size_checked()
                .map_or(24, |(rows, _)| usize::from(rows))
                .saturating_sub(MARGIN)
                .max(FLOOR)
        })
    }

    /// `module` is now doing `what`.
    pub(crate) fn step(&self, module: &str, what: &str) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let text = format!("{module}: {what}");
        match st.running.iter_mut().find(|r| r.module == module) {
            Some(r) => {
                r.what = what.to_string();
                if let Some(s) = &r.spinner {
                    s.set_message(text);
                }
            }
            None => st.running.push(Running {
                module: module.to_string(),
                what: what.to_string(),
                since: Instant::now(),
                spinner: None,
                layers: Vec::new(),
            }),
        }
        self.fill(&mut st);
    }

    /// A pull moved. A layer gets a line only while its module has one and
    /// there is room; a finished layer's line goes.
    pub(crate) fn layer(&self, module: &str, layer: &str, status: &str, bytes: Option<(u64, u64)>) {
        let Ok(mut guard) = self.state.lock() else {
            return;
        };
        let st = &mut *guard;
        let finished = status.starts_with("pull complete") || status.starts_with("already exists");
        let room = self.room(st);
        let Some(r) = st.running.iter_mut().find(|r| r.module == module) else {
            return;
        };
        let at = r.layers.iter().position(|(l, _)| l == layer);
        if finished {
            if let Some(j) = at {
                let (_, bar) = r.layers.remove(j);
                self.remove(&bar);
                self.fill(st);
            }
            return;
        }
        let bar = match (at, &r.spinner) {
            (Some(j), _) => r.layers[j].1.clone(),
            (None, Some(spinner)) if room => {
                // Under the module's own lines.
                let last = r.layers.last().map_or(spinner, |(_, b)| b);
                let bar = self
                    .bars
                    .insert_after(last, ProgressBar::new(0).with_style(bar_style()));
                r.layers.push((layer.to_string(), bar.clone()));
                bar
            }
            (None, _) => return,
        };
        bar.set_message(format!("{module}: {layer} {status}"));
        if let Some((current, total)) = bytes {
            bar.set_length(total);
            bar.set_position(current);
        }
    }

    /// `module`'s work is over: its lines go, and a module that had none takes the room.
    pub(crate) fn done(&self, module: &str) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if let Some(i) = st.running.iter().position(|r| r.module == module) {
            let r = st.running.remove(i);
            r.spinner.iter().for_each(|s| self.remove(s));
            r.layers.iter().for_each(|(_, b)| self.remove(b));
        }
        self.fill(&mut st);
    }

    /// Lines drawn now, `+N more` included.
    fn shown(st: &AreaState) -> usize {
        st.running
            .iter()
            .map(|r| usize::from(r.spinner.is_some()) + r.layers.len())
            .sum::<usize>()
            + usize::from(st.more.is_some())
    }

    /// Whether one more module line fits, keeping a line for `+N more`.
    fn room(&self, st: &AreaState) -> bool {
        let modules = Self::shown(st) - usize::from(st.more.is_some());
        modules + 1 < self.capacity()
    }

    /// Gives waiting modules a line while there is room, then says how many still wait.
    fn fill(&self, st: &mut AreaState) {
        // A terminal made smaller: the last modules drawn give their lines back.
        let cap = self.capacity();
        while Self::shown(st) - usize::from(st.more.is_some()) >= cap {
            let Some(r) = st.running.iter_mut().rev().find(|r| r.spinner.is_some()) else {
                break;
            };
            r.layers.drain(..).for_each(|(_, b)| self.remove(&b));
            r.spinner.take().iter().for_each(|s| self.remove(s));
        }
        for i in 0..st.running.len() {
            if st.running[i].spinner.is_some() {
                continue;
            }
            if !self.room(st) {
                break;
            }
            let r = &st.running[i];
            let spinner = ProgressBar::new_spinner()
                .with_style(spinner_style())
                .with_elapsed(r.since.elapsed())
                .with_message(format!("{}: {}", r.module, r.what));
            let spinner = self.insert(&st.more, spinner);
            spinner.enable_steady_tick(Duration::from_millis(120));
            st.running[i].spinner = Some(spinner);
        }
        let waiting = st.running.iter().filter(|r| r.spinner.is_none()).count();
        match (&st.more, waiting) {
            (Some(more), 0) => {
                self.remove(more);
                st.more = None;
            }
            (Some(more), n) => more.set_message(format!("+{n} more running")),
            (None, 0) => {}
            (None, n) => {
                let more = ProgressBar::new_spinner()
                    .with_style(more_style())
                    .with_message(format!("+{n} more running"));
                st.more = Some(self.bars.add(more));
            }
        }
    }

    /// Adds `bar` above the `+N more` line (or last).
    fn insert(&self, more: &Option<ProgressBar>, bar: ProgressBar) -> ProgressBar {
        match more {
            Some(m) => self.bars.insert_before(m, bar),
            None => self.bars.add(bar),
        }
    }

    fn remove(&self, bar: &ProgressBar) {
        bar.finish_and_clear();
        self.bars.remove(bar);
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {wide_msg} {elapsed:.dim}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("  {wide_msg} [{bar:20}] {bytes}/{total_bytes}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

fn more_style() -> ProgressStyle {
    ProgressStyle::with_template("  {wide_msg:.dim}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(lines: usize) -> Area {
        Area::with_target(ProgressDrawTarget::hidden(), lines)
    }

    /// The area's lines as they are drawn, top to bottom.
    fn lines(area: &Area) -> Vec<String> {
        let st = area.state.lock().unwrap();
        let mut out = Vec::new();
        for r in &st.running {
            if let Some(s) = &r.spinner {
                out.push(s.message());
                out.extend(r.layers.iter().map(|(_, b)| b.message()));
            }
        }
        out.extend(st.more.iter().map(ProgressBar::message));
        assert_eq!(out.len(), Area::shown(&st));
        out
    }

    #[test]
    fn never_more_lines_than_the_area_holds() {
        let area = area(6);
        for i in 0..30 {
            area.step(&format!("m{i:02}"), "starting");
        }
        let l = lines(&area);
        assert_eq!(l.len(), 6, "{l:#?}");
        assert_eq!(l[0], "m00: starting");
        assert_eq!(l[5], "+25 more running");

        // A finished module's line goes to the next one waiting, which shows
        // what it is doing now.
        area.step("m05", "waiting (service app is starting)");
        area.done("m01");
        let l = lines(&area);
        assert_eq!(l.len(), 6, "{l:#?}");
        assert!(
            l.contains(&"m05: waiting (service app is starting)".to_string()),
            "{l:#?}"
        );
        assert!(!l.iter().any(|x| x.starts_with("m01")), "{l:#?}");
        assert_eq!(l[5], "+24 more running");

        // A full area has no room for a layer bar.
        area.layer("m00", "abc123", "downloading", Some((5, 10)));
        assert_eq!(lines(&area).len(), 6);

        for i in (0..30).filter(|i| *i != 1) {
            area.done(&format!("m{i:02}"));
        }
        assert!(lines(&area).is_empty(), "{:#?}", lines(&area));
    }

    #[test]
    fn pulled_layers_show_under_their_module_and_go_when_complete() {
        let area = area(10);
        area.step("web", "pulling");
        area.step("db", "pulling");
        area.layer("web", "abc123", "downloading", Some((5, 10)));
        let l = lines(&area);
        assert_eq!(
            l,
            ["web: pulling", "web: abc123 downloading", "db: pulling"]
        );
        area.layer("web", "abc123", "pull complete", None);
        assert_eq!(lines(&area), ["web: pulling", "db: pulling"]);
    }

    #[test]
    fn a_smaller_terminal_takes_lines_back() {
        let mut area = area(10);
        for i in 0..8 {
            area.step(&format!("m{i}"), "starting");
        }
        assert_eq!(lines(&area).len(), 8);
        area.resize(5);
        area.step("m0", "waiting");
        let l = lines(&area);
        assert_eq!(l.len(), 5, "{l:#?}");
        assert_eq!(l[0], "m0: waiting");
        assert_eq!(l[4], "+4 more running");
    }

    #[test]
    fn the_area_is_never_smaller_than_its_floor() {
        let area = area(0);
        for i in 0..5 {
            area.step(&format!("m{i}"), "starting");
        }
        assert_eq!(lines(&area).len(), FLOOR);
    }
}
