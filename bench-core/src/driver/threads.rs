//! Threads driver (in progress).
