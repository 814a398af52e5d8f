//! A hex input value: digits only, exactly as many as the width needs, no bits past it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_circuit::eval::{bits_from_hex, bits_to_hex};

fuzz_target!(|data: &[u8]| {
    let Some((&w, text)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let width = u32::from(w) * 3;
    if let Ok(bits) = bits_from_hex(text, width) {
        assert_eq!(bits.len(), width as usize);
        // What parses prints back as the same digits (in lower case).
        assert_eq!(bits_to_hex(&bits), text.trim().to_ascii_lowercase());
    }
});
