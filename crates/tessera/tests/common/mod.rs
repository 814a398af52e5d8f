//! What the command-line test files share.

/// A file of the repository's reference data (`data/`, sources in its SOURCE.txt files).
pub fn data(path: &str) -> String {
    format!("{}/../../data/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// The arguments of `tessera oaes prep` dealing for `parties` parties and online protocol
/// `protocol` into the folder `out`.
pub fn oaes_prep<'a>(parties: &'a str, protocol: &'a str, out: &'a str) -> [&'a str; 8] {
    [
        "oaes",
        "prep",
        "--parties",
        parties,
        "--protocol",
        protocol,
        "--out",
        out,
    ]
}
