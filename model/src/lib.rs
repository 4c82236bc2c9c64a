//! Placeholder: the model is being written.
