//! Trace tests (being written).
