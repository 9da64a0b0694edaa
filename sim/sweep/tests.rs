//! Unit tests of the sweep: seed ranges, shards, summaries and merges.
use super::*;

#[test]
fn failure_shapes_ignore_counts_and_their_plurals() {
    let one = "exactly-once-output at 1.5ms: 1 committed record more than expected (by lineage), e.g. key 3";
    let many = "exactly-once-output at 20ms: 12 committed records more than expected (by lineage), e.g. key 40";
    assert_eq!(shape_of(one), shape_of(many));
    assert_eq!(
        shape_of(many),
        "exactly-once-output: N committed records more than expected (by lineage), e.g. key N"
    );
}

#[test]
fn seed_ranges_parse() {
    assert_eq!(
        SeedRange::parse("0..10"),
        Ok(SeedRange { start: 0, end: 10 })
    );
    assert_eq!(
        SeedRange::parse("5..=7"),
        Ok(SeedRange { start: 5, end: 8 })
    );
    assert!(SeedRange::parse("7..5").is_err());
    assert!(SeedRange::parse("x..5").is_err());
    assert!(SeedRange::parse("10").is_err());
    // The highest seed a range holds is u64::MAX - 1; at u64::MAX the
    // message says so instead of calling the syntax wrong.
    let top = u64::MAX - 1;
    assert_eq!(
        SeedRange::parse(&format!("{top}..={top}")),
        Ok(SeedRange {
            start: top,
            end: u64::MAX
        })
    );
    let max = u64::MAX;
    let e = SeedRange::parse(&format!("{max}..={max}")).unwrap_err();
    assert!(
        e.contains("the highest seed a range can include is 18446744073709551614")
            && !e.contains("expected A..B"),
        "{e}"
    );
}

#[test]
fn shards_interleave_and_cover_the_range_once() {
    let range = SeedRange { start: 3, end: 20 };
    let mut all: Vec<u64> = (0..4)
        .flat_map(|i| Shard { index: i, count: 4 }.seeds(range))
        .collect();
    all.sort_unstable();
    assert_eq!(all, (3..20).collect::<Vec<_>>());
    assert_eq!(
        Shard::parse("1/4")
            .unwrap()
            .seeds(range)
            .take(3)
            .collect::<Vec<_>>(),
        vec![4, 8, 12]
    );
    assert!(Shard::parse("4/4").is_err());
    assert!(Shard::parse("0/0").is_err());
}

#[test]
fn failures_group_by_checks_and_message_shape() {
    let f = |seed, checks: &[&str], message: &str| Failure {
        seed,
        checks: checks.iter().map(|c| c.to_string()).collect(),
        violation: Some(message.to_string()),
        nondeterminism: None,
        replay: format!("ckptsim run s.toml --seed {seed} --algorithm aligned"),
        panic: None,
        cause: None,
    };
    let groups = FailureGroup::of(&[
        f(3, &["state"], "state at 1.5ms: operator #2: 4 keys differ"),
        f(
            5,
            &["state"],
            "state at 2.25ms: operator #2: 17 keys differ",
        ),
        f(
            7,
            &["state", "commit"],
            "state at 1ms: operator #2: 4 keys differ",
        ),
        f(9, &["state"], "state at 1ms: operator #2: 1 keys missing"),
        f(11, &["state"], "state at 9ms: operator #2: 8 keys differ"),
    ]);
    let seeds: Vec<Vec<u64>> = groups.iter().map(|g| g.seeds.clone()).collect();
    assert_eq!(seeds, vec![vec![3, 5, 11], vec![7], vec![9]]);
    assert_eq!(groups[0].shape, "state: operator #N: N keys differ");
    assert_eq!(
        groups[0].shrink,
        "ckptsim shrink s.toml --seed 3 --algorithm aligned --out repro-3.toml"
    );
}
