//! Scenario → TOML (being written).
