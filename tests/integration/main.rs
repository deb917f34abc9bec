//! Integration tests: one binary, real PostgreSQL instances started through tidebench's own
//! `instance` code, in temp dirs on free ports.

mod support;
