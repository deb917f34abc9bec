//! Why the driver could not run its clients: a session that would not open, a thread that
//! would not start, an interval the sink could not take; and why a plan's shares cannot be
//! laid out as decks. (The transactions' own errors are
//! data, counted in [`super::errors`]; these stop the run.) The lower layer's error stays
//! each variant's `source()`.

use std::time::Duration;

use crate::results::ResultsError;

#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// A client's session to a target could not be opened; the server's or the socket's
    /// answer is the source.
    #[error(
        "cannot connect to target {target}; `tidebench target check TARGET` tries one session \
         alone and says where it lands"
    )]
    Connect {
        target: String,
        #[source]
        source: pgwire::Error,
    },
    /// The OS refused another thread.
    #[error("cannot start a driver thread; use fewer threads (-j) or raise the process limit")]
    Spawn(#[source] std::io::Error),
    /// A driver thread could not set up its event loop (epoll, eventfd).
    #[error(
        "cannot start a driver thread's loop; raise the open files limit (ulimit -n) or use \
         fewer threads (-j)"
    )]
    Loop(#[source] std::io::Error),
    /// The task waiting for the threads to connect panicked or was cancelled: a defect.
    #[error("waiting for the driver threads to connect failed; please report it")]
    Waiting(#[source] tokio::task::JoinError),
    /// The interval sink refused an interval (the results dir cannot be written).
    #[error(
        "the run's results could not be collected: the interval at {:.1} s was not written",
        .start.as_secs_f64()
    )]
    Interval {
        start: Duration,
        #[source]
        source: ResultsError,
    },
}

/// Why weights cannot be dealt as a deck of cards.
#[derive(Debug, thiserror::Error)]
pub enum DeckError {
    #[error("weights must be zero or positive numbers")]
    NotPositive,
    #[error("at least one weight must be above zero")]
    AllZero,
    #[error("deck_size must be at least 1")]
    NoCards,
}

/// Why the clients cannot be laid out over a plan's groups and sets: a phase whose shares or
/// mix make no deck (the deck's error is the source and says which setting to change).
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error("phase '{phase}': the groups' shares make no deck")]
    Shares {
        phase: String,
        #[source]
        source: DeckError,
    },
    #[error("phase '{phase}' mix for group {group}: the transaction weights make no deck")]
    Mix {
        phase: String,
        group: usize,
        #[source]
        source: DeckError,
    },
}
