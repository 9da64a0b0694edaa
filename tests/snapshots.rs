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
fn bench() {
    insta::assert_snapshot!(summary("bench", 0));
}
