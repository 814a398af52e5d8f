//! A key or certificate file's contents: an error or a key, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_net::tls::{parse_certificate, parse_private_key};

fuzz_target!(|data: &[u8]| {
    let _ = parse_certificate(data);
    let _ = parse_private_key(data);
});
