#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| maskforge_core_fuzz::targets::pattern(data));
