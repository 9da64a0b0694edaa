//! Restart strategies (Flink's `RestartBackoffTimeStrategy`): after each
//! failure they decide whether the job restarts, and after how long.

use crate::engine::{SimDuration, SimTime};
use crate::scenario::{FaultSpec, RestartStrategy};
use std::collections::VecDeque;

/// The restart strategy's memory of past failures.
#[derive(Clone, Debug)]
pub struct RestartTracker {
    strategy: RestartStrategy,
    delay: SimDuration,
    max_restarts: u32,
    /// Restarts so far (fixed-delay), or since the last reset (exponential).
    attempts: u32,
    /// Exponential-delay: the backoff of the next restart.
    backoff: SimDuration,
    /// Exponential-delay: when the last failure happened.
    last_failure: Option<SimTime>,
    /// Failure-rate: times of the recent failures.
    recent: VecDeque<SimTime>,
}

/// The strategy's answer to a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Restart after this delay.
    Restart(SimDuration),
    /// Give up: the job fails, for this reason.
    GiveUp(String),
}

impl RestartTracker {
    pub fn new(f: &FaultSpec) -> RestartTracker {
        RestartTracker {
            strategy: f.restart.clone(),
            delay: f.restart_delay,
            max_restarts: f.max_restarts,
            attempts: 0,
            backoff: f.restart_delay,
            last_failure: None,
            recent: VecDeque::new(),
        }
    }

    /// A failure happened at `now`: restart (after how long) or give up.
    pub fn on_failure(&mut self, now: SimTime) -> Decision {
        match self.strategy.clone() {
            RestartStrategy::FixedDelay => {
                self.attempts += 1;
                if self.attempts > self.max_restarts {
                    return Decision::GiveUp(format!(
                        "restart strategy fixed-delay gave up after {} attempts",
                        self.max_restarts
                    ));
                }
                Decision::Restart(self.delay)
            }
            RestartStrategy::ExponentialDelay {
                max_backoff,
                multiplier_permille,
                reset_threshold,
            } => {
                if let Some(last) = self.last_failure {
                    if now.since(last) >= reset_threshold {
                        // The job ran long enough without failing: start over.
                        self.attempts = 0;
                        self.backoff = self.delay;
                    }
                }
                self.last_failure = Some(now);
                self.attempts += 1;
                if self.attempts > self.max_restarts {
                    return Decision::GiveUp(format!(
                        "restart strategy exponential-delay gave up after {} attempts",
                        self.max_restarts
                    ));
                }
                let delay = self.backoff.min(max_backoff);
                let next =
                    u128::from(self.backoff.nanos()) * u128::from(multiplier_permille) / 1000;
                self.backoff = SimDuration(next.min(u128::from(max_backoff.nanos())) as u64);
                Decision::Restart(delay)
            }
            RestartStrategy::FailureRate {
                max_failures,
                interval,
            } => {
                self.recent.push_back(now);
                while self
                    .recent
                    .front()
                    .is_some_and(|&t| now.since(t) >= interval)
                {
                    self.recent.pop_front();
                }
                if self.recent.len() as u64 > u64::from(max_failures) {
                    return Decision::GiveUp(format!(
                        "restart strategy failure-rate gave up: {} failures within {interval} (at most {max_failures} allowed)",
                        self.recent.len()
                    ));
                }
                Decision::Restart(self.delay)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(strategy: RestartStrategy, delay_ms: u64, max: u32) -> FaultSpec {
        FaultSpec {
            detection_delay: SimDuration::from_millis(10),
            restart_delay: SimDuration::from_millis(delay_ms),
            max_restarts: max,
            crashes: Vec::new(),
            random: None,
            restart: strategy,
            notifications: None,
            operator_events: None,
            storage: None,
            coordinator: None,
            slow_tasks: Vec::new(),
            worker_crashes: Vec::new(),
            random_workers: None,
            latency_spikes: Vec::new(),
            partitions: Vec::new(),
            storage_failures: Vec::new(),
            lost_notifications: Vec::new(),
            broker: Vec::new(),
            failover: crate::scenario::FailoverStrategy::Full,
        }
    }

    fn ms(n: u64) -> SimTime {
        SimTime(n * 1_000_000)
    }

    #[test]
    fn fixed_delay_gives_up_after_max() {
        let mut t = RestartTracker::new(&spec(RestartStrategy::FixedDelay, 100, 2));
        let d = Decision::Restart(SimDuration::from_millis(100));
        assert_eq!(t.on_failure(ms(1)), d);
        assert_eq!(t.on_failure(ms(2)), d);
        assert!(
            matches!(t.on_failure(ms(3)), Decision::GiveUp(r) if r.contains("after 2 attempts"))
        );
    }

    #[test]
    fn exponential_backs_off_caps_and_resets() {
        let s = RestartStrategy::ExponentialDelay {
            max_backoff: SimDuration::from_millis(350),
            multiplier_permille: 2000,
            reset_threshold: SimDuration::from_secs(10),
        };
        let mut t = RestartTracker::new(&spec(s, 100, 1000));
        let delays: Vec<Decision> = (1..=5).map(|i| t.on_failure(ms(i))).collect();
        let want: Vec<Decision> = [100, 200, 350, 350, 350]
            .iter()
            .map(|&n| Decision::Restart(SimDuration::from_millis(n)))
            .collect();
        assert_eq!(delays, want);
        // Ten quiet seconds reset the backoff.
        assert_eq!(
            t.on_failure(ms(20_000)),
            Decision::Restart(SimDuration::from_millis(100))
        );
    }

    #[test]
    fn failure_rate_gives_up_only_within_the_window() {
        let s = RestartStrategy::FailureRate {
            max_failures: 2,
            interval: SimDuration::from_secs(1),
        };
        let mut t = RestartTracker::new(&spec(s, 50, 0));
        assert!(matches!(t.on_failure(ms(0)), Decision::Restart(_)));
        assert!(matches!(t.on_failure(ms(500)), Decision::Restart(_)));
        // The first failure left the window: still two within it.
        assert!(matches!(t.on_failure(ms(1_200)), Decision::Restart(_)));
        assert!(
            matches!(t.on_failure(ms(1_300)), Decision::GiveUp(r) if r.contains("3 failures within 1s"))
        );
    }
}
