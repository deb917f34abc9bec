//! Shared test harness: temp homes, managed instances, running the real binary.
