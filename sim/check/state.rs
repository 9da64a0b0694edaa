//! State equivalence: after the job finishes, every keyed state equals the
//! oracle's, exactly. A run whose declared guarantee is weaker than
//! exactly-once may duplicate state effects as it duplicates output, so
//! its state is held to exactness only while its output breaks its
//! guarantee too.

use super::{Finding, Input};
use crate::verdict::Violation;

pub fn check(input: &Input) -> Finding {
    let mut violations = Vec::new();
    let mut compared = 0;
    if input.finished {
        compared = input.oracle.compare_state(input.run, &mut violations);
    }
    let allowed =
        !input.exact_state_promised() && input.output.guarantee.satisfies(input.run.expected);
    if allowed {
        violations.clear();
    }
    let end = input.end_ns();
    let violations = violations
        .into_iter()
        .map(|v| Violation { time_ns: end, ..v })
        .collect();
    Finding {
        violations,
        reach: vec![("keyed entries compared", compared)],
    }
}
