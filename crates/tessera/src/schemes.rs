//! `--scheme` on the command line, derived from the garbling-scheme registry
//! ([`SchemeKind::ALL`]): the accepted names, their help lines and the error for a wrong one.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use tessera_garble::SchemeKind;

/// One scheme by name; `--help` lists every name with its summary.
pub fn one() -> impl TypedValueParser<Value = SchemeKind> {
    let names = SchemeKind::ALL.map(|k| PossibleValue::new(k.name()).help(k.summary()));
    PossibleValuesParser::new(names).try_map(|name| name.parse::<SchemeKind>())
}

/// Schemes by name, comma-separated, or `all`.
pub fn list(s: &str) -> Result<Vec<SchemeKind>, String> {
    if s == "all" {
        Ok(SchemeKind::ALL.to_vec())
    } else {
        s.split(',').map(str::parse).collect()
    }
}

/// The help line of a `--scheme` that takes a list.
pub fn list_help() -> String {
    format!(
        "Garbling schemes, comma-separated ({}), or `all`",
        SchemeKind::names()
    )
}
