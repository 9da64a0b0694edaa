//! The cluster recipes under `deploy/`: the Kubernetes Indexed Job's
//! command and the Slurm array script run here, two shards each, and their
//! files merge into the summary of the unsharded sweep; the manifest, the
//! image and the scenarios agree with each other.

use std::path::{Path, PathBuf};
use std::process::Command;

fn deploy(file: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("deploy")
            .join(file),
    )
    .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ckptsim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The directory holding the `ckptsim` binary, first on a `PATH`.
fn path_with_binary() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_ckptsim")).parent().unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The shell script of the Job's container: the block scalar after `args:`.
fn job_script(manifest: &str) -> String {
    let mut lines = manifest.lines().skip_while(|l| l.trim() != "args:");
    lines.next();
    let head = lines.next().expect("args: holds a block scalar");
    assert_eq!(head.trim(), "- |", "{head}");
    let indent = head.find('-').unwrap() + 2;
    lines
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() >= indent)
        .map(|l| l.get(indent..).unwrap_or("").to_string() + "\n")
        .collect()
}

/// The value of `key:` in the manifest (its first occurrence).
fn yaml_value(manifest: &str, key: &str) -> String {
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key}: in the manifest"));
    line.split_once(':')
        .unwrap()
        .1
        .trim()
        .trim_matches('"')
        .to_string()
}

/// The value of the container's environment variable `name`.
fn yaml_env(manifest: &str, name: &str) -> String {
    let mut lines = manifest.lines();
    lines
        .find(|l| l.trim() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("no env {name}"));
    yaml_value(lines.next().unwrap(), "value")
}

fn unsharded_summary(seeds: &str) -> serde_json::Value {
    let o = crate::common::ckptsim(&[
        "sweep",
        "scenarios/wordcount.toml",
        "--seeds",
        seeds,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::stderr(&o));
    serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["summary"].clone()
}

fn merged_summary(dir: &Path) -> serde_json::Value {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let o = crate::common::ckptsim(&args);
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["missing"].is_null());
    v["summary"].clone()
}

#[test]
fn the_kubernetes_job_command_runs_two_shards_that_merge() {
    let manifest = deploy("sweep-job.yaml");
    let script = job_script(&manifest);
    assert!(
        script.contains("--shard \"$JOB_COMPLETION_INDEX/$SHARDS\""),
        "{script}"
    );
    let dir = scratch("k8s");
    for index in 0..2 {
        let o = Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("PATH", path_with_binary())
            .env("SCENARIO", "scenarios/wordcount.toml")
            .env("SEEDS", "0..16")
            .env("SHARDS", "2")
            .env("JOBS", "1")
            .env("RESULTS", &dir)
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(merged_summary(&dir), unsharded_summary("0..16"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_slurm_array_script_runs_two_shards_that_merge() {
    let dir = scratch("slurm");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/sweep.slurm");
    for index in 0..2 {
        let o = Command::new("bash")
            .arg(&script)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("CKPTSIM", env!("CARGO_BIN_EXE_ckptsim"))
            .env("SCENARIO", "scenarios/wordcount.toml")
            .env("SEEDS", "0..16")
            .env("RESULTS", &dir)
            .env("SLURM_ARRAY_TASK_COUNT", "2")
            .env("SLURM_ARRAY_TASK_ID", index.to_string())
            .env("SLURM_CPUS_PER_TASK", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(merged_summary(&dir), unsharded_summary("0..16"));
    // Outside an array job the script says how to run it.
    let o = Command::new("bash")
        .arg(&script)
        .env_remove("SLURM_ARRAY_TASK_COUNT")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("sbatch deploy/sweep.slurm"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The manifest runs as many shards as it declares, from a scenario the
/// image ships, with the binary where the image puts it.
#[test]
fn the_manifest_the_image_and_the_scenarios_agree() {
    let manifest = deploy("sweep-job.yaml");
    let shards = yaml_env(&manifest, "SHARDS");
    assert_eq!(yaml_value(&manifest, "completions"), shards);
    assert_eq!(yaml_value(&manifest, "parallelism"), shards);
    assert_eq!(yaml_value(&manifest, "completionMode"), "Indexed");
    let scenario = yaml_env(&manifest, "SCENARIO");
    let shipped = scenario
        .strip_prefix("/scenarios/")
        .expect("a shipped scenario");
    assert!(Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(shipped)
        .is_file());
    let image = deploy("Dockerfile");
    assert!(image.contains("COPY scenarios /scenarios"));
    assert!(image.contains("/usr/local/bin/ckptsim"));
    let claim = yaml_value(&deploy("results-pvc.yaml"), "name");
    assert!(manifest.contains(&format!("claimName: {claim}")));
    assert!(deploy("merge-pod.yaml").contains(&format!("claimName: {claim}")));
    assert_eq!(
        yaml_value(&manifest, "image"),
        yaml_value(&deploy("merge-pod.yaml"), "image")
    );
}
