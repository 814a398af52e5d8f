//! A compiled circuit file (`tessera circuit compile`) as a user may hand it over, damaged or
//! edited by someone who knows the format: the fuzzer's bytes follow the magic and are sealed
//! with a right checksum, so the header's checks and the records' are reached, not only the
//! checksum. Reading it in windows and whole must give an error or a result, never a panic,
//! and never allocate for gates or wires the file only declares (run with
//! `-malloc_limit_mb=1024`); a result read in windows is the result read whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_circuit::bristol::read_file;
use tessera_circuit::bristol::stream::{Streamed, compiled};

fuzz_target!(|data: &[u8]| {
    let mut h = blake3::Hasher::new_derive_key(compiled::CHECKSUM_CONTEXT);
    h.update(data);
    let mut bytes = compiled::MAGIC.to_vec();
    bytes.extend_from_slice(data);
    bytes.extend_from_slice(h.finalize().as_bytes());
    let Ok(file) = tempfile::NamedTempFile::new() else {
        return;
    };
    if std::fs::write(file.path(), &bytes).is_err() {
        return;
    }
    let whole = read_file(file.path());
    let Ok(streamed) = Streamed::open(file.path(), 7) else {
        assert!(whole.is_err());
        return;
    };
    let inputs: Vec<Vec<bool>> = (streamed.inputs().iter())
        .map(|&w| vec![true; w as usize])
        .collect();
    let windows = streamed.evaluate(&inputs);
    if let (Ok(outputs), Ok((circuit, _))) = (&windows, &whole) {
        assert_eq!(
            outputs,
            &tessera_circuit::eval::evaluate(circuit, &inputs).expect("a valid circuit")
        );
    }
});
