//! The drop-in's refusals: pgbench's message for a command line it will not run, and whether
//! pgbench adds its `Try "--help"` hint. Every refusal exits 1, as pgbench's usage errors.

/// A refusal: pgbench's message, and whether pgbench adds its `Try "--help"` hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub hint: bool,
    /// getopt's own message (an unknown option, a missing value): glibc prints it after the
    /// program's name with no `error: `.
    pub getopt: bool,
}

/// A refusal in pgbench's words, without the hint.
pub fn refuse(message: impl Into<String>) -> Refusal {
    Refusal {
        message: message.into(),
        hint: false,
        getopt: false,
    }
}

/// The refusal of an option tidebench has no counterpart for (yet).
pub fn not_supported(spelled: &str) -> Refusal {
    refuse(format!(
        "option {spelled} is not supported yet (`tidebench pgbench --help` lists what is)"
    ))
}
