//! Every protocol message a peer can send, decoded from arbitrary bytes: the first byte picks
//! the receiving role, the second the message kind, the rest is the payload. Decoding gives an
//! error or a message, never a panic; a decoded message encodes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_net::role::{Decode, Encode};
use tessera_ot::{base, extension, ferret, one_of_n, triples};
use tessera_protocols::yao;

fn same<M: Encode>(m: &M, bytes: &[u8]) {
    assert_eq!(m.encode(&mut Vec::new()), bytes);
}

fuzz_target!(|data: &[u8]| {
    let [role, kind, payload @ ..] = data else {
        return;
    };
    match role % 11 {
        0 => {
            if let Ok(base::ToSender::Points(p)) = base::ToSender::decode(*kind, payload) {
                same(&p, payload);
            }
        }
        1 => match base::ToReceiver::decode(*kind, payload) {
            Ok(base::ToReceiver::Hello(h)) => same(&h, payload),
            Ok(base::ToReceiver::Ciphertexts(c)) => same(&c, payload),
            Err(_) => {}
        },
        2 => match extension::ToSender::decode(*kind, payload) {
            Ok(extension::ToSender::Matrix(m)) => same(&m, payload),
            Ok(extension::ToSender::Seed(s)) => same(&s, payload),
            Ok(extension::ToSender::Proof(p)) => same(&p, payload),
            Ok(extension::ToSender::Flips(f)) => same(&f, payload),
            Ok(extension::ToSender::Tree(t)) => same(&t, payload),
            Err(_) => {}
        },
        3 => match extension::ToReceiver::decode(*kind, payload) {
            Ok(extension::ToReceiver::Commit(c)) => same(&c, payload),
            Ok(extension::ToReceiver::Open(o)) => same(&o, payload),
            Ok(extension::ToReceiver::Masked(m)) => same(&m, payload),
            Err(_) => {}
        },
        4 => {
            if let Ok(h) = tessera_protocols::hello::Hello::decode(*kind, payload) {
                same(&h, payload);
            }
        }
        5 => {
            if let Ok(yao::ToGarbler::Colours(c)) = yao::ToGarbler::decode(*kind, payload) {
                same(&c, payload);
            }
        }
        6 => {
            if let Ok(c) = triples::Corrections::decode(*kind, payload) {
                same(&c, payload);
            }
        }
        7 => match yao::ToEvaluator::decode(*kind, payload) {
            Ok(yao::ToEvaluator::Labels(l)) => same(&l, payload),
            Ok(yao::ToEvaluator::Tables(t)) => same(&t, payload),
            Ok(yao::ToEvaluator::Decoding(d)) => same(&d, payload),
            Err(_) => {}
        },
        8 => match ferret::ToReceiver::decode(*kind, payload) {
            Ok(ferret::ToReceiver::Trees(t)) => same(&t, payload),
            Ok(ferret::ToReceiver::Digest(d)) => same(&d, payload),
            Err(_) => {}
        },
        9 => {
            if let Ok(ferret::ToSender::Choices(c)) = ferret::ToSender::decode(*kind, payload) {
                same(&c, payload);
            }
        }
        _ => {
            // The hybrid programs' fields (a comparison's choices and tables, a selection's
            // bits and corrections): as many as the payload's bits hold, and one fewer.
            let width = u32::from(*kind % 64) + 1;
            let count = payload.len() * 8 / width as usize;
            for count in [count, count.saturating_sub(1)] {
                if let Some(f) = one_of_n::Fields::from_bytes(width, count, payload) {
                    assert_eq!(f.to_bytes(), payload);
                    if count > 0 {
                        f.get(count - 1);
                    }
                }
            }
        }
    }
});
