//! The symbolic integer engine (see ARCHITECTURE.md): knows nothing of tensors or graphs.
