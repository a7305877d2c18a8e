//! Stopping a running operation: Ctrl-C in the REPL sets the session's interrupt flag, and
//! compiled graphs and long kernels check it, not only the interpreter's own loops.
//!
//! The interpreter hands its flag to this thread with [`watch`] before it runs operations.
//! The executor checks it before every node; kernels that work in chunks take the flag with
//! [`Interrupt::current`] on the calling thread (rayon's workers do not see the thread's
//! flag) and check it before each chunk, failing with [`KernelError::Interrupted`].

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::KernelError;

thread_local! {
    static WATCHED: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Operations on this thread stop once `flag` is set (until another flag is watched). Cheap
/// when `flag` is already the watched one, as it is for every operation of a session.
pub fn watch(flag: &Arc<AtomicBool>) {
    WATCHED.with(|watched| {
        let current = watched
            .borrow()
            .as_ref()
            .is_some_and(|seen| Arc::ptr_eq(seen, flag));
        if !current {
            watched.replace(Some(Arc::clone(flag)));
        }
    });
}

/// Whether the flag this thread watches is set (cheaper than [`Interrupt::current`]).
pub fn requested() -> bool {
    WATCHED.with(|watched| {
        watched
            .borrow()
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    })
}

/// The flag the current thread's operations watch, to be checked from any thread.
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Option<Arc<AtomicBool>>);

impl Interrupt {
    /// The flag [`watch`] set for this thread (none: never interrupted).
    pub fn current() -> Interrupt {
        Interrupt(WATCHED.with(|watched| watched.borrow().clone()))
    }

    pub fn requested(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    /// `Err(Interrupted)` once an interrupt was requested.
    pub fn check(&self) -> Result<(), KernelError> {
        if self.requested() {
            Err(KernelError::Interrupted)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watched_flag_is_seen_from_any_thread() {
        assert!(!Interrupt::current().requested());
        let flag = Arc::new(AtomicBool::new(false));
        watch(&flag);
        let interrupt = Interrupt::current();
        assert_eq!(interrupt.check(), Ok(()));
        flag.store(true, Ordering::Relaxed);
        assert_eq!(interrupt.check(), Err(KernelError::Interrupted));
        // Another thread (a rayon worker) sees it through the handle taken here.
        let seen = std::thread::spawn(move || interrupt.requested())
            .join()
            .expect("a thread");
        assert!(seen);
        // Another session's flag replaces it.
        watch(&Arc::new(AtomicBool::new(false)));
        assert!(!Interrupt::current().requested());
    }
}
