//! The AES S-box as a Boolean circuit: the 113-gate straight-line program of Boyar, Peralta and
//! Calik (`SLP_AES_113`, Circuit Minimization Team, Yale; J. Boyar, R. Peralta, "A new
//! combinational logic minimization technique with applications to cryptology", SEA 2010):
//! 32 AND, 77 XOR and 4 XNOR gates.
//!
//! It is generic over [`BooleanOps`], so one text serves two masters: the constant-time
//! bitsliced `portable` AES backend (where a "bit" is a machine word holding one bit position of
//! many bytes) and, in `tessera-circuit`, the AES-128 circuit that garbling evaluates (where a
//! "bit" is a wire and each AND costs a garbled gate).

/// The three gates the S-box circuit is made of, over some representation of a bit.
pub trait BooleanOps {
    /// One Boolean value (a machine word of bit-slices, a circuit wire, ...).
    type Bit: Copy;
    /// a ⊕ b.
    fn xor(&mut self, a: Self::Bit, b: Self::Bit) -> Self::Bit;
    /// a ∧ b.
    fn and(&mut self, a: Self::Bit, b: Self::Bit) -> Self::Bit;
    /// ¬(a ⊕ b).
    fn xnor(&mut self, a: Self::Bit, b: Self::Bit) -> Self::Bit;
}

/// Applies the AES S-box (FIPS-197 §5.1.1) to one byte given as bits, least significant first:
/// `x[i]` is bit `i` of the input, and bit `i` of the output is returned at index `i`.
///
/// Exactly 32 calls of [`BooleanOps::and`], 77 of [`BooleanOps::xor`], 4 of
/// [`BooleanOps::xnor`], in a fixed order that does not depend on the values.
#[inline(always)]
pub fn sbox<B: BooleanOps>(g: &mut B, x: [B::Bit; 8]) -> [B::Bit; 8] {
    // The SLP numbers bits from the most significant: U0 is bit 7.
    let [u7, u6, u5, u4, u3, u2, u1, u0] = x;

    // Top linear layer.
    let y14 = g.xor(u3, u5);
    let y13 = g.xor(u0, u6);
    let y9 = g.xor(u0, u3);
    let y8 = g.xor(u0, u5);
    let t0 = g.xor(u1, u2);
    let y1 = g.xor(t0, u7);
    let y4 = g.xor(y1, u3);
    let y12 = g.xor(y13, y14);
    let y2 = g.xor(y1, u0);
    let y5 = g.xor(y1, u6);
    let y3 = g.xor(y5, y8);
    let t1 = g.xor(u4, y12);
    let y15 = g.xor(t1, u5);
    let y20 = g.xor(t1, u1);
    let y6 = g.xor(y15, u7);
    let y10 = g.xor(y15, t0);
    let y11 = g.xor(y20, y9);
    let y7 = g.xor(u7, y11);
    let y17 = g.xor(y10, y11);
    let y19 = g.xor(y10, y8);
    let y16 = g.xor(t0, y11);
    let y21 = g.xor(y13, y16);
    let y18 = g.xor(u0, y16);

    // Middle, non-linear layer: inversion in GF(2^8) through GF(2^4).
    let t2 = g.and(y12, y15);
    let t3 = g.and(y3, y6);
    let t4 = g.xor(t3, t2);
    let t5 = g.and(y4, u7);
    let t6 = g.xor(t5, t2);
    let t7 = g.and(y13, y16);
    let t8 = g.and(y5, y1);
    let t9 = g.xor(t8, t7);
    let t10 = g.and(y2, y7);
    let t11 = g.xor(t10, t7);
    let t12 = g.and(y9, y11);
    let t13 = g.and(y14, y17);
    let t14 = g.xor(t13, t12);
    let t15 = g.and(y8, y10);
    let t16 = g.xor(t15, t12);
    let t17 = g.xor(t4, y20);
    let t18 = g.xor(t6, t16);
    let t19 = g.xor(t9, t14);
    let t20 = g.xor(t11, t16);
    let t21 = g.xor(t17, t14);
    let t22 = g.xor(t18, y19);
    let t23 = g.xor(t19, y21);
    let t24 = g.xor(t20, y18);
    let t25 = g.xor(t21, t22);
    let t26 = g.and(t21, t23);
    let t27 = g.xor(t24, t26);
    let t28 = g.and(t25, t27);
    let t29 = g.xor(t28, t22);
    let t30 = g.xor(t23, t24);
    let t31 = g.xor(t22, t26);
    let t32 = g.and(t31, t30);
    let t33 = g.xor(t32, t24);
    let t34 = g.xor(t23, t33);
    let t35 = g.xor(t27, t33);
    let t36 = g.and(t24, t35);
    let t37 = g.xor(t36, t34);
    let t38 = g.xor(t27, t36);
    let t39 = g.and(t29, t38);
    let t40 = g.xor(t25, t39);
    let t41 = g.xor(t40, t37);
    let t42 = g.xor(t29, t33);
    let t43 = g.xor(t29, t40);
    let t44 = g.xor(t33, t37);
    let t45 = g.xor(t42, t41);
    let z0 = g.and(t44, y15);
    let z1 = g.and(t37, y6);
    let z2 = g.and(t33, u7);
    let z3 = g.and(t43, y16);
    let z4 = g.and(t40, y1);
    let z5 = g.and(t29, y7);
    let z6 = g.and(t42, y11);
    let z7 = g.and(t45, y17);
    let z8 = g.and(t41, y10);
    let z9 = g.and(t44, y12);
    let z10 = g.and(t37, y3);
    let z11 = g.and(t33, y4);
    let z12 = g.and(t43, y13);
    let z13 = g.and(t40, y5);
    let z14 = g.and(t29, y2);
    let z15 = g.and(t42, y9);
    let z16 = g.and(t45, y14);
    let z17 = g.and(t41, y8);

    // Bottom linear layer.
    let tc1 = g.xor(z15, z16);
    let tc2 = g.xor(z10, tc1);
    let tc3 = g.xor(z9, tc2);
    let tc4 = g.xor(z0, z2);
    let tc5 = g.xor(z1, z0);
    let tc6 = g.xor(z3, z4);
    let tc7 = g.xor(z12, tc4);
    let tc8 = g.xor(z7, tc6);
    let tc9 = g.xor(z8, tc7);
    let tc10 = g.xor(tc8, tc9);
    let tc11 = g.xor(tc6, tc5);
    let tc12 = g.xor(z3, z5);
    let tc13 = g.xor(z13, tc1);
    let tc14 = g.xor(tc4, tc12);
    let s3 = g.xor(tc3, tc11);
    let tc16 = g.xor(z6, tc8);
    let tc17 = g.xor(z14, tc10);
    let tc18 = g.xor(tc13, tc14);
    let s7 = g.xnor(z12, tc18);
    let tc20 = g.xor(z15, tc16);
    let tc21 = g.xor(tc2, z11);
    let s0 = g.xor(tc3, tc16);
    let s6 = g.xnor(tc10, tc18);
    let s4 = g.xor(tc14, s3);
    let s1 = g.xnor(s3, tc16);
    let tc26 = g.xor(tc17, tc20);
    let s2 = g.xnor(tc26, z17);
    let s5 = g.xor(tc21, tc17);

    [s7, s6, s5, s4, s3, s2, s1, s0]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The S-box from its definition: inversion in GF(2^8) mod x^8+x^4+x^3+x+1, then the affine
    /// map of FIPS-197 §5.1.1. Table-free and independent of the circuit.
    pub(crate) fn sbox_by_definition(a: u8) -> u8 {
        fn mul(mut a: u8, mut b: u8) -> u8 {
            let mut p = 0u8;
            for _ in 0..8 {
                if b & 1 == 1 {
                    p ^= a;
                }
                let hi = a & 0x80;
                a <<= 1;
                if hi != 0 {
                    a ^= 0x1b;
                }
                b >>= 1;
            }
            p
        }
        // a^254 = a^-1 (and 0 -> 0).
        let mut inv = 1u8;
        for _ in 0..254 {
            inv = mul(inv, a);
        }
        let b = inv;
        b ^ b.rotate_left(1) ^ b.rotate_left(2) ^ b.rotate_left(3) ^ b.rotate_left(4) ^ 0x63
    }

    struct Plain {
        ands: usize,
        xors: usize,
        xnors: usize,
    }
    impl BooleanOps for Plain {
        type Bit = bool;
        fn xor(&mut self, a: bool, b: bool) -> bool {
            self.xors += 1;
            a ^ b
        }
        fn and(&mut self, a: bool, b: bool) -> bool {
            self.ands += 1;
            a & b
        }
        fn xnor(&mut self, a: bool, b: bool) -> bool {
            self.xnors += 1;
            !(a ^ b)
        }
    }

    #[test]
    fn circuit_is_the_aes_sbox_on_all_256_inputs() {
        for v in 0..=255u8 {
            let mut g = Plain {
                ands: 0,
                xors: 0,
                xnors: 0,
            };
            let bits = core::array::from_fn(|i| (v >> i) & 1 == 1);
            let out = sbox(&mut g, bits);
            let got = out
                .iter()
                .enumerate()
                .fold(0u8, |acc, (i, &b)| acc | ((b as u8) << i));
            assert_eq!(got, sbox_by_definition(v), "S-box({v:#04x})");
            assert_eq!((g.ands, g.xors, g.xnors), (32, 77, 4));
        }
        // FIPS-197 §5.1.1 worked example and the table's first entry.
        assert_eq!(sbox_by_definition(0x53), 0xed);
        assert_eq!(sbox_by_definition(0x00), 0x63);
    }
}
