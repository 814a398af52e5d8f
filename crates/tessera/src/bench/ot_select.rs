//! The options that pick the OT providers of `tessera bench ot` and `tessera bench triples`.

use crate::CliError;
use clap::{Args, ValueEnum};
use tessera_ot::extension::MAX_K;
use tessera_ot::ferret::Params;
use tessera_ot::{OtChoice, Protocol, Security};

/// Which OT protocols to run.
#[derive(Args)]
pub struct OtSelect {
    /// The OT protocol [default: all for `bench ot`, softspoken for `bench triples`].
    #[arg(long, value_enum)]
    protocol: Option<ProtocolArg>,
    /// SoftSpoken's k: correction bits per OT 128/k, local work about 2^k/k hashes per OT.
    #[arg(long, default_value_t = Protocol::DEFAULT_K as u8, value_parser = clap::value_parser!(u8).range(1..=MAX_K as i64))]
    k: u8,
    /// Ferret's LPN parameters: the paper's (n = 10.8 M, k = 589,760) or EMP-OT's current
    /// ferret_b12, b11 or b10 (n = 6.2 M, 2.4 M, 870,400; k = 2^18, 2^17, 2^16), all estimated
    /// at 128-bit security.
    #[arg(long, value_enum, default_value_t = LpnArg::EmpB10)]
    lpn: LpnArg,
}

/// `--protocol`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ProtocolArg {
    Iknp,
    Kos,
    Softspoken,
    SoftspokenMalicious,
    Ferret,
    FerretMalicious,
    All,
}

/// `--lpn`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum LpnArg {
    Paper,
    EmpB12,
    EmpB11,
    EmpB10,
}

impl OtSelect {
    /// The providers `--protocol` names (`default` where it is absent), with `--k` and `--lpn`.
    pub fn choices(&self, default: ProtocolArg) -> Result<Vec<OtChoice>, CliError> {
        let k = usize::from(self.k);
        let softspoken = |s| Protocol::softspoken(k, s).map(OtChoice::Extension);
        let params = match self.lpn {
            LpnArg::Paper => Params::PAPER,
            LpnArg::EmpB12 => Params::EMP_B12,
            LpnArg::EmpB11 => Params::EMP_B11,
            LpnArg::EmpB10 => Params::EMP_B10,
        };
        let ferret = |s| OtChoice::Ferret(params, s);
        Ok(match self.protocol.unwrap_or(default) {
            ProtocolArg::Iknp => vec![OtChoice::Extension(Protocol::IKNP)],
            ProtocolArg::Kos => vec![OtChoice::Extension(Protocol::KOS)],
            ProtocolArg::Softspoken => vec![softspoken(Security::SemiHonest)?],
            ProtocolArg::SoftspokenMalicious => vec![softspoken(Security::Malicious)?],
            ProtocolArg::Ferret => vec![ferret(Security::SemiHonest)],
            ProtocolArg::FerretMalicious => vec![ferret(Security::Malicious)],
            ProtocolArg::All => vec![
                OtChoice::Extension(Protocol::IKNP),
                OtChoice::Extension(Protocol::KOS),
                softspoken(Security::SemiHonest)?,
                softspoken(Security::Malicious)?,
                ferret(Security::SemiHonest),
                ferret(Security::Malicious),
            ],
        })
    }
}
