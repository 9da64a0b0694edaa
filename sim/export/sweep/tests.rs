use super::*;

fn side(verdict: &str, failed: &[&str]) -> Side {
    Side {
        verdict: verdict.into(),
        failed: failed.iter().map(|s| s.to_string()).collect(),
        message: String::new(),
        crashes: None,
    }
}

#[test]
fn a_case_is_classified_by_how_each_release_relates_to_its_simulation() {
    let pass = side("pass", &[]);
    let lost = side("fail", &["exactly-once-output"]);
    let commit = side("fail", &["commit"]);
    let frozen = side("fail", &["liveness"]);
    let cut = side("fail", &["consistent-cut"]);
    let none = side("not-run", &[]);
    assert_eq!(
        classify(&[(&pass, &pass), (&pass, &pass)]),
        Class::AgreePass
    );
    // The commit check's promise shows on Flink as missing output.
    assert_eq!(classify(&[(&commit, &lost)]), Class::AgreeFail);
    assert_eq!(classify(&[(&pass, &lost)]), Class::FlinkOnly);
    assert_eq!(classify(&[(&lost, &pass)]), Class::SimOnly);
    // A check no real run can see is not a disagreement.
    assert_eq!(classify(&[(&cut, &pass)]), Class::SimOnlyUnobservable);
    assert_eq!(classify(&[(&frozen, &lost)]), Class::FailDiffer);
    assert_eq!(
        classify(&[(&pass, &pass), (&pass, &lost)]),
        Class::ReleasesDiffer
    );
    assert_eq!(
        classify(&[(&pass, &pass), (&pass, &none)]),
        Class::Incomplete
    );
    assert_eq!(classify(&[]), Class::Incomplete);
    for c in Class::ALL {
        let disagreement = matches!(
            c,
            Class::FlinkOnly | Class::SimOnly | Class::FailDiffer | Class::ReleasesDiffer
        );
        assert_eq!(c.is_disagreement(), disagreement, "{}", c.name());
    }
}

#[test]
fn a_signature_names_each_releases_verdicts_and_failed_checks() {
    let pass = side("pass", &[]);
    let lost = side("fail", &["exactly-once-output", "liveness"]);
    assert_eq!(
        signature(&[("2.0.2", &pass, &pass), ("2.3.0", &pass, &lost)]),
        "2.0.2: sim pass, flink pass | 2.3.0: sim pass, flink fail exactly-once-output+liveness"
    );
}

#[test]
fn generated_cases_are_a_function_of_the_seed_and_exportable() {
    let algorithms: Vec<Algorithm> = ALGORITHMS
        .iter()
        .map(|a| Algorithm::from_name(a).unwrap())
        .collect();
    for k in 0..8 {
        let a = generated(3, k, &algorithms);
        let b = generated(3, k, &algorithms);
        assert_eq!(a.id, b.id);
        assert_eq!(a.seed, b.seed);
        assert_eq!(
            crate::scenario::write::to_toml(&a.scenario),
            crate::scenario::write::to_toml(&b.scenario)
        );
        assert_eq!(a.algorithm.name(), ALGORITHMS[k as usize % 4]);
        for release in [FlinkVersion::V2_0, FlinkVersion::V2_3] {
            let opts = options(&a, release, 60_000, Mutants::NONE);
            let s = for_release(&a, release);
            assert_eq!(s.checkpoint.flink_version, release);
            assert!(super::super::export(&s, &opts).is_ok(), "case {k}");
        }
    }
}

#[test]
fn the_summary_counts_classes_and_the_fidelity_of_each_metric() {
    let id = Identity {
        command: "ckptsim flink-sweep --out x".into(),
        seed: Some(0),
        cases: 2,
        releases: vec!["2.3.0".into()],
        algorithms: vec!["aligned".into()],
        mutants: vec![],
        limit_ms: 1,
        version: "0".into(),
        jvm_options: String::new(),
    };
    let line = |case: &str, class: Class, ratio: f64| Line {
        sweep: id.clone(),
        case: case.into(),
        origin: String::new(),
        scenario: case.into(),
        seed: 0,
        algorithm: "aligned".into(),
        class,
        signature: "2.3.0: sim pass, flink pass".into(),
        simulated: BTreeMap::from([("2.3.0".to_string(), side("pass", &[]))]),
        releases: BTreeMap::from([("2.3.0".to_string(), side("pass", &[]))]),
        fidelity: BTreeMap::from([(
            "2.3.0".to_string(),
            vec![("checkpoint duration p50".to_string(), ratio * 10.0, 10.0)],
        )]),
        dir: format!("cases/{case}"),
    };
    let lines = [
        line("a", Class::AgreePass, 0.5),
        line("b", Class::FlinkOnly, 2.0),
    ];
    let s = summarise(&id, &lines);
    assert_eq!(s.classes["agree-pass"], 1);
    assert_eq!(s.classes["flink-only"], 1);
    assert_eq!(s.classes["sim-only"], 0);
    let (n, p10, p50, p90) = s.fidelity["2.3.0 / aligned / checkpoint duration p50"];
    assert_eq!((n, p10, p50, p90), (2, 0.5, 0.5, 2.0));
    let md = summary_md(&s, &lines);
    assert!(md.contains("## Disagreements (1)"));
    assert!(md.contains("`b` (flink-only)"));
    let rerun = rerun_md(&lines[1], "ckptsim");
    assert!(rerun.contains("sh cases/b/2.3.0/run.sh"), "{rerun}");
    assert!(
        rerun.contains("ckptsim flink-check cases/b/2.3.0"),
        "{rerun}"
    );
}

#[test]
fn the_simulated_side_is_read_from_the_exports_summary() {
    let summary = serde_json::json!({
        "verdict": "fail",
        "violations": [
            {"check": "commit", "time_ns": 1, "message": "a\nb"},
            {"check": "commit", "time_ns": 2, "message": "c"},
            {"check": "state", "time_ns": 3, "message": "d"}
        ]
    });
    let s = Side::simulated(&summary);
    assert_eq!(s.verdict, "fail");
    assert_eq!(s.failed, vec!["commit".to_string(), "state".to_string()]);
    assert_eq!(s.message, "a b");
    assert_eq!(
        relate(&s, &side("fail", &["exactly-once-output"])),
        Class::AgreeFail
    );
    let missing = Side::real(&Err("cannot read real/run.json".into()));
    assert_eq!(missing.verdict, "not-run");
    assert_eq!(relate(&s, &missing), Class::Incomplete);
}
