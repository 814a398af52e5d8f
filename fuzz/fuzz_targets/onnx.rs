//! An ONNX model: import (every size checked against a ceiling), and for what imports, the
//! stripped architecture, which must import to the same shapes, and the compiled
//! private-inference program of both, whatever their size within the ceiling. The ceiling is
//! the crate's own scaled down (tensors of 2^20 elements, 2^22 in all) so that compiling stays
//! within the 1 GiB allocation limit CI fuzzes under; the structure of the checks is the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_nn::fixed::Fixed;
use tessera_nn::model::{CEILING, Ceiling};
use tessera_nn::secure::{Options, Output, Protocol, compile};
use tessera_nn::{import, strip};

const FUZZ: Ceiling = Ceiling {
    tensor_elements: 1 << 20,
    model_elements: 1 << 22,
    ..CEILING
};

fuzz_target!(|data: &[u8]| {
    let Ok(proto) = strip::parse(data, "fuzz") else {
        return;
    };
    let Ok(model) = import::from_proto(&proto, &FUZZ) else {
        return;
    };
    let fixed = Fixed::new(32, 10).expect("ℓ = 32, f = 10 is a fixed point");
    let class = Options {
        output: Output::Class,
        ..Options::new(Protocol::AB)
    };
    let _ = compile(&model, fixed, class);
    if let Ok(arch) = strip::strip(data, "fuzz") {
        let arch = strip::parse(&arch, "stripped").expect("a stripped model parses");
        let stripped = import::from_proto(&arch, &FUZZ).expect("a stripped model imports");
        assert_eq!(stripped.shapes, model.shapes);
        let _ = compile(&stripped, fixed, Options::new(Protocol::AB));
    }
});
