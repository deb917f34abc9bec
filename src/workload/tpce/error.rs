//! What only tpce's load can get wrong, wrapped whole by [`crate::workload::WorkloadError::Tpce`];
//! the failures every loader shares (a server error, tables already there, a load missing)
//! are [`crate::workload::WorkloadError`]'s own.

use super::scale::ScaleError;

/// Why a tpce load cannot go ahead.
#[derive(Debug, thiserror::Error)]
pub enum TpceError {
    /// The load's knobs do not make a database (the message names the flag and the bound).
    #[error(transparent)]
    Scale(#[from] ScaleError),
}
