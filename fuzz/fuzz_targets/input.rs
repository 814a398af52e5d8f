//! A network input file (MNIST IDX, PNG or NumPy .npy) for a model of a few shapes: an error
//! or exactly as many values as the model takes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_nn::data::Normalise;
use tessera_nn::input::parse;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    let shapes: [&[usize]; 4] = [&[1, 4, 4], &[3, 2, 2], &[16], &[1, 28, 28]];
    let shape = shapes[usize::from(pick & 3)];
    let index = usize::from(pick >> 2);
    if let Ok(values) = parse(file, "fuzz", index, shape, Normalise::MNIST) {
        assert_eq!(values.len(), shape.iter().product::<usize>());
    }
});
