//! Traces (being written).
