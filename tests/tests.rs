//! The one integration-test binary. Each module is a chapter:
//!
//! - `scenario_errors`: malformed scenarios give clear, positioned errors.
//! - `scenario_docs`: docs/scenarios.md's key tables are generated from the
//!   schema.
//! - `scenario_format`: the writer's round trips and layout (from
//!   `scenario_sample`, a scenario setting every key).
//! - `scenario_rules`: the parser's rules on small files, and parsing never
//!   panicking.
//! - `cli`: the command line's output and exit codes.
//! - `compare_axes`: `compare --vary` given several times: one axis of
//!   every combination of their values.
//! - `determinism`: same seed, same fingerprint; different seeds differ.
//! - `seeds`: exactly-once over many seeds, with reachability evidence.
//! - `algorithms`: the barrier variants — exactly-once (or classified
//!   at-least-once), reachability, and their performance ordering.
//! - `mutants`: deliberate bugs are caught by the checkers.
//! - `snapshots`: insta snapshots of each shipped scenario's summary.
//! - `payloads`: records carry values of the user's own type, judged like
//!   their values.
//! - `user_operator`: a user-defined operator under the simulator.
//! - `order`: order-dependent user operators (a dedup, a count window) are
//!   judged correctly; their buggy variants are caught.
//! - `golden`: the random streams' values are pinned.
//! - `guided`: `sweep --swarm --guided`: batches, re-used draws, replay
//!   lines with `--draw-seed` that reproduce a guided seed.
//! - `properties`: proptest over generated scenarios, every exactly-once
//!   variant.
//! - `traces`: the JSON-lines and Perfetto traces.
//! - `faults`: the richer fault model (restart strategies, lost
//!   notifications, storage faults, coordinator crashes, stragglers), each
//!   exactly-once over many seeds with reachability evidence.
//! - `flow`: producer-side blocking and resumes, queued triggers, the
//!   forced-alignment freeze.
//! - `bytes`: record and buffer sizes in bytes, channel-state writes timed
//!   at the storage's bandwidth, memory storage's size limit.
//! - `recovery`: recovered input channels and checkpointing during
//!   recovery, with the two ways Flink broke it.
//! - `exhaustive`: `ckptsim explore` runs every input order of a tiny job
//!   up to a bound, finds a bug the default schedule misses, and writes a
//!   schedule that replays alone.
//! - `cluster`: the Kubernetes Job and Slurm array recipes under `deploy/`
//!   run two shards here that merge into the unsharded summary.
//! - `coverage`: the coverage catalogue, docs/coverage.md generated from
//!   it, sweep tallies, merge, `--require-coverage`.
//! - `sweep`: sweeps, shards and merge, swarm mode, shrinking, panicking
//!   seeds, and the committed reproducers under `tests/regressions/`.
//! - `savepoints`: savepoints, retained checkpoints, rescaling, refusals.
//! - `targets`: random faults aimed at chosen operators and workers.
//! - `contract`: any command line, naming any file, exits 0, 1 or 2 in
//!   time: never a panic, a signal or a hang.
//! - `fuzz`: the fuzzer on stable Rust: generated and byte-mutated
//!   scenarios, byte-mutated and crafted savepoints, all refused or run
//!   within bounds; the inputs it found, replayed.
//! - `hostile`: crafted savepoint directories (lying values, edited
//!   metadata, FIFOs, devices) refused with exit 2, naming file and field.
//! - `snapshot_truth`: savepoints that contradict the external store they
//!   carry (offsets rewound below committed records, pre-committed
//!   transactions dropped, checkpoint ids beyond the snapshot's,
//!   transactions listed twice) refused with exit 2, naming file and field.
//! - `checks`: the check registry: every check in every verdict, no
//!   violation dropped.
//! - `judge`: the judge itself: savepoint requests always resolved, warnings
//!   for what a run did not test.
//! - `extremes`: extreme values in scenario files are refused or run, and
//!   never panic.
//! - `reports`: the qualitative claims of the reports under `reports/`, on
//!   small versions.
//! - `stalls`: the stall search over generated topologies with forced
//!   alignment: every stall is a shape `deadlock_risk` predicts, `aligned`
//!   never stalls, the command is deterministic.
//! - `structure`: the code and the docs as documented: the module layers in
//!   `sim/lib.rs` hold, the module map is complete, markdown links resolve.
//! - `examples`: the programs under `examples/` as their users run them: a
//!   user's own algorithms through every command of `cli::main_with`.
//! - `toy_algorithm`: an algorithm added from outside the registry (one file)
//!   runs like a built-in; a wrong one is caught.
//! - `toy_kind`: an operator kind added from outside the registry (one
//!   file) with broadcast state runs like a built-in, through crashes and
//!   rescaled savepoints.
//! - `chains`: operator chains: Flink's chaining rule, the same output as
//!   unchained, one task per chain as the unit of failure and notification.
//! - `sinkv2`: Sink V2 writer and committer: exactly-once chained, unchained,
//!   with a global committer and through a rescaled savepoint; its three
//!   historical bugs caught; its topology rules.
//! - `upsert`: the upsert sink repeats writes after a crash but its finished
//!   table converges (effectively-once); an out-of-order batch is caught.
//! - `flip27`: FLIP-27 sources with a split enumerator in an operator
//!   coordinator: exactly-once with crashes, a coordinator crash, lost
//!   events, region failovers and a rescaled savepoint; five historical
//!   bugs caught; the source's keys validated.
//! - `local_channels`: channels within a worker are local (no
//!   receiver-side buffers): less in flight, within 2× of Flink's local
//!   runs; exactly-once kept; the mutant that persists nothing of a local
//!   channel caught.
//! - `mailbox`: the task thread's mailbox: the split loss of Flink 2.1–2.3
//!   reproduced (unaligned on 2.1+ fails; aligned, aligned-timeout and 2.0
//!   pass; rarer with a faster chain); mails wait for a busy thread; the
//!   mailbox mutants caught.
//! - `flink`: `flink-export` for every shipped scenario (snapshot-tested)
//!   or its refusals; `flink-check` on a run recorded from Flink 2.3 and on
//!   copies broken on purpose; real Flink runs with `CKPTSIM_FLINK=1`.
//! - `flink_sweep`: `flink-sweep` classifies a recorded differential sweep
//!   without a JVM; its folder, lines and refusals; crashes exported at
//!   their events.
//! - `global_committer`: Sink V2's post-commit topology; the final
//!   committables lost on Flink 2.3 (FLINK-38614) and published on the
//!   development line; its rules and its export.
//! - `file_merging`: snapshot files merged into shared physical files,
//!   counted per file, re-registered on replaced workers; its mutants
//!   caught.
//! - `finishing`: tasks exit one by one after their own final checkpoint
//!   while the job checkpoints on (FLIP-147); a restored finished subtask
//!   stays finished; the finishing mutants caught; the recorded run of
//!   `finishing-sources` on Flink 2.3 passes.
//! - `opstate`: list state with split and union redistribution, and
//!   broadcast state, through crashes and rescaled savepoints; the list
//!   modes mixed up and an unsnapshotted broadcast table are caught.
//! - `outputs_security`: what ckptsim writes cannot be turned against its
//!   user: scenario text stays in one literal of an exported Java job (a
//!   lexer with javac's unicode-escape pass, and javac where installed);
//!   no command writes through a link planted in its output; FIFOs and
//!   devices are refused at once; summed counters saturate.
//! - `event_time`: watermarks among the records, through valves, into
//!   event-time windows judged exactly through crashes; late records; the
//!   watermarks check; the event-time mutants caught.
//! - `timers`: a keyed process function's event-time and processing-time
//!   timers through crashes and a rescaled savepoint; the timers check and
//!   its mutants.
//! - `alignment`: watermark alignment pauses and resumes splits through
//!   crashes, names a reader left paused, refuses malformed keys.
//! - `sessions`: session windows merging and the late-data side output
//!   through crashes; sliding windows and sessions through a stop-with-
//!   savepoint and a rescaled restore; their mutants caught; their keys
//!   refused.
//! - `triage`: failing seeds grouped by cause (the fault and recovery
//!   events before their first violation); `sweep --shrink-failures` writes
//!   one reproducer per cause that replays as printed.
//! - `checkpoint_files`: checkpoint storage as files: the incremental
//!   backend's shared runs, the shared-state registry, syncs and storage
//!   crashes, restores read back from files; their mutants caught.
//! - `changelog`: the changelog backend: log segments shared between
//!   checkpoints, materialization through the mailbox, restores that replay
//!   the tail, native savepoints; the rule that materialization keeps
//!   happening and the mutants it catches.
//! - `restore_modes`: restores in `claim` and `no-claim` mode, at a new
//!   parallelism, with every state backend; their mutants caught.
//! - `txlog`: the transactional log as a sink: Flink's Kafka sink
//!   exactly-once under crashes with both namings of its transactional ids,
//!   at-least-once and none; transactions left open and commits lost to the
//!   broker's timeout named; the log sink's mutants caught.
//! - `txlog_source`: the transactional log as a source: Flink's Kafka
//!   source reading a topic a sink of the same job writes, end to end; its
//!   isolation levels, offsets committed on completion, and its rules.
//! - `txlog_broker`: the log's brokers under faults: asynchronous
//!   producers retrying until their delivery timeout, flushes that block
//!   the task, expired requests that fail it; the mutants they catch.
//! - `txlog_coordinator`: the log's transaction coordinator under faults:
//!   calls that block the task until it answers, commits made again, the
//!   loss when an outage outlasts the transaction timeout; its mutant.

mod common;

mod algorithms;
mod alignment;
mod bytes;
mod chains;
mod changelog;
mod checkpoint_files;
mod checks;
mod cli;
mod cluster;
mod compare_axes;
mod contract;
mod coverage;
mod determinism;
mod event_time;
mod examples;
mod exhaustive;
mod extremes;
mod faults;
mod file_merging;
mod finishing;
mod flink;
mod flink_event_time;
mod flink_keys;
mod flink_sweep;
mod flip27;
mod flow;
mod fuzz;
mod global_committer;
mod golden;
mod guided;
mod hostile;
mod iterate;
mod judge;
mod limits;
mod local_channels;
mod mailbox;
mod mutants;
mod opstate;
mod order;
mod outputs_security;
mod payloads;
mod properties;
mod recovery;
mod reports;
mod restore_modes;
mod savepoints;
mod scenario_docs;
mod scenario_errors;
mod scenario_format;
mod scenario_rules;
mod scenario_sample;
mod seeds;
mod sessions;
mod sinkv2;
mod snapshot_truth;
mod snapshots;
mod stalls;
mod structure;
mod sweep;
mod targets;
mod timers;
mod toy_algorithm;
mod toy_kind;
mod traces;
mod triage;
mod txlog;
mod txlog_broker;
mod txlog_coordinator;
mod txlog_rescale;
mod txlog_source;
mod uncoordinated;
mod upsert;
mod user_operator;
