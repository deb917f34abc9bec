//! How a transaction ended, as data: the driver and the reports never look at error text.
//!
//! Accounting invariant (DESIGN.md): total = committed + expected rollbacks + failed (+ skipped);
//! retries are counted apart and do not add to the total.

use serde::{Deserialize, Serialize};

/// Failure classes, decided from SQLSTATE (or from the socket when there is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    Serialization,
    Deadlock,
    Connection,
    Timeout,
    Other,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 5] = [
        ErrorClass::Serialization,
        ErrorClass::Deadlock,
        ErrorClass::Connection,
        ErrorClass::Timeout,
        ErrorClass::Other,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Serialization => "serialization",
            ErrorClass::Deadlock => "deadlock",
            ErrorClass::Connection => "connection",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Other => "other",
        }
    }

    /// Class of a server error from its SQLSTATE (PostgreSQL appendix A).
    pub fn from_sqlstate(code: &[u8; 5]) -> ErrorClass {
        match code {
            b"40001" => ErrorClass::Serialization,
            b"40P01" => ErrorClass::Deadlock,
            // 57014 query_canceled covers statement_timeout; 55P03 lock_not_available covers lock_timeout.
            b"57014" | b"55P03" | b"25P03" => ErrorClass::Timeout,
            // Class 08 (connection exception) and 57P0x (admin/crash shutdown, cannot connect now).
            [b'0', b'8', ..] | [b'5', b'7', b'P', ..] => ErrorClass::Connection,
            _ => ErrorClass::Other,
        }
    }

    /// The classes pgbench 15 retries (`--max-tries`): serialization failures and deadlocks.
    pub fn is_retryable(self) -> bool {
        matches!(self, ErrorClass::Serialization | ErrorClass::Deadlock)
    }

    /// Class of any error a session can return.
    pub fn of(err: &pgwire::Error) -> ErrorClass {
        match err.sqlstate() {
            Some(code) => ErrorClass::from_sqlstate(code),
            None => match err.kind {
                pgwire::ErrorKind::Timeout => ErrorClass::Timeout,
                pgwire::ErrorKind::Client(_) => ErrorClass::Other,
                _ => ErrorClass::Connection,
            },
        }
    }
}

/// The end of one transaction, after any retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// Rolled back on purpose by the workload (TPC-C's 1 % of New-Order): not a failure.
    ExpectedRollback,
    Failed(ErrorClass),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_map_to_classes() {
        assert_eq!(
            ErrorClass::from_sqlstate(b"40001"),
            ErrorClass::Serialization
        );
        assert_eq!(ErrorClass::from_sqlstate(b"40P01"), ErrorClass::Deadlock);
        assert_eq!(ErrorClass::from_sqlstate(b"08006"), ErrorClass::Connection);
        assert_eq!(ErrorClass::from_sqlstate(b"57P01"), ErrorClass::Connection);
        assert_eq!(ErrorClass::from_sqlstate(b"57014"), ErrorClass::Timeout);
        assert_eq!(ErrorClass::from_sqlstate(b"23505"), ErrorClass::Other);
        assert!(ErrorClass::Deadlock.is_retryable());
        assert!(!ErrorClass::Other.is_retryable());
    }
}
