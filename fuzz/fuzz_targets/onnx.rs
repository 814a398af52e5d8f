//! An ONNX model: import (onnx-ir behind a panic guard, then the layer checks), and for what
//! imports, the stripped architecture, which must import to the same shapes, and the compiled
//! private-inference program.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_nn::fixed::Fixed;
use tessera_nn::secure::{Output, Protocol, compile};
use tessera_nn::{import, strip};

fuzz_target!(|data: &[u8]| {
    let Ok(model) = import::from_bytes(data, "fuzz") else {
        return;
    };
    if let Ok(arch) = strip::strip(data, "fuzz") {
        let stripped = import::from_bytes(&arch, "stripped").expect("a stripped model imports");
        assert_eq!(stripped.shapes, model.shapes);
    }
    // Small models only: the program's size follows the model's, which the file bounds.
    if model
        .shapes
        .iter()
        .map(|s| s.iter().product::<usize>())
        .sum::<usize>()
        < 1 << 16
    {
        if let Some(fixed) = Fixed::new(32, 10) {
            let _ = compile(&model, fixed, Protocol::AB, Output::Class);
        }
    }
});
