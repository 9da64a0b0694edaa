//! proptest strategies (being written).
