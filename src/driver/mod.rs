//! The driver: client tasks sharded over single-threaded runtimes, ticks, progress, cancellation.
