//! A circuit file as a peer or a user may hand it over: the reader, its validation, every
//! analysis and both kinds of plan must give an error or a result, never a panic, and never
//! allocate for wires the file only declares (run with `-malloc_limit_mb=1024`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_circuit::analysis::{and_depth, and_gates_per_layer, gate_counts, max_live_wires};
use tessera_circuit::bristol::parse_reader;
use tessera_garble::{Batching, Plan, XorGates};

fuzz_target!(|data: &[u8]| {
    if let Ok((circuit, _)) = parse_reader(data, data.len() as u64) {
        assert!(circuit.validate().is_ok());
        let _ = gate_counts(&circuit);
        let _ = and_depth(&circuit);
        let _ = and_gates_per_layer(&circuit);
        let _ = max_live_wires(&circuit);
        for xor in [XorGates::Free, XorGates::Garbled] {
            for batching in [Batching::DYNAMIC, Batching::Layered] {
                let plan = Plan::with_xor(&circuit, batching, xor);
                assert_eq!(plan.num_inputs(), circuit.num_input_wires() as usize);
            }
        }
        let inputs: Vec<Vec<bool>> = circuit
            .inputs
            .iter()
            .map(|&w| vec![true; w as usize])
            .collect();
        assert!(tessera_circuit::eval::evaluate(&circuit, &inputs).is_ok());
    }
});
