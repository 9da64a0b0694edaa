#!/bin/sh
# Regenerates the committed reproducers: for each mutant, the first failing
# seed of its scenario is shrunk. Run after a change that alters simulation
# (fingerprints), then review the diff. From the repository root:
#   sh tests/regressions/regenerate.sh
set -e
bin=target/release/ckptsim
cargo build --release --quiet
shrink() { # scenario algorithm mutant
    seed=$($bin sweep "scenarios/$1.toml" --seeds 0..200 --algorithm "$2" --mutant "$3" --json 2>/dev/null |
        sed -n 's/.*"failures":\[{"seed":\([0-9]*\).*/\1/p')
    [ -n "$seed" ] || { echo "no failing seed for $3 on $1" >&2; exit 1; }
    $bin shrink "scenarios/$1.toml" --seed "$seed" --algorithm "$2" --mutant "$3" \
        --out "tests/regressions/$3.toml"
}
shrink alignment-crash aligned no-source-rewind
shrink alignment-crash aligned aligned-priority-barrier
shrink alignment-crash aligned complete-with-missing-ack
shrink backpressure aligned aligned-no-block
shrink wordcount aligned sink-commit-on-barrier
shrink backpressure unaligned unaligned-drop-inflight
shrink backpressure unaligned unaligned-late-snapshot
shrink backpressure aligned-timeout timeout-switch-no-capture
shrink wordcount aligned final-notification-not-awaited
shrink timeouts aligned abort-keeps-blocked
shrink timeouts aligned skip-cancel-marker
shrink backpressure unaligned checkpoint-during-recovery
shrink wordcount aligned simulator-panic
shrink iterate-finishing unaligned exit-inside-barrier-step
# The split loss of Flink 2.1–2.3 (no mutant: the model's own mailbox).
$bin shrink scenarios/flip27-split-loss.toml --seed 1 --algorithm unaligned \
    --out tests/regressions/flink-split-loss.toml
# FLINK-38614, the final committables lost on Flink 2.3 (no mutant: the
# model's own end of data; the shipped scenario runs the open fix, "next").
v=$(mktemp)
# (Without its random crashes: the loss needs none.)
sed -e 's/^flink_version = "next"$/flink_version = "2.3"/' \
    -e 's/on the development line; random crashes/on Flink 2.3/' \
    -e '/^\[faults.random\]$/,/^$/d' scenarios/sink-v2-global.toml >"$v"
$bin shrink "$v" --seed 1 --algorithm aligned \
    --out tests/regressions/flink-global-committer-final-loss.toml
sed -i "s|^# From: $v |# From: scenarios/sink-v2-global.toml with flink_version = \"2.3\", |" \
    tests/regressions/flink-global-committer-final-loss.toml
rm -f "$v"
# The global committer's stall when writers end at different checkpoints
# (Flink 2.0–2.3, and the development line: no mutant, the model's own
# global committer): the same scenario with one source partition shorter.
v=$(mktemp)
sed -e 's/^records_per_partition = 4000$/partition_records = [1000, 4000]/' \
    -e 's/on the development line; random crashes/writers ending at different checkpoints/' \
    -e '/^\[faults.random\]$/,/^$/d' scenarios/sink-v2-global.toml >"$v"
$bin shrink "$v" --seed 1 --algorithm aligned \
    --out tests/regressions/flink-global-committer-stall.toml
sed -i "s|^# From: $v |# From: scenarios/sink-v2-global.toml with partition_records = [1000, 4000], |" \
    tests/regressions/flink-global-committer-stall.toml
rm -f "$v"
