//! The command line's contract: whatever the arguments and whatever the
//! files they name (valid, malformed, missing, directories, FIFOs, devices,
//! unwritable outputs), `ckptsim` exits with 0, 1 or 2 within its time
//! bound: never 101 (a panic), never a signal, never a hang.
//!
//! Arguments are drawn per command from every flag it has and from values
//! that are valid, malformed or extreme; commands that run many seeds get
//! small seed ranges unless the draw names its own (the work a command is
//! asked to do is its limit). `CKPTSIM_CONTRACT_CASES` sets the number of
//! invocations (32 by default), `CKPTSIM_FUZZ_SECONDS` the bound on each
//! (60 by default).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Files the arguments name, made once.
struct Files {
    dir: PathBuf,
    savepoint: PathBuf,
}

fn files() -> &'static Files {
    static FILES: OnceLock<Files> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ckptsim-contract-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(root.join("scenarios/wordcount.toml")).unwrap();
        std::fs::write(dir.join("truncated.toml"), &text[..text.len() / 2]).unwrap();
        std::fs::write(dir.join("binary.toml"), [0xff, 0x00, 0xfe, b'\n']).unwrap();
        std::fs::write(
            dir.join("huge-values.toml"),
            text.replace(
                "records_per_partition = 3000",
                "records_per_partition = 9223372036854775807",
            ),
        )
        .unwrap();
        std::fs::write(dir.join("results.jsonl"), "{\"seed\": 1}\nnot json\n").unwrap();
        #[cfg(unix)]
        {
            let made = Command::new("mkfifo")
                .arg(dir.join("fifo"))
                .status()
                .unwrap();
            assert!(made.success());
        }
        let savepoint = dir.join("savepoint");
        let o = crate::common::ckptsim_command()
            .args([
                "savepoint",
                "scenarios/wordcount.toml",
                "--at",
                "300ms",
                "--out",
            ])
            .arg(&savepoint)
            .current_dir(root)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        Files { dir, savepoint }
    })
}

/// A file argument: valid, malformed, missing, or not a file at all.
fn file(i: usize) -> String {
    let f = files();
    let d = |name: &str| f.dir.join(name).display().to_string();
    if i.is_multiple_of(2) {
        let valid = [
            "scenarios/wordcount.toml",
            "scenarios/flip27.toml",
            "scenarios/sink-v2.toml",
        ];
        return valid[i / 2 % valid.len()].into();
    }
    match i / 2 % 14 {
        0 => "scenarios/wordcount.toml".into(),
        1 => "scenarios/flip27.toml".into(),
        2 => "scenarios/faults.toml".into(),
        3 => d("truncated.toml"),
        4 => d("binary.toml"),
        5 => d("huge-values.toml"),
        6 => d("fifo"),
        7 => "/dev/zero".into(),
        8 => "/dev/null".into(),
        9 => f.dir.display().to_string(),
        10 => d("missing.toml"),
        11 => f.savepoint.display().to_string(),
        12 => d("results.jsonl"),
        _ => String::new(),
    }
}

/// An output argument: a new path, an existing directory, a device, a path
/// under a missing directory.
fn output(i: usize, case: u64) -> String {
    let f = files();
    match i % 6 {
        0 | 1 => f.dir.join(format!("out-{case}")).display().to_string(),
        2 => f.dir.clone().display().to_string(), // exists, not empty
        3 => "/dev/full".into(),
        4 => f.dir.join("no/such/dir/out").display().to_string(),
        _ => f.savepoint.display().to_string(),
    }
}

const SEEDS: &[&str] = &[
    "0..2", "1..=2", "3..1", "0..0", "5", "a..b", "0..=0", "-1..2",
];
const TIMES: &[&str] = &[
    "300ms", "0ns", "1ns", "8760h", "8760h1ns", "-1ms", "1e300s", "soon",
];
const ALGORITHMS: &[&str] = &["aligned", "unaligned", "chandy-lamport", "bogus", ""];
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "100000",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "x",
];

/// One command line: the command, then flags drawn from its own.
fn command(pick: &[usize], case: u64) -> Vec<String> {
    let p = |i: usize| pick.get(i).copied().unwrap_or(0);
    // Half the time the first (valid) value of a pool.
    let of = |pool: &[&str], i: usize| match p(i) % 2 {
        0 => pool[0].to_string(),
        _ => pool[p(i) / 2 % pool.len()].to_string(),
    };
    let commands = [
        "run",
        "savepoint",
        "verify-snapshot",
        "sweep",
        "merge",
        "stalls",
        "compare",
        "mutants",
        "shrink",
        "list",
        "bogus",
        "--help",
    ];
    let cmd = commands[p(0) % commands.len()];
    let mut args = vec![cmd.to_string()];
    // Positional arguments.
    match cmd {
        "verify-snapshot" if p(1) % 2 == 0 => args.push(files().savepoint.display().to_string()),
        "run" | "savepoint" | "sweep" | "compare" | "shrink" | "verify-snapshot" | "merge" => {
            args.push(file(p(1)))
        }
        _ => {}
    }
    let flags: &[&str] = match cmd {
        "run" => &[
            "--seed",
            "--algorithm",
            "--mutant",
            "--json",
            "--check-determinism",
            "--swarm",
            "--trace",
            "--perfetto",
            "--from-savepoint",
            "--parallelism",
            "--allow-non-restored-state",
            "--cancel-at",
            "--checkpoint-dir",
        ],
        "savepoint" => &[
            "--at",
            "--out",
            "--stop",
            "--drain",
            "--seed",
            "--algorithm",
            "--from-savepoint",
            "--parallelism",
        ],
        "verify-snapshot" => &["--scenario", "--parallelism", "--allow-non-restored-state"],
        "sweep" => &[
            "--seeds",
            "--jobs",
            "--shard",
            "--algorithm",
            "--mutant",
            "--swarm",
            "--out",
            "--check-determinism",
            "--json",
        ],
        "merge" => &["--json"],
        "stalls" => &[
            "--cases",
            "--seed",
            "--algorithms",
            "--out",
            "--jobs",
            "--explain",
            "--notes",
        ],
        "compare" => &[
            "--algorithms",
            "--seeds",
            "--vary",
            "--out",
            "--notes",
            "--jobs",
            "--mutant",
        ],
        "mutants" => &["--seeds", "--jobs", "--shrink-budget", "--only", "--json"],
        "shrink" => &[
            "--seed",
            "--out",
            "--algorithm",
            "--mutant",
            "--swarm",
            "--budget",
        ],
        _ => &["--json", "--seed"],
    };
    for k in 0..p(2) % 5 {
        let flag = flags[p(3 + 2 * k) % flags.len()];
        let v = 4 + 2 * k;
        args.push(flag.to_string());
        let value = match flag {
            "--seed" | "--jobs" | "--budget" | "--shrink-budget" => of(NUMBERS, v),
            "--cases" => of(&["0", "1", "2", "x"], v),
            "--seeds" => of(SEEDS, v),
            "--algorithm" => of(ALGORITHMS, v),
            "--algorithms" => of(&["aligned,unaligned", "aligned", "", "aligned,bogus"], v),
            "--mutant" | "--only" => of(&["broadcast-state-not-snapshotted", "bogus", ""], v),
            "--at" | "--cancel-at" => of(TIMES, v),
            "--out" | "--trace" | "--perfetto" | "--checkpoint-dir" => output(p(v), case),
            "--from-savepoint" | "--scenario" | "--explain" | "--notes" => file(p(v)),
            "--parallelism" => of(
                &["count=3", "count=0", "ghost=1", "count=40000", "=", "count"],
                v,
            ),
            "--shard" => of(&["0/2", "2/2", "0/0", "x"], v),
            "--vary" => of(
                &[
                    "checkpoint.interval=100ms,200ms",
                    "bogus=1",
                    "checkpoint.interval=",
                    "=",
                ],
                v,
            ),
            _ => continue, // a switch
        };
        args.push(value);
    }
    // The global resource limits, on any command.
    let limit = match p(14) % 6 {
        0 => Some((
            "--max-memory",
            of(&["8GiB", "1MiB", "1KiB", "64MiB", "x"], 15),
        )),
        1 => Some(("--max-wall", of(&["10s", "1ms", "0s", "1ns", "x"], 15))),
        _ => None,
    };
    if let Some((flag, value)) = limit {
        args.push(flag.to_string());
        args.push(value);
    }
    // The work asked for is the limit: many-seed commands get a small one
    // unless the draw set its own.
    let bound = |args: &mut Vec<String>, flag: &str, value: &str| {
        if !args.iter().any(|a| a == flag) {
            args.push(flag.to_string());
            args.push(value.to_string());
        }
    };
    match cmd {
        "sweep" => bound(&mut args, "--seeds", "0..2"),
        "compare" => {
            bound(&mut args, "--seeds", "0..2");
            bound(&mut args, "--out", &output(0, case));
        }
        "mutants" => {
            bound(&mut args, "--seeds", "0..2");
            bound(&mut args, "--only", "broadcast-state-not-snapshotted");
        }
        "stalls" => {
            bound(&mut args, "--cases", "2");
            bound(&mut args, "--out", &output(0, case));
        }
        "shrink" => bound(&mut args, "--budget", "3"),
        "savepoint" => {
            bound(&mut args, "--at", "300ms");
            bound(&mut args, "--out", &output(0, case));
        }
        _ => {}
    }
    args
}

/// Runs the binary; its exit code, or the reason it broke the contract.
fn invoke(args: &[String]) -> Result<i32, String> {
    let mut child = crate::common::ckptsim_command()
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let limit = env("CKPTSIM_FUZZ_SECONDS", 60) * 100;
    for _ in 0..limit {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return match status.code() {
                Some(code @ 0..=2) => Ok(code),
                Some(code) => Err(format!("exit code {code}: {err}")),
                None => Err(format!("killed by a signal ({status}): {err}")),
            };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    Err("still running past the time bound".into())
}

proptest! {
    #![proptest_config(Config {
        cases: env("CKPTSIM_CONTRACT_CASES", 32) as u32,
        failure_persistence: None,
        max_shrink_iters: 50,
        ..Config::default()
    })]

    #[test]
    fn any_arguments_exit_0_1_or_2_in_time(
        pick in prop::collection::vec(any::<usize>(), 16),
        case in any::<u64>(),
    ) {
        let args = command(&pick, case);
        let code = invoke(&args);
        if std::env::var_os("CKPTSIM_FUZZ_TRACE").is_some() {
            eprintln!("contract-exit {} {code:?}", args[0]);
        }
        code.map_err(|e| TestCaseError::fail(format!("ckptsim {}: {e}", args.join(" "))))?;
    }
}

/// The files that once hung or ran out of memory, named directly.
#[test]
fn fifos_and_devices_are_refused_at_once() {
    let f = files();
    let fifo = f.dir.join("fifo").display().to_string();
    for args in [
        vec!["run", fifo.as_str()],
        vec!["run", "/dev/zero"],
        vec!["merge", "/dev/zero"],
        vec!["sweep", fifo.as_str(), "--seeds", "0..1"],
        vec!["stalls", "--cases", "1", "--notes", fifo.as_str()],
    ] {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        assert_eq!(invoke(&args), Ok(2), "{args:?}");
    }
}
