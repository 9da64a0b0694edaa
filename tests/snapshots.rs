//! The summary of each shipped scenario at a fixed seed, snapshotted. A
//! change in any of them means the simulation changed: review the diff.

use crate::common::{check, load};
use ckptsim::report::Summary;

fn summary(name: &str, seed: u64) -> String {
    let sc = load(name);
    let e = check(&sc, seed, &[]);
    let path = format!("scenarios/{name}.toml");
    Summary::new(&path, seed, sc.checkpoint.algorithm.name(), &[], &e).to_text(false)
}

#[test]
fn wordcount() {
    insta::assert_snapshot!(summary("wordcount", 7));
}

#[test]
fn backpressure() {
    insta::assert_snapshot!(summary("backpressure", 1));
}

#[test]
fn alignment_crash() {
    insta::assert_snapshot!(summary("alignment-crash", 3));
}

#[test]
fn faults() {
    insta::assert_snapshot!(summary("faults", 7));
}

#[test]
fn bench() {
    insta::assert_snapshot!(summary("bench", 0));
}

/// Every algorithm on the backpressure pipeline at one seed: the metrics
/// lines show each one's signature (durations, in-flight bytes).
#[test]
fn backpressure_per_algorithm() {
    use crate::common::check_alg;
    use ckptsim::scenario::Algorithm;
    let sc = load("backpressure");
    for a in Algorithm::all() {
        let e = check_alg(&sc, 1, a, &[]);
        let text = Summary::new("scenarios/backpressure.toml", 1, a.name(), &[], &e).to_text(false);
        insta::assert_snapshot!(format!("backpressure_{}", a.name()), text);
    }
}
