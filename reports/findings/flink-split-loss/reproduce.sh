#!/bin/sh
# Runs the job of this finding again on Flink: export/ holds its generated
# class, records and expected output; the classes every export shares,
# run.sh and the logging setup come from a fresh export of any scenario.
#
#   sh reports/findings/flink-split-loss/reproduce.sh   # then: ckptsim flink-check /tmp/flink-split-loss
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${1:-/tmp/flink-split-loss}
cargo build --release --manifest-path "$root/Cargo.toml" >/dev/null 2>&1
rm -rf "$work" "$work.shared"
"$root/target/release/ckptsim" flink-export "$root/scenarios/tiny.toml" --out "$work.shared" >/dev/null
cp -r "$here/export" "$work"
for f in "$work.shared"/java/*.java; do
    [ "$(basename "$f")" = CkptsimJob.java ] || cp "$f" "$work/java/"
done
cp "$work.shared/run.sh" "$work.shared/log4j2.properties" "$work/"
sh "$work/run.sh"
"$root/target/release/ckptsim" flink-check "$work"
