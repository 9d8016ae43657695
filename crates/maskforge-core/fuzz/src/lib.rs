//! The bodies of maskforge-core's fuzz targets, shared by the libFuzzer binaries under
//! `fuzz_targets/` and by the stable replay of the committed corpora
//! (`crates/maskforge-core/tests/fuzz_corpora.rs`).

#[path = "targets.rs"]
pub mod targets;
