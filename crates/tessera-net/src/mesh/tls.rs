//! TLS 1.3 with mutual authentication (rustls, ring provider) for the TCP mesh. Each party has
//! a key and a self-signed certificate made by [`keygen`] and pins every peer's certificate:
//! a handshake succeeds only if the peer presents exactly the certificate pinned for it and
//! proves it holds its key. No certificate authority, host name or validity period is
//! consulted.

use crate::Error;
use crate::files::{MAX_KEY_FILE_BYTES, read_capped};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, DistinguishedName, ServerConfig,
    ServerConnection, SignatureScheme,
};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file [`keygen`] writes the private key to.
pub const KEY_FILE: &str = "key.pem";
/// The file [`keygen`] writes the self-signed certificate to (the one to give the peers).
pub const CERT_FILE: &str = "cert.pem";
/// The name in every Tessera certificate; it is not checked (certificates are pinned).
const PEER_NAME: &str = "tessera-peer";

fn file_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::File {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Creates `dir` if needed and writes a fresh ECDSA P-256 key ([`KEY_FILE`], mode 0600) and a
/// self-signed certificate for it ([`CERT_FILE`]). Both files are created new, never through
/// a link: an existing file is refused unless `force`, which removes it first (a symbolic
/// link is removed, not followed). Returns the certificate's path.
pub fn keygen(dir: &Path, force: bool) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir).map_err(|e| file_error(dir, e))?;
    let made = rcgen::generate_simple_self_signed(vec![PEER_NAME.to_owned()])
        .map_err(|e| Error::Tls(format!("generating a key: {e}")))?;
    let key_path = dir.join(KEY_FILE);
    let cert_path = dir.join(CERT_FILE);
    write_new(
        &key_path,
        made.signing_key.serialize_pem().as_bytes(),
        0o600,
        force,
    )?;
    write_new(&cert_path, made.cert.pem().as_bytes(), 0o644, force)?;
    Ok(cert_path)
}

/// Writes `bytes` to a file created exclusively at `path` (no following links) with `mode`.
fn write_new(path: &Path, bytes: &[u8], mode: u32, force: bool) -> Result<(), Error> {
    if force {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(file_error(path, e)),
        }
    }
    // O_CREAT | O_EXCL | O_NOFOLLOW: anything already there, a symbolic link included, is
    // refused, so the key never lands in a link's target.
    let mut file = tessera_core::files::create_new(path, mode).map_err(|e| {
        if e.kind() == io::ErrorKind::AlreadyExists {
            file_error(path, "already exists (use --force to replace it)")
        } else {
            file_error(path, e)
        }
    })?;
    file.write_all(bytes).map_err(|e| file_error(path, e))
}

/// Refuses a private key that others than its owner can read or write.
#[cfg(unix)]
fn check_private(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map_err(|e| file_error(path, e))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(file_error(
            path,
            format!(
                "the private key is open to others (mode {:04o}); make it readable by its owner only (chmod 600)",
                mode & 0o7777
            ),
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_path: &Path) -> Result<(), Error> {
    Ok(())
}

/// The first certificate in PEM text.
pub fn parse_certificate(pem: &[u8]) -> Result<CertificateDer<'static>, String> {
    CertificateDer::from_pem_slice(pem).map_err(|e| format!("not a PEM certificate: {e}"))
}

/// The first private key in PEM text.
pub fn parse_private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| format!("not a PEM private key: {e}"))
}

/// A certificate file: PEM text holding an X.509 certificate that decodes.
fn load_cert(path: &Path) -> Result<CertificateDer<'static>, Error> {
    let bytes = read_capped(path, MAX_KEY_FILE_BYTES)?;
    let cert = parse_certificate(&bytes).map_err(|e| file_error(path, e))?;
    rustls::server::ParsedCertificate::try_from(&cert)
        .map_err(|e| file_error(path, format!("the certificate does not decode: {e}")))?;
    Ok(cert)
}

/// One party's TLS settings: its key and certificate, and the pinned certificate of each peer
/// it talks to.
#[derive(Debug)]
pub struct TlsConfig {
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    peers: Vec<(usize, CertificateDer<'static>)>,
}

impl Clone for TlsConfig {
    fn clone(&self) -> Self {
        TlsConfig {
            cert: self.cert.clone(),
            key: self.key.clone_key(),
            peers: self.peers.clone(),
        }
    }
}

impl TlsConfig {
    /// Reads this party's [`KEY_FILE`] and [`CERT_FILE`] from `dir` (as [`keygen`] wrote
    /// them) and each peer's certificate, `(party, path)`. Files over 1 MiB, and a key others
    /// can read, are refused.
    pub fn load(dir: &Path, peers: &[(usize, &Path)]) -> Result<Self, Error> {
        let key_path = dir.join(KEY_FILE);
        check_private(&key_path)?;
        let bytes = read_capped(&key_path, MAX_KEY_FILE_BYTES)?;
        let key = parse_private_key(&bytes).map_err(|e| file_error(&key_path, e))?;
        let cert_path = dir.join(CERT_FILE);
        let cert = load_cert(&cert_path)?;
        // Checked now, before anything listens: a key the provider cannot use, or one that is
        // not the certificate's, would otherwise fail only in a handshake, as the peer's fault.
        let provider = rustls::crypto::ring::default_provider();
        rustls::sign::CertifiedKey::from_der(vec![cert.clone()], key.clone_key(), &provider)
            .and_then(|k| k.keys_match())
            .map_err(|e| {
                file_error(
                    &key_path,
                    format!("the key does not go with {}: {e}", cert_path.display()),
                )
            })?;
        Ok(TlsConfig {
            cert,
            key,
            peers: peers
                .iter()
                .map(|&(j, p)| Ok((j, load_cert(p)?)))
                .collect::<Result<_, Error>>()?,
        })
    }

    /// The pinned certificate of party `j`.
    fn peer(&self, j: usize) -> Result<&CertificateDer<'static>, Error> {
        self.peers
            .iter()
            .find(|(p, _)| *p == j)
            .map(|(_, c)| c)
            .ok_or_else(|| Error::Tls(format!("no certificate is pinned for party {j}")))
    }

    /// A client connection to party `j`, which must present its pinned certificate.
    pub(crate) fn client(&self, j: usize) -> Result<ClientConnection, Error> {
        let (provider, verifier) = pinned(vec![(j, self.peer(j)?.clone())]);
        let tls = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_error)?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_client_auth_cert(vec![self.cert.clone()], self.key.clone_key())
            .map_err(tls_error)?;
        let name = ServerName::try_from(PEER_NAME).map_err(|e| Error::Tls(e.to_string()))?;
        ClientConnection::new(Arc::new(tls), name).map_err(tls_error)
    }

    /// A server connection that accepts any of the parties `from` (by their pinned
    /// certificates).
    pub(crate) fn server(
        &self,
        from: impl Iterator<Item = usize>,
    ) -> Result<ServerConnection, Error> {
        let pins = from
            .map(|j| Ok((j, self.peer(j)?.clone())))
            .collect::<Result<Vec<_>, Error>>()?;
        let (provider, verifier) = pinned(pins);
        let tls = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_error)?
            .with_client_cert_verifier(verifier)
            .with_single_cert(vec![self.cert.clone()], self.key.clone_key())
            .map_err(tls_error)?;
        ServerConnection::new(Arc::new(tls)).map_err(tls_error)
    }

    /// The party whose pinned certificate `cert` is.
    pub(crate) fn party_of(&self, cert: &CertificateDer<'_>) -> Option<usize> {
        self.peers
            .iter()
            .find(|(_, c)| c.as_ref() == cert.as_ref())
            .map(|(j, _)| *j)
    }
}

/// The ring provider, and a verifier that accepts only the pinned certificates.
fn pinned(certs: Vec<(usize, CertificateDer<'static>)>) -> (Arc<CryptoProvider>, Arc<Pinned>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(Pinned {
        certs,
        provider: provider.clone(),
    });
    (provider, verifier)
}

fn tls_error(e: rustls::Error) -> Error {
    Error::Tls(e.to_string())
}

/// Accepts exactly the pinned certificates, then checks the handshake signature with the one
/// presented.
#[derive(Debug)]
struct Pinned {
    certs: Vec<(usize, CertificateDer<'static>)>,
    provider: Arc<CryptoProvider>,
}

impl Pinned {
    fn check(&self, end_entity: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        if self
            .certs
            .iter()
            .any(|(_, c)| c.as_ref() == end_entity.as_ref())
        {
            Ok(())
        } else {
            Err(rustls::Error::General(
                "the peer's certificate is not a pinned one".into(),
            ))
        }
    }
}

/// The handshake-signature methods both verifier traits share: checked with the presented
/// (pinned) certificate's key by the provider's algorithms.
macro_rules! signature_checks {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            verify_tls12_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }
        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            verify_tls13_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }
        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.provider
                .signature_verification_algorithms
                .supported_schemes()
        }
    };
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.check(end_entity)
            .map(|()| ServerCertVerified::assertion())
    }
    signature_checks!();
}

impl ClientCertVerifier for Pinned {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }
    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.check(end_entity)
            .map(|()| ClientCertVerified::assertion())
    }
    signature_checks!();
}
