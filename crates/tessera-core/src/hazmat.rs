//! Kernels for the garbling engine and the OT providers, not for protocol code: the slot
//! array's label and gate kernels and the garbling hash ([`SlotGates`], [`Labels`],
//! [`SlotReader`], [`OutputWriter`], [`GateHash`]), free-XOR steps over a slot array
//! ([`SlotSteps`]), sparse GF(2) products for Ferret's LPN ([`sparse`]), constant-time writes
//! at a secret position for its GGM trees ([`select`]), cache hints ([`hint`]) and the vector
//! instruction set they run on ([`Simd`]). They check lengths, not meaning: a wrong slot, a
//! reused tweak or a leaked offset breaks security without an error. Protocols take the
//! engines built on them (`tessera-garble`, `tessera-ot`).

pub use crate::hash::GateHash;
pub use crate::simd::Simd;
pub use crate::slots::{Labels, OutputWriter, SlotGates, SlotReader};
pub use crate::steps::SlotSteps;

/// Sparse GF(2) matrix products over blocks (Ferret's LPN encoding).
pub mod sparse {
    pub use crate::sparse::{MAX_D, accumulate, accumulate_with, column};
}

/// Constant-time writes at a secret position (Ferret's GGM trees).
pub mod select {
    pub use crate::select::{write_at, write_at_with};
}

/// Cache hints and huge-page buffers for table look-ups.
pub mod hint {
    pub use crate::hint::{huge_vec, prefetch, prefetch_value};
}
