//! What the private-inference tests share: one inference between a server and a client on
//! two threads over memory, seeded (a failing run prints its seed and replays with
//! `TESSERA_SEED`).

use std::thread;
use tessera_nn::fixed::Fixed;
use tessera_nn::infer::{self, Report};
use tessera_nn::model::Model;
use tessera_nn::secure;
use tessera_protocols::Session;

/// The client's logits and report from one private inference of `model` (both parties hold
/// it) on `x`, compiled in `fixed` as `options` say.
pub fn private(
    model: &Model,
    fixed: Fixed,
    options: secure::Options,
    x: &[f32],
) -> (Vec<u64>, Report) {
    let (n0, n1) = tessera_net::memory::pair().unwrap();
    let config = infer::session_config().seeded(tessera_testkit::seed());
    let server_model = model.clone();
    let server = thread::spawn(move || {
        let c = secure::compile(&server_model, fixed, options).unwrap();
        infer::server(&mut Session::new(n0, config).unwrap(), &c).unwrap()
    });
    let c = secure::compile(model, fixed, options).unwrap();
    let out = infer::client(&mut Session::new(n1, config).unwrap(), &c, x).unwrap();
    server.join().unwrap();
    out
}
