//! Being written (issue 11).
