//! The libfabric backend (cargo feature `ofi`).

mod ffi;
