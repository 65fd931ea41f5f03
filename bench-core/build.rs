//! Build script: with the `ofi` feature, Rust bindings to the installed libfabric, generated
//! by bindgen from its headers (found by pkg-config, version 1.17 or later). Without it,
//! nothing: the default build needs no system library.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "ofi")]
    ofi::generate();
}

#[cfg(feature = "ofi")]
mod ofi {
    use std::path::PathBuf;

    /// The headers the backend calls into: the fabric, domain, endpoint, connection
    /// management (addresses), RMA, event queue and error declarations.
    const HEADERS: [&str; 7] = [
        "rdma/fabric.h",
        "rdma/fi_domain.h",
        "rdma/fi_endpoint.h",
        "rdma/fi_cm.h",
        "rdma/fi_rma.h",
        "rdma/fi_eq.h",
        "rdma/fi_errno.h",
    ];

    pub fn generate() {
        let lib = match pkg_config::Config::new()
            .atleast_version("1.17")
            .probe("libfabric")
        {
            Ok(lib) => lib,
            Err(e) => panic!(
                "the ofi feature needs libfabric 1.17 or later, found by pkg-config \
                 (Debian: apt-get install libfabric-dev): {e}"
            ),
        };
        let header: String = HEADERS
            .iter()
            .map(|h| format!("#include <{h}>\n"))
            .collect();
        let mut builder = bindgen::Builder::default()
            .header_contents("ofi.h", &header)
            .allowlist_function("fi_.*")
            .allowlist_type("fi_.*|fid.*")
            .allowlist_var("FI_.*|FID_.*")
            .derive_default(true)
            .layout_tests(false)
            .generate_comments(false)
            // The static-inline wrappers (fi_writemsg, fi_cq_read, ...) are called through
            // the ops tables they read, so no C shim is built.
            .generate_inline_functions(false);
        for path in &lib.include_paths {
            builder = builder.clang_arg(format!("-I{}", path.display()));
        }
        let bindings = builder
            .generate()
            .unwrap_or_else(|e| panic!("bindgen over libfabric's headers failed: {e}"));
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("ofi.rs");
        bindings
            .write_to_file(&out)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
    }
}
