//! Datasets: `datasets.lock` and the local cache (download with resume, checksum, unpack),
//! readers of the real files, compressed sparse rows, and seeded synthetic generators of the
//! papers' shapes; experiments at quick scale run on the generators.

mod bag_of_words;
mod cache;
mod cifar;
mod csr;
mod digest;
mod download;
mod fast_float;
mod format;
mod image_twin;
mod libsvm;
mod lock;
mod ratings;
mod ratings_files;
mod sparse_dot;
mod synthetic;
mod twins;
mod unpack;

pub use bag_of_words::{read_bag_of_words, write_bag_of_words, BagOfWordsShape};
pub use cache::{CacheStatus, DatasetCache, FetchReport};
pub use cifar::{read_cifar, write_cifar, CifarImages, CifarShape, CIFAR_PIXELS};
pub use csr::CsrMatrix;
pub use digest::{digest_file, FileDigest};
pub use format::{detect_format, DataFormat, ALL_FORMATS};
pub use image_twin::{check_labels, ImageSet, ImageShape, CHANNELS};
pub use libsvm::{read_libsvm, write_libsvm};
pub use lock::{pin_in_text, Checksum, Compression, DatasetEntry, DatasetLock};
pub use ratings::{partition_by_user, seeded_shuffle, Rating, RatingsShape};
pub use ratings_files::{
    read_movielens, read_netflix_movie, read_ratings_dataset, write_movielens, RatingsData,
};
pub use sparse_dot::sparse_dot;
pub use synthetic::{RandomDesign, Rcv1Shape, SparseClassification};
pub use twins::Twin;
