//! `compare --vary` given several times: one axis of every combination of
//! their values.

use crate::common::{ckptsim, stderr, stdout};

/// Several `--vary` make one axis of every combination, the first varying
/// slowest: each combination sets every key (the runs differ), the report
/// names them, and a key given twice is refused before any run.
#[test]
fn repeated_vary_axes_combine_into_one() {
    use ckptsim::compare::Vary;
    let axes = vec![
        Vary::parse("checkpoint.interval=50ms,100ms").unwrap(),
        Vary::parse("network.buffer_credits=1,2,4").unwrap(),
    ];
    let v = Vary::product(axes).unwrap().unwrap();
    assert_eq!(v.key, "checkpoint.interval × network.buffer_credits");
    assert_eq!(v.values.len(), 6);
    assert_eq!(v.values[4], "100ms × 2");
    assert_eq!(
        v.settings(4),
        [
            ("checkpoint.interval", "100ms"),
            ("network.buffer_credits", "2")
        ]
    );
    let twice = vec![
        Vary::parse("checkpoint.interval=50ms").unwrap(),
        Vary::parse("checkpoint.interval=1s").unwrap(),
    ];
    assert_eq!(
        Vary::product(twice).unwrap_err(),
        "--vary checkpoint.interval is given twice"
    );
    let dir = std::env::temp_dir().join(format!("ckptsim-vary2-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let out = dir.join("cmp").display().to_string();
    let o = ckptsim(&[
        "compare",
        "scenarios/wordcount.toml",
        "--algorithms",
        "aligned",
        "--seeds",
        "0..1",
        "--vary",
        "checkpoint.interval=50ms,200ms",
        "--vary",
        "network.buffer_credits=1,8",
        "--out",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp/results.json")).unwrap())
            .unwrap();
    let runs = json["runs"].as_array().unwrap();
    let vary: Vec<&str> = runs.iter().map(|r| r["vary"].as_str().unwrap()).collect();
    assert_eq!(vary, ["50ms × 1", "50ms × 8", "200ms × 1", "200ms × 8"]);
    let completed = |i: usize| runs[i]["checkpoints_completed"].as_u64().unwrap();
    assert!(completed(0) > completed(2), "the interval was set");
    let readme = std::fs::read_to_string(dir.join("cmp/README.md")).unwrap();
    assert!(
        readme.contains(
            "--vary 'checkpoint.interval=50ms,200ms' --vary 'network.buffer_credits=1,8'"
        ),
        "{readme}"
    );
    std::fs::remove_dir_all(&dir).ok();
    let o = ckptsim(&[
        "compare",
        "scenarios/wordcount.toml",
        "--vary",
        "checkpoint.interval=50ms",
        "--vary",
        "checkpoint.interval=1s",
        "--out",
        &out,
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("given twice"), "{err}");
    assert!(!dir.exists());
}
