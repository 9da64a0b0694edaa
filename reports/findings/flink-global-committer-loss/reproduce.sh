#!/bin/sh
# Runs the exported job of this finding N times on Flink (run.sh fetches
# the release: CKPTSIM_FLINK_VERSION, default 2.3.0) and tallies
# flink-check's verdicts. The job: tests/regressions/flink-global-committer-final-loss.toml
# (a Sink V2 sink with a global committer, no crash), seed 1.
#
#   sh reports/findings/flink-global-committer-loss/reproduce.sh [N] [aligned|unaligned]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
n=${1:-10}
alg=${2:-aligned}
work=${TMPDIR:-/tmp}/flink-global-committer-loss
bin="$root/target/release/ckptsim"
cargo build --release --manifest-path "$root/Cargo.toml" >/dev/null 2>&1
lost=0
i=0
while [ "$i" -lt "$n" ]; do
    rm -rf "$work"
    "$bin" flink-export "$root/tests/regressions/flink-global-committer-final-loss.toml" \
        --seed 1 --algorithm "$alg" --out "$work" >/dev/null
    sh "$work/run.sh" >/dev/null 2>&1
    if "$bin" flink-check "$work" >"$work.check" 2>&1; then
        echo "run $i: pass"
    else
        lost=$((lost + 1))
        echo "run $i: $(grep -m1 'FAIL' "$work.check")"
    fi
    i=$((i + 1))
done
echo "$alg: $lost of $n runs lost records"
