//! Datasets: `datasets.lock` and the local cache (download with resume, checksum, unpack),
//! readers of the real files, compressed sparse rows, and seeded synthetic generators of the
//! papers' shapes; experiments at quick scale run on the generators.

mod cache;
mod csr;
mod digest;
mod download;
mod libsvm;
mod lock;
mod ratings;
mod synthetic;
mod unpack;

pub use cache::{CacheStatus, DatasetCache, FetchReport};
pub use csr::CsrMatrix;
pub use digest::{digest_file, FileDigest};
pub use libsvm::{read_libsvm, write_libsvm};
pub use lock::{pin_in_text, Checksum, Compression, DatasetEntry, DatasetLock};
pub use ratings::{Rating, RatingsShape};
pub use synthetic::{RandomDesign, Rcv1Shape, SparseClassification};
