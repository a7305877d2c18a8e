//! CPU tensors on ndarray and the kernels that compute every tensor operation.
