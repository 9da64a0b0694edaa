//! A panic of one run becomes a failure of that run, not of the command
//! that runs many.
//!
//! A panic is one of ckptsim's own assertions failing: a bug of the
//! simulator, never a finding about a checkpoint algorithm (those are
//! `Violation`s in the verdict). `sweep`, `shrink`, `compare` and `mutants`
//! run each seed through [`catch`], which turns a panic into a [`Panicked`]
//! value (message and location) for that seed and lets the other seeds
//! carry on. While a [`Capture`] guard is alive, the panic hook records the
//! message and location of a panic raised inside [`catch`] on the same
//! thread instead of printing it (a raw panic message would land in the
//! middle of progress output); a panic anywhere else goes to the hook that
//! was installed before, unchanged. The last guard dropped puts that hook
//! back.
//!
//! This module never decides a verdict and never reads the simulation: it
//! only reports that a run did not return. What it records depends only on
//! the panic (the message and the source location), never on the thread
//! that ran the seed.

use serde::{Deserialize, Serialize};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::{Arc, Mutex, MutexGuard};

/// A run that panicked instead of returning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Panicked {
    /// The panic message.
    pub message: String,
    /// Where it was raised: `file:line:column` in ckptsim's source.
    pub location: String,
}

/// On one line (an `assert_eq!` message spans several): the message's
/// lines joined by `; `, then the location.
impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines: Vec<&str> = self
            .message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        f.write_str(&lines.join("; "))?;
        if !self.location.is_empty() {
            write!(f, " (at {})", self.location)?;
        }
        Ok(())
    }
}

/// The name a panicking run fails under, beside the checks' names.
pub const PANIC: &str = "panic";

fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a text message".to_string()
    }
}

impl Panicked {
    fn from_hook(info: &PanicHookInfo<'_>) -> Panicked {
        Panicked {
            message: message(info.payload()),
            location: info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default(),
        }
    }
}

type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Send + Sync + 'static>;

/// The hook in place before the first live guard, shared with ours so that
/// it still sees every panic raised outside [`catch`].
struct Installed {
    guards: usize,
    previous: Option<Arc<Hook>>,
}

static INSTALLED: Mutex<Installed> = Mutex::new(Installed {
    guards: 0,
    previous: None,
});

thread_local! {
    /// How many [`catch`] calls are running on this thread.
    static CATCHING: Cell<u32> = const { Cell::new(0) };
    /// What the hook recorded of the last panic inside [`catch`].
    static CAUGHT: RefCell<Option<Panicked>> = const { RefCell::new(None) };
}

fn installed() -> MutexGuard<'static, Installed> {
    // The lock is never held while running anything that can panic.
    INSTALLED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps the capturing panic hook installed while alive. Guards nest and
/// may live on several threads at once; the hook is installed by the first
/// and the previous one restored by the last.
pub struct Capture {
    _private: (),
}

impl Capture {
    pub fn install() -> Capture {
        let mut s = installed();
        if s.guards == 0 {
            let previous = Arc::new(panic::take_hook());
            let chained = previous.clone();
            panic::set_hook(Box::new(move |info| {
                if CATCHING.with(Cell::get) > 0 {
                    CAUGHT.with(|c| *c.borrow_mut() = Some(Panicked::from_hook(info)));
                } else {
                    chained(info);
                }
            }));
            s.previous = Some(previous);
        }
        s.guards += 1;
        Capture { _private: () }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let mut s = installed();
        s.guards -= 1;
        if s.guards > 0 {
            return;
        }
        let Some(previous) = s.previous.take() else {
            return;
        };
        // Dropping our hook drops its share of the previous one, which can
        // then go back exactly as it was (no wrapper around a wrapper).
        drop(panic::take_hook());
        match Arc::try_unwrap(previous) {
            Ok(hook) => panic::set_hook(hook),
            Err(shared) => panic::set_hook(Box::new(move |info| shared(info))),
        }
    }
}

/// Runs `f` (one seed's run); a panic inside it is returned as
/// [`Panicked`] instead of unwinding further, and is not printed.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    let _hook = Capture::install();
    CATCHING.with(|c| c.set(c.get() + 1));
    CAUGHT.with(|c| c.borrow_mut().take());
    // The closure's state is not used after a panic: the run is dropped.
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(c.get() - 1));
    result.map_err(|payload| {
        CAUGHT
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| Panicked {
                message: message(&*payload),
                location: String::new(),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_returned_with_its_message_and_location() {
        let line = line!() + 1;
        let p = catch(|| -> u32 { panic!("broken assumption {}", 7) }).unwrap_err();
        assert_eq!(p.message, "broken assumption 7");
        assert!(
            p.location.starts_with(&format!("sim/panics.rs:{line}:")),
            "{}",
            p.location
        );
        assert_eq!(catch(|| 3), Ok(3));
        let two_lines = catch(|| assert_eq!(1 + 1, 3, "arithmetic")).unwrap_err();
        assert!(two_lines.message.contains('\n'));
        assert!(
            two_lines
                .to_string()
                .starts_with("assertion `left == right` failed: arithmetic; left: 2; right: 3 (at sim/panics.rs:"),
            "{two_lines}"
        );
        let nested = catch(|| catch(|| panic!("inner")).unwrap_err().message);
        assert_eq!(nested, Ok("inner".to_string()));
    }

    #[test]
    fn results_do_not_depend_on_the_thread() {
        let run = |seed: u64| {
            catch(move || {
                assert!(!seed.is_multiple_of(3), "seed {seed} hits the assertion");
                seed
            })
        };
        let here: Vec<_> = (0..12).map(run).collect();
        let there: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..12).map(|seed| s.spawn(move || run(seed))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(here, there);
        assert!(here[3].is_err() && here[4].is_ok());
    }
}
