//! Fuzz target for the configuration loader: mutated shipped configurations go through the
//! TOML parser, the range check (experiments::harness::config_ranges) and the library's config structs;
//! any of them may refuse an input, none may panic. A short bounded pass runs in `make test`;
//! `make fuzz` (FUZZ_SECONDS=600) runs it for ten minutes.

use bench_core::fuzz;
use experiments::harness::config_ranges::check;
use experiments::papers::hop::compare::CompareConfig;
use experiments::papers::r#async::cds::CdsConfig;
use std::path::Path;
use std::time::Duration;

#[test]
fn fuzz_config_loader() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    seeds.sort();
    fuzz::check("config", &seeds, Duration::from_secs(2), |b| {
        let Ok(text) = std::str::from_utf8(b) else {
            return;
        };
        if let Ok(v) = toml::from_str::<toml::Value>(text) {
            let _ = check(&v);
        }
        if let Ok(c) = toml::from_str::<CdsConfig>(text) {
            let _ = c.validate();
        }
        let _ = toml::from_str::<CompareConfig>(text);
    });
}
