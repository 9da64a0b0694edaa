#!/bin/sh
# Runs the exported jobs of reports/flink-real/README.md on real Flink and
# writes each `ckptsim flink-check` output (text and JSON) into runs/.
# Needs what run.sh needs (a JDK, python3 with pip); takes about 10 minutes.
#
#   sh reports/flink-real/regenerate.sh
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cargo build --release --manifest-path "$root/Cargo.toml" >/dev/null 2>&1
c="$root/target/release/ckptsim"
work=${CKPTSIM_FLINK_WORK:-/tmp/ckptsim-flink-real}
runs="$root/reports/flink-real/runs"
mkdir -p "$work" "$runs"

one() { # name, then flink-export's arguments
    name=$1
    shift
    rm -rf "$work/$name"
    "$c" flink-export "$@" --out "$work/$name" >/dev/null
    sh "$work/$name/run.sh" >"$work/$name.log" 2>&1
    "$c" flink-check "$work/$name" >"$runs/$name.txt" || true
    "$c" flink-check "$work/$name" --json >"$runs/$name.json" || true
    echo "$name: $(sed -n 1p "$runs/$name.txt")"
}

deadlock="$root/tests/regressions/unaligned-forced-alignment-deadlock.toml"
for a in unaligned aligned; do
    one "deadlock-$a" "$deadlock" --algorithm "$a" --repeat --duration 60s
    one "deadlock-$a-local" "$deadlock" --algorithm "$a" --repeat --duration 60s --local-channels
done
for a in aligned unaligned aligned-timeout; do
    one "checkpointing-time-flink-$a" "$root/scenarios/checkpointing-time-flink.toml" --algorithm "$a"
    one "checkpointing-time-flink-$a-local" "$root/scenarios/checkpointing-time-flink.toml" --algorithm "$a" --local-channels
    one "checkpointing-time-$a" "$root/scenarios/checkpointing-time.toml" --algorithm "$a"
done
one wordcount-7 "$root/scenarios/wordcount.toml" --seed 7
one sink-v2-crashes-0 "$root/tests/flink/sink-v2-crashes.toml" --seed 0
one mutant-writer-keeps-last-transaction "$root/tests/flink/sink-v2-crashes.toml" --seed 0 --mutant writer-keeps-last-transaction
one mutant-window-no-flush-at-end "$root/scenarios/checkmate.toml" --seed 0 --mutant window-no-flush-at-end
one mutant-source-offset-off-by-one "$root/scenarios/wordcount.toml" --seed 7 --mutant source-offset-off-by-one
one mutant-no-source-rewind "$root/scenarios/wordcount.toml" --seed 7 --mutant no-source-rewind
one mutant-sink-ack-without-flush "$root/scenarios/batching.toml" --seed 34 --mutant sink-ack-without-flush
one upsert-1 "$root/scenarios/upsert.toml" --seed 1
for s in faults flip27 flip27-regions sink-v2 uneven; do
    one "drop-faults-$s" "$root/scenarios/$s.toml" --drop-faults
done
one mutant-upsert-batch-reordered "$root/scenarios/upsert.toml" --seed 1 --mutant upsert-batch-reordered
