//! Placeholder: the manager is being written.
