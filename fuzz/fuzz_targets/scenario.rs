//! Any bytes as a scenario file: refused, or run (plainly and in swarm
//! mode) within bounds. A panic or abort is a bug.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = ckptsim::fuzz::scenario_text(data);
});
