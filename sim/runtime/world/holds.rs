//! Holds: every time a task stops reading an input on purpose — an input
//! channel blocked by an aligned barrier until the alignment ends, a
//! `stop-the-world` source paused until its checkpoint completes or is
//! aborted — and when it lets go, for the progress check's "a paused or
//! blocked input is released".
//!
//! A hold ends when the task releases it, or when the task is replaced at a
//! restart (its successor starts with nothing held). Only holds longer than
//! the bound the run was given are kept whole (with who held what, for the
//! message); the others are counted. Recording never changes what a run
//! does.

use super::*;
use crate::runtime::output::{HoldSpan, Holds};

use super::recorder::PAUSE;

impl World<'_> {
    /// Task `t` starts holding input `input` (`None`: a paused source).
    pub(super) fn hold(&mut self, t: TaskId, input: Option<u32>) {
        let now = self.net.now.0;
        self.rec
            .holds
            .open
            .entry((t, input.unwrap_or(PAUSE)))
            .or_insert(now);
    }

    /// Task `t` releases input `input` (`None`: resumes a paused source),
    /// if it held it.
    pub(super) fn release(&mut self, t: TaskId, input: Option<u32>) {
        let key = (t, input.unwrap_or(PAUSE));
        if let Some(since) = self.rec.holds.open.remove(&key) {
            self.close_hold(key, since, Some(self.net.now.0));
        }
    }

    /// Task `t` is replaced (a restart): what it held is let go.
    pub(super) fn release_all(&mut self, t: TaskId) {
        let keys: Vec<(TaskId, u32)> = self
            .rec
            .holds
            .open
            .range((t, 0)..=(t, PAUSE))
            .map(|(&k, _)| k)
            .collect();
        for key in keys {
            let since = self.rec.holds.open.remove(&key).unwrap_or(0);
            self.close_hold(key, since, Some(self.net.now.0));
        }
    }

    /// The holds of the run, those still open at its end included (with
    /// no end).
    pub(super) fn take_holds(&mut self) -> Holds {
        let open = std::mem::take(&mut self.rec.holds.open);
        for (key, since) in open {
            self.close_hold(key, since, None);
        }
        std::mem::take(&mut self.rec.holds.out)
    }

    fn close_hold(&mut self, (t, input): (TaskId, u32), since: u64, until: Option<u64>) {
        let log = &mut self.rec.holds;
        log.out.judged += 1;
        let end = until.unwrap_or(self.net.now.0);
        if end.saturating_sub(since) <= log.keep_over {
            return;
        }
        let ti = t as usize;
        let task = self.plan.exec.tasks[ti].name.clone();
        let what = if input == PAUSE {
            format!("the source {task}, paused")
        } else {
            let ch = self.plan.exec.tasks[ti].inputs[input as usize];
            let from = self.net.channels[ch as usize].from as usize;
            format!(
                "input {input} of {task} (from {}), blocked",
                self.plan.exec.tasks[from].name
            )
        };
        self.rec.holds.out.long.push(HoldSpan {
            what,
            paused: input == PAUSE,
            since_ns: since,
            until_ns: until,
        });
    }
}
