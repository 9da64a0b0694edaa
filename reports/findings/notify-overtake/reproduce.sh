#!/bin/sh
# Exports this finding's scenario for Flink 2.0 and 2.3, runs each export
# TRIALS times on its release (seeds 1..TRIALS: the records and the crash
# differ per seed), checks each run, and reads each run's log for the
# order of triggers and notifications (analyze.py). One summary per run
# under OUT/<release>-<seed>/summary.txt; about 20 s of two cores per run.
#
#   sh reports/findings/notify-overtake/reproduce.sh [OUT] [TRIALS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-/tmp/notify-overtake}
trials=${2:-5}
ckptsim="$root/target/release/ckptsim"
cargo build --release --manifest-path "$root/Cargo.toml" >/dev/null 2>&1
mkdir -p "$out"
# The 2.0 copy: the same job, asking for Flink 2.0's task thread (FIFO trigger).
sed 's/^\[checkpoint\]$/[checkpoint]\nflink_version = "2.0"/' "$here/notify-overtake.toml" >"$out/notify-overtake-2.0.toml"
for release in 2.0.2 2.3.0; do
    case $release in
    2.0.*) scenario="$out/notify-overtake-2.0.toml" ;;
    *) scenario="$here/notify-overtake.toml" ;;
    esac
    seed=1
    while [ "$seed" -le "$trials" ]; do
        dir="$out/$release-$seed"
        rm -rf "$dir"
        "$ckptsim" flink-export "$scenario" --seed "$seed" --flink-release "${release%.*}" --out "$dir" >/dev/null
        # The task thread's order: when a trigger or notification reaches
        # the task (TaskExecutor) and when it runs (StreamTask), both DEBUG.
        printf '%s\n' \
            'logger.st.name = org.apache.flink.streaming.runtime.tasks.StreamTask' \
            'logger.st.level = DEBUG' \
            'logger.te.name = org.apache.flink.runtime.taskexecutor.TaskExecutor' \
            'logger.te.level = DEBUG' >>"$dir/log4j2.properties"
        CKPTSIM_FLINK_VERSION=$release sh "$dir/run.sh" >"$dir/run.out" 2>&1 || true
        {
            "$ckptsim" flink-check "$dir" || true
            python3 "$here/analyze.py" "$dir"
        } >"$dir/summary.txt" 2>&1
        seed=$((seed + 1))
    done
done
grep -H -e '^verdict' -e '^overtakes' -e '^notifications_overtaken' -e '^commit_latency' "$out"/*/summary.txt
