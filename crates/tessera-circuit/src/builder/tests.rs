//! Every builder operation against Rust's integer arithmetic, on random widths and values.

use super::*;
use crate::eval::evaluate;
use proptest::prelude::*;

fn to_bits(v: u128, n: usize) -> Vec<bool> {
    (0..n).map(|i| (v >> i) & 1 == 1).collect()
}

fn from_bits(bits: &[bool]) -> u128 {
    bits.iter()
        .enumerate()
        .fold(0, |acc, (i, &b)| acc | (u128::from(b) << i))
}

fn mask(n: usize) -> u128 {
    if n == 128 { u128::MAX } else { (1 << n) - 1 }
}

/// Sign-extends the low n bits of v to i128.
fn signed(v: u128, n: usize) -> i128 {
    ((v << (128 - n)) as i128) >> (128 - n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn integer_operations_match_rust(n in 1usize..=64, a in any::<u128>(), b in any::<u128>(), s in 0u128..80) {
        let (a, b) = (a & mask(n), b & mask(n));
        let mut g = Builder::new();
        let x = g.input(n as u32);
        let y = g.input(n as u32);
        let k = g.input(7);
        let sel = g.input(1)[0];
        let outputs = vec![
            g.add(&x, &y),
            g.sub(&x, &y),
            g.neg(&x),
            g.mul(&x, &y),
            g.mul_wide(&x, &y, Signedness::Unsigned),
            g.mul_wide(&x, &y, Signedness::Signed),
            vec![g.lt(&x, &y, Signedness::Unsigned)],
            vec![g.lt(&x, &y, Signedness::Signed)],
            vec![g.le(&x, &y, Signedness::Signed)],
            vec![g.eq(&x, &y)],
            g.min(&x, &y, Signedness::Signed),
            g.mux_bits(sel, &x, &y),
            g.shl(&x, &k),
            g.shr(&x, &k, Signedness::Unsigned),
            g.shr(&x, &k, Signedness::Signed),
            Builder::rotl(&x, (s as usize) % n),
            g.or_bits(&x, &y),
            g.and_bits(&x, &y),
            g.xor_bits(&x, &y),
            g.not_bits(&x),
            g.add_with_carry(&x, &y, sel).0,
        ];
        let c = g.finish(&outputs).unwrap();
        let sel_v = s & 1 == 1;
        let out = evaluate(&c, &[to_bits(a, n), to_bits(b, n), to_bits(s, 7), vec![sel_v]]).unwrap();
        let v: Vec<u128> = out.iter().map(|o| from_bits(o)).collect();
        let (sa, sb) = (signed(a, n), signed(b, n));
        let m = mask(n);
        let sh = |f: &dyn Fn(u32) -> u128| if s >= n as u128 { None } else { Some(f(s as u32)) };
        prop_assert_eq!(v[0], a.wrapping_add(b) & m, "add");
        prop_assert_eq!(v[1], a.wrapping_sub(b) & m, "sub");
        prop_assert_eq!(v[2], a.wrapping_neg() & m, "neg");
        prop_assert_eq!(v[3], a.wrapping_mul(b) & m, "mul");
        prop_assert_eq!(v[4], a * b, "mul_wide unsigned");
        prop_assert_eq!(v[5], (sa * sb) as u128 & mask(2 * n), "mul_wide signed");
        prop_assert_eq!(v[6], u128::from(a < b), "lt unsigned");
        prop_assert_eq!(v[7], u128::from(sa < sb), "lt signed");
        prop_assert_eq!(v[8], u128::from(sa <= sb), "le signed");
        prop_assert_eq!(v[9], u128::from(a == b), "eq");
        prop_assert_eq!(v[10], if sa < sb { a } else { b }, "min");
        prop_assert_eq!(v[11], if sel_v { a } else { b }, "mux");
        prop_assert_eq!(v[12], sh(&|k| (a << k) & m).unwrap_or(0), "shl");
        prop_assert_eq!(v[13], sh(&|k| a >> k).unwrap_or(0), "shr");
        let sign_fill = if sa < 0 { m } else { 0 };
        prop_assert_eq!(v[14], sh(&|k| (sa >> k) as u128 & m).unwrap_or(sign_fill), "sar");
        let r = (s as usize) % n;
        prop_assert_eq!(v[15], ((a << r) | (a >> ((n - r) % n))) & m, "rotl");
        prop_assert_eq!(v[16], a | b, "or");
        prop_assert_eq!(v[17], a & b, "and");
        prop_assert_eq!(v[18], a ^ b, "xor");
        prop_assert_eq!(v[19], !a & m, "not");
        prop_assert_eq!(v[20], (a + b + u128::from(sel_v)) & m, "add_with_carry");
    }
}

#[test]
fn gate_costs_are_as_documented() {
    let mut g = Builder::new();
    let x = g.input(32);
    let y = g.input(32);
    let cost = |g: &mut Builder, f: &dyn Fn(&mut Builder) -> Vec<Bit>| {
        let before = g.and_gates();
        f(g);
        g.and_gates() - before
    };
    assert_eq!(cost(&mut g, &|g| g.add(&x, &y)), 31);
    assert_eq!(cost(&mut g, &|g| g.sub(&x, &y)), 31);
    assert_eq!(
        cost(&mut g, &|g| vec![g.lt(&x, &y, Signedness::Signed)]),
        32
    );
    assert_eq!(cost(&mut g, &|g| vec![g.eq(&x, &y)]), 31);
    assert_eq!(cost(&mut g, &|_| Builder::rotr(&x, 7)), 0);
    assert!(cost(&mut g, &|g| g.mul(&x, &y)) <= 32 * 32);
}

#[test]
fn constants_fold_and_outputs_get_their_own_wires() {
    let mut g = Builder::new();
    let x = g.input(2);
    let zero = g.and(x[0], Bit::Const(false));
    let same = g.xor(x[1], Bit::Const(false));
    let dead = g.and(x[0], x[1]);
    let _ = dead;
    let c = g.finish(&[vec![zero, same, same, x[0]]]).unwrap();
    assert_eq!(
        crate::analysis::gate_counts(&c).and,
        0,
        "the unused AND is dropped"
    );
    for v in 0..4u128 {
        let out = evaluate(&c, &[to_bits(v, 2)]).unwrap();
        assert_eq!(out[0], vec![false, v >> 1 == 1, v >> 1 == 1, v & 1 == 1]);
    }
}
