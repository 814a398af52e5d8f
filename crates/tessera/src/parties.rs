//! The parties file: where the n parties of a run live, for every n-party command, as an
//! alternative to lists on the command line. TOML, one `[[party]]` table per party:
//!
//! ```toml
//! [[party]]
//! id = 0
//! address = "10.0.0.1:7100"
//! certificate = "certs/party-0.pem"   # for TLS: every party has one, or none does
//! ```
//!
//! Ids run from 0 to n − 1, each once, in any order; a relative certificate path is read
//! beside the file. Errors name the file, the line and the field.

use crate::CliError;
use clap::Args;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use tessera_net::tcp::{self, Mesh, mesh};
use tessera_net::{Network, tls};
use toml::Spanned;

/// The largest parties file read.
const MAX_BYTES: u64 = 1 << 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    party: Vec<Spanned<Entry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: Spanned<usize>,
    address: Spanned<String>,
    certificate: Option<Spanned<PathBuf>>,
}

/// Every party's address and, for TLS, certificate, in party order.
#[derive(Debug, PartialEq)]
pub struct Parties {
    /// Party i's address.
    pub addresses: Vec<String>,
    /// Party i's certificate, if the file gives them.
    pub certificates: Option<Vec<PathBuf>>,
}

/// Reads and checks the parties file at `path`.
pub fn load(path: &Path) -> Result<Parties, CliError> {
    let bytes = tessera_core::files::read(path, MAX_BYTES)
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::Usage(format!("{}: not UTF-8 text", path.display())))?;
    parse(&text, path)
}

/// The parties file `text`, read from `path` (which names it in errors and anchors relative
/// certificate paths).
pub fn parse(text: &str, path: &Path) -> Result<Parties, CliError> {
    let shown = path.display();
    let file: File = toml::from_str(text)
        .map_err(|e| CliError::Usage(format!("{shown}: {}", e.to_string().trim_end())))?;
    let line = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    let bad = |at: usize, field: &str, why: String| {
        CliError::Usage(format!("{shown}, line {}, field {field}: {why}", line(at)))
    };
    let n = file.party.len();
    if n < 2 {
        return Err(CliError::Usage(format!(
            "{shown}: {n} [[party]] tables; a run needs at least two parties"
        )));
    }
    let mut addresses: Vec<Option<String>> = vec![None; n];
    let mut certificates: Vec<Option<PathBuf>> = vec![None; n];
    let with_certificates = file.party[0].get_ref().certificate.is_some();
    let beside = path.parent().unwrap_or(Path::new("."));
    for entry in &file.party {
        let e = entry.get_ref();
        let id = *e.id.get_ref();
        let slot = addresses.get_mut(id).ok_or_else(|| {
            bad(
                e.id.span().start,
                "id",
                format!("{id}; ids run from 0 to {}", n - 1),
            )
        })?;
        if slot.is_some() {
            return Err(bad(
                e.id.span().start,
                "id",
                format!("party {id} is given twice"),
            ));
        }
        if e.address.get_ref().trim().is_empty() {
            return Err(bad(e.address.span().start, "address", "empty".into()));
        }
        *slot = Some(e.address.get_ref().clone());
        match (&e.certificate, with_certificates) {
            (Some(c), true) => certificates[id] = Some(beside.join(c.get_ref())),
            (None, false) => {}
            (Some(c), false) => {
                return Err(bad(
                    c.span().start,
                    "certificate",
                    "given here but not for the first party: every party has one, or none does"
                        .into(),
                ));
            }
            (None, true) => {
                return Err(bad(
                    entry.span().start,
                    "certificate",
                    format!("missing for party {id}: every party has one, or none does"),
                ));
            }
        }
    }
    Ok(Parties {
        addresses: addresses.into_iter().flatten().collect(),
        certificates: with_certificates.then(|| certificates.into_iter().flatten().collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Parties, String> {
        parse(text, Path::new("/etc/tessera/parties.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn parties_in_any_order_with_certificates_beside_the_file() {
        let p = parse_str(
            "[[party]]\nid = 1\naddress = \"b:2\"\ncertificate = \"c1.pem\"\n\n\
             [[party]]\nid = 0\naddress = \"a:1\"\ncertificate = \"/abs/c0.pem\"\n",
        )
        .unwrap();
        assert_eq!(p.addresses, ["a:1", "b:2"]);
        assert_eq!(
            p.certificates.unwrap(),
            [
                PathBuf::from("/abs/c0.pem"),
                PathBuf::from("/etc/tessera/c1.pem")
            ]
        );
        let p = parse_str(
            "[[party]]\nid = 0\naddress = \"a:1\"\n[[party]]\nid = 1\naddress = \"b:2\"\n",
        );
        assert_eq!(p.unwrap().certificates, None);
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_field() {
        let two =
            |second: &str| format!("[[party]]\nid = 0\naddress = \"a:1\"\n\n[[party]]\n{second}");
        for (text, want) in [
            (
                two("id = 0\naddress = \"b:2\"\n"),
                "line 6, field id: party 0 is given twice",
            ),
            (
                two("id = 5\naddress = \"b:2\"\n"),
                "line 6, field id: 5; ids run from 0 to 1",
            ),
            (
                two("id = 1\naddress = \" \"\n"),
                "line 7, field address: empty",
            ),
            (
                two("id = 1\naddress = \"b:2\"\ncertificate = \"c.pem\"\n"),
                "line 8, field certificate",
            ),
            (two("id = 1\n"), "missing field `address`"),
            (
                two("id = 1\naddress = \"b:2\"\nport = 3\n"),
                "unknown field `port`",
            ),
            (two("id = -1\naddress = \"b:2\"\n"), "line 6"),
            (
                "[[party]]\nid = 0\naddress = \"a:1\"\n".to_owned(),
                "at least two parties",
            ),
        ] {
            let e = parse_str(&text).unwrap_err();
            assert!(
                e.contains("/etc/tessera/parties.toml") && e.contains(want),
                "{e}"
            );
        }
    }
}

/// Where the parties of an n-party run are and how to reach them: the options every n-party
/// `run` command takes.
#[derive(Args)]
pub struct MeshArgs {
    /// This party's id (0-based).
    #[arg(long)]
    pub party: usize,
    /// Every party's address, in party order: this party listens on its own (unless it is the
    /// last) and connects to those of lower ids.
    #[arg(long, value_delimiter = ',', required_unless_present = "parties_file")]
    parties: Vec<String>,
    /// A TOML file of every party's id, address and (for TLS) certificate, instead of
    /// --parties and --peer-certs.
    #[arg(long, conflicts_with_all = ["parties", "peer_certs"])]
    parties_file: Option<PathBuf>,
    /// Directory with this party's key.pem and cert.pem (from `tessera keygen`): use TLS.
    #[arg(long)]
    tls_dir: Option<PathBuf>,
    /// Every party's certificate, in party order (this party's own entry is ignored), pinned.
    #[arg(long, value_delimiter = ',', requires = "tls_dir")]
    peer_certs: Vec<PathBuf>,
    /// Seconds to wait for a peer: to connect, and for each message.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Seconds the whole run may take, set-up included, however the peers trickle their data
    /// (0: no bound).
    #[arg(long, default_value_t = crate::twoparty::DEFAULT_DEADLINE_S)]
    deadline: u64,
}

impl MeshArgs {
    /// Every party's address and certificates, from the file or the lists, checked.
    fn where_parties_are(&self) -> Result<Parties, CliError> {
        let parties = match &self.parties_file {
            Some(file) => load(file)?,
            None => {
                let certificates = (!self.peer_certs.is_empty()).then(|| self.peer_certs.clone());
                if certificates
                    .as_ref()
                    .is_some_and(|c| c.len() != self.parties.len())
                {
                    return Err(CliError::Usage(format!(
                        "--peer-certs names {} certificates for {} parties",
                        self.peer_certs.len(),
                        self.parties.len()
                    )));
                }
                Parties {
                    addresses: self.parties.clone(),
                    certificates,
                }
            }
        };
        // Port 0 (listen anywhere) and "-" (the last party's, unused) may repeat.
        let reachable = |a: &String| a != "-" && !a.ends_with(":0");
        if let Some((i, a)) = parties
            .addresses
            .iter()
            .enumerate()
            .find(|(i, a)| reachable(a) && parties.addresses[..*i].contains(a))
        {
            return Err(CliError::Usage(format!(
                "party {i}'s address {a} is another party's too"
            )));
        }
        let n = parties.addresses.len();
        if self.party >= n {
            return Err(CliError::Usage(format!(
                "--party {} but there are {n} parties",
                self.party
            )));
        }
        Ok(parties)
    }

    /// How many parties, once the lists or the file are checked.
    pub fn parties(&self) -> Result<usize, CliError> {
        Ok(self.where_parties_are()?.addresses.len())
    }

    /// This party's mesh: listen on its own address, connect to lower ones, over TLS with
    /// pinned certificates where asked.
    pub fn open(&self) -> Result<Network, CliError> {
        let parties = self.where_parties_are()?;
        let config = crate::twoparty::net_config(self.timeout, self.deadline);
        let me = self.party;
        let tls = match (&self.tls_dir, &parties.certificates) {
            (Some(dir), Some(certificates)) => {
                let peers: Vec<(usize, &Path)> = certificates
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != me)
                    .map(|(j, p)| (j, p.as_path()))
                    .collect();
                Some(tls::TlsConfig::load(dir, &peers)?)
            }
            (Some(_), None) => {
                return Err(CliError::Usage(
                    "--tls-dir needs every party's certificate (--peer-certs or the parties file)"
                        .to_owned(),
                ));
            }
            (None, _) => None,
        };
        let addresses = &parties.addresses;
        let listener = if me + 1 < addresses.len() {
            let l = tcp::listen(&addresses[me])?;
            eprintln!("tessera: party {me} listening on {}", l.local_addr()?);
            Some(l)
        } else {
            None
        };
        let m = Mesh {
            me,
            parties: addresses.len(),
            listener: listener.as_ref(),
            lower: &addresses[..me],
            tls: tls.as_ref(),
            setup: config.timeout,
        };
        Ok(mesh(m, config)?)
    }
}
