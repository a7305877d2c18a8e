//! A panic is a bug in TSL, never the user's fault, and never silent. [`catch`] runs code and
//! turns a panic inside it into a [`Panic`]: what TSL was doing when it panicked (the panic
//! message and the place in TSL's source), which becomes an `internal-error` diagnostic with
//! the request to report it.
//!
//! The panic hook this installs records the panic instead of printing Rust's message when the
//! panicking thread is inside [`catch`] (or is a rayon worker, whose panic resumes in the
//! thread that waits for it); any other panic is printed as before, so a failing test still
//! shows its assertion.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::{Mutex, Once, OnceLock};

use super::{Code, Diagnostic};
use crate::source::Span;

/// What a caught panic said, and where in TSL's source it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Panic {
    pub message: String,
    /// `src/eval/expr.rs:12:5`, when the hook saw the panic.
    pub location: Option<String>,
}

impl Panic {
    /// The `internal-error` diagnostic for this panic, at `span` (what was being evaluated)
    /// when that is known.
    pub fn diagnostic(&self, span: Option<Span>) -> Diagnostic {
        let mut diagnostic = match span {
            Some(span) => Diagnostic::internal(span, &self.message),
            None => Diagnostic::without_span(
                Code::InternalError,
                format!("internal error: {}", self.message),
            )
            .with_help(super::REPORT_HELP),
        };
        if let Some(location) = &self.location {
            diagnostic.notes.push(format!("TSL panicked at {location}"));
        }
        diagnostic
    }
}

/// Panics on purpose at `point` when the environment variable `TSL_INJECT_PANIC` names it,
/// so that tests can check that a panic anywhere becomes an internal error. The points are
/// `statement` (before each statement runs), `trace` (when a trace starts), `kernel` (inside
/// a kernel, on a rayon worker thread) and `command` (a REPL command).
pub fn inject(point: &str) {
    static WANTED: OnceLock<Option<String>> = OnceLock::new();
    let wanted = WANTED.get_or_init(|| std::env::var("TSL_INJECT_PANIC").ok());
    if wanted.as_deref() != Some(point) {
        return;
    }
    let message = format!("injected panic at {point} (TSL_INJECT_PANIC)");
    if point == "kernel" {
        let text = message.clone();
        rayon::scope(|scope| scope.spawn(move |_| panic!("{text}")));
    }
    panic!("{message}");
}

/// The last panic the hook recorded on a rayon worker, for the thread that waits for it
/// (such panics are rare: one slot for the whole process).
static FROM_WORKER: Mutex<Option<Panic>> = Mutex::new(None);

thread_local! {
    /// How many [`catch`] calls this thread is inside.
    static CATCHING: Cell<usize> = const { Cell::new(0) };
    /// The last panic the hook recorded on this thread.
    static RECORDED: RefCell<Option<Panic>> = const { RefCell::new(None) };
}

/// Runs `body`; a panic inside it comes back as `Err`.
pub fn catch<T>(body: impl FnOnce() -> T) -> Result<T, Panic> {
    install_hook();
    CATCHING.with(|depth| depth.set(depth.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(body));
    CATCHING.with(|depth| depth.set(depth.get() - 1));
    result.map_err(|payload| {
        let recorded = RECORDED.with(RefCell::take).or_else(|| {
            FROM_WORKER
                .lock()
                .map(|mut slot| slot.take())
                .unwrap_or_default()
        });
        recorded.unwrap_or_else(|| Panic {
            message: payload_text(payload.as_ref()),
            location: None,
        })
    })
}

fn install_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) > 0 {
                let panic = described(info);
                RECORDED.with(|slot| slot.replace(Some(panic)));
            } else if rayon::current_thread_index().is_some() {
                if let Ok(mut slot) = FROM_WORKER.lock() {
                    *slot = Some(described(info));
                }
            } else {
                previous(info);
            }
        }));
    });
}

fn described(info: &PanicHookInfo<'_>) -> Panic {
    Panic {
        message: payload_text(info.payload()),
        location: info
            .location()
            .map(|at| format!("{}:{}:{}", at.file(), at.line(), at.column())),
    }
}

/// The text a panic was raised with (`panic!("…")`, `expect("…")`, an assertion).
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_says_what_and_where() {
        let caught = catch(|| -> u32 { panic!("the trace is gone") });
        let panic = caught.expect_err("the body panics");
        assert_eq!(panic.message, "the trace is gone");
        let location = panic.location.clone().expect("the hook saw the panic");
        assert!(location.starts_with("src/diag/panic.rs:"), "{location}");
        let diagnostic = panic.diagnostic(None);
        assert_eq!(diagnostic.code, Code::InternalError);
        assert_eq!(diagnostic.message, "internal error: the trace is gone");
        assert!(diagnostic.help.is_some_and(|help| help.contains("report")));
        assert!(diagnostic.notes[0].starts_with("TSL panicked at src/diag/panic.rs:"));
    }

    #[test]
    fn a_panic_on_a_rayon_worker_is_caught_by_the_waiting_thread() {
        use rayon::prelude::*;
        let caught = catch(|| {
            (0..64).into_par_iter().for_each(|index| {
                assert!(index != 40, "element {index} is bad");
            });
        });
        let panic = caught.expect_err("a worker panics");
        assert_eq!(panic.message, "element 40 is bad");
    }

    #[test]
    fn no_panic_passes_the_value_through() {
        assert_eq!(catch(|| 7), Ok(7));
    }
}
