#!/bin/sh
# Regenerates every report under reports/ (run from the repository root).
set -e
cargo build --release --quiet
# Found on PATH, the program names itself `ckptsim` in the commands the
# reports print (a path would name that path).
PATH="$PWD/target/release:$PATH"
c=ckptsim
$c compare scenarios/checkpointing-time.toml --algorithms aligned,unaligned,aligned-timeout --seeds 0..10 --out reports/aligned-vs-unaligned-backpressure --notes reports/notes/aligned-vs-unaligned-backpressure.md
$c compare scenarios/checkpointing-time.toml --algorithms aligned,unaligned --seeds 0..5 --vary 'operators.sink.cost=200us,1ms,10ms' --out reports/alignment-vs-record-cost --notes reports/notes/alignment-vs-record-cost.md
$c compare scenarios/throughput.toml --algorithms none,aligned,stop-the-world --seeds 0..5 --vary 'checkpoint.interval=1s,500ms,200ms,100ms,50ms,20ms' --out reports/stop-the-world-vs-aligned --notes reports/notes/stop-the-world-vs-aligned.md
$c compare scenarios/checkpointing-time.toml --algorithms aligned,unaligned --seeds 0..5 --vary 'network.buffer_credits=1,2,4,8,16' --out reports/unaligned-size-vs-credits --notes reports/notes/unaligned-size-vs-credits.md
$c compare scenarios/checkpointing-time-flink.toml --algorithms aligned,unaligned,aligned-timeout --seeds 0..10 --out reports/flink-defaults-fidelity --notes reports/notes/flink-defaults-fidelity.md
$c compare scenarios/checkpointing-time-flink.toml --algorithms aligned-timeout --seeds 0..10 --vary 'checkpoint.alignment_timeout=50ms,100ms,200ms,500ms,1s,2s' --out reports/flink-defaults-alignment-timeout --notes reports/notes/flink-defaults-alignment-timeout.md
$c compare scenarios/event-time-backpressure.toml --algorithms aligned,unaligned,aligned-timeout --seeds 0..5 --vary 'network.buffer_credits=1,4,16' --out reports/watermark-lag-backpressure --notes reports/notes/watermark-lag-backpressure.md
$c compare scenarios/checkmate.toml --algorithms aligned,unaligned,uncoordinated,cic-bcs,cic-hmnr --seeds 0..10 --vary 'operators.source.hot_key_percent=0,50,90' --out reports/checkmate --notes reports/notes/checkmate.md
$c compare scenarios/iterate.toml --algorithms aligned,unaligned,uncoordinated,cic-bcs,cic-hmnr --seeds 0..10 --out reports/checkmate-cyclic --notes reports/notes/checkmate-cyclic.md
$c compare scenarios/state-backends.toml --algorithms aligned --seeds 0..2 --vary 'checkpoint.state_backend=hashmap,incremental,changelog' --vary 'operators.source.keys=10000,1000000' --vary 'operators.source.cost=20us,60us' --out reports/state-backends --notes reports/notes/state-backends.md
$c compare scenarios/log-timeout.toml --algorithms aligned,unaligned,aligned-timeout,chandy-lamport,stop-the-world --seeds 0..10 --vary 'checkpoint.interval=5ms,10ms,20ms,50ms' --out reports/log-latency --notes reports/notes/log-latency.md
$c compare scenarios/log-timeout.toml --algorithms aligned --seeds 0..10 --vary 'checkpoint.interval=10ms,20ms,40ms' --vary 'operators.out.transaction_timeout=5ms,15ms,25ms,35ms,45ms,55ms,65ms' --out reports/log-timeout --notes reports/notes/log-timeout.md
$c stalls --cases 200 --seed 0 --algorithms unaligned,aligned-timeout --explain tests/regressions/unaligned-forced-alignment-deadlock.toml --notes reports/notes/unaligned-forced-alignment-deadlock.md --out reports/unaligned-forced-alignment-deadlock
# Every scenario under every exactly-once algorithm, plain and guided swarm: about 35 minutes on two cores.
$c coverage-report scenarios --seeds 0..150 --out reports/coverage --notes reports/notes/coverage.md
