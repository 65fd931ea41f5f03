//! Datasets: compressed sparse rows and seeded synthetic generators of the papers' shapes.
//! Readers for the real files (LIBSVM, CIFAR, ratings) and `datasets.lock` verification come
//! with the datasets work; experiments at quick scale run on the generators.

mod csr;
mod lock;
mod libsvm;
mod ratings;
mod synthetic;

pub use csr::CsrMatrix;
pub use lock::{pin_in_text, Checksum, Compression, DatasetEntry, DatasetLock};
pub use libsvm::{read_libsvm, write_libsvm};
pub use ratings::{Rating, RatingsShape};
pub use synthetic::{RandomDesign, Rcv1Shape, SparseClassification};
