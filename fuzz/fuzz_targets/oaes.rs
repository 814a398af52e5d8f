//! An oblivious-AES pre-processing file: the input with its own SHA-256 digest appended (so
//! that parsing goes past the digest check), which must load with every part in bounds or
//! fail with an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use tessera_aes::Material;
use tessera_aes::protocol::Tables;
use tessera_aes::rep::Rep;

fuzz_target!(|data: &[u8]| {
    let mut file = data.to_vec();
    file.extend_from_slice(&Sha256::digest(data));
    let Ok(m) = Material::from_bytes(file, "fuzz") else {
        return;
    };
    let shape = m.header().shape;
    let _ = (m.alpha(), m.input_mask());
    let mut rep = Rep::ZERO;
    let mut scratch = Vec::new();
    m.add_reps(&[0, shape.reps() - 1], &mut rep, &mut scratch);
    if shape.protocol.tables() == Tables::Bytes {
        let me = m.header().party;
        for l in (0..shape.parties).filter(|&l| l != me) {
            assert_eq!(m.pair_key(l).len(), 8);
        }
        assert_eq!(m.entry(shape.entries() - 1).len(), shape.entry_bytes());
    }
});
