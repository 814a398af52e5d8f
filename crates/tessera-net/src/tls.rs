//! TLS 1.3 with mutual authentication (rustls, ring provider). Each party has a key and a
//! self-signed certificate made by [`keygen`] and pins its peer's certificate: the handshake
//! succeeds only if the peer presents exactly that certificate and proves it holds its key.
//! No certificate authority, host name or validity period is consulted.

use crate::{Error, Framed, tcp};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, DistinguishedName, ServerConfig,
    ServerConnection, SignatureScheme, StreamOwned,
};
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The file [`keygen`] writes the private key to.
pub const KEY_FILE: &str = "key.pem";
/// The file [`keygen`] writes the self-signed certificate to (the one to give the peer).
pub const CERT_FILE: &str = "cert.pem";
/// The name in every Tessera certificate; it is not checked (the certificate is pinned).
const PEER_NAME: &str = "tessera-peer";

/// Creates `dir` if needed and writes a fresh ECDSA P-256 key ([`KEY_FILE`], readable by the
/// owner only) and a self-signed certificate for it ([`CERT_FILE`]). Returns the certificate's
/// path.
pub fn keygen(dir: &Path) -> Result<PathBuf, Error> {
    let file_error = |path: &Path, e: io::Error| Error::KeyFile {
        path: path.display().to_string(),
        msg: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| file_error(dir, e))?;
    let made = rcgen::generate_simple_self_signed(vec![PEER_NAME.to_owned()])
        .map_err(|e| Error::Tls(format!("generating a key: {e}")))?;
    let key_path = dir.join(KEY_FILE);
    write_private(&key_path, made.signing_key.serialize_pem().as_bytes())
        .map_err(|e| file_error(&key_path, e))?;
    let cert_path = dir.join(CERT_FILE);
    std::fs::write(&cert_path, made.cert.pem()).map_err(|e| file_error(&cert_path, e))?;
    Ok(cert_path)
}

fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(bytes)
}

/// One party's TLS settings: its key and certificate, and the peer's pinned certificate.
#[derive(Debug)]
pub struct TlsConfig {
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    peer: CertificateDer<'static>,
}

impl Clone for TlsConfig {
    fn clone(&self) -> Self {
        TlsConfig {
            cert: self.cert.clone(),
            key: self.key.clone_key(),
            peer: self.peer.clone(),
        }
    }
}

fn load_cert(path: &Path) -> Result<CertificateDer<'static>, Error> {
    CertificateDer::from_pem_file(path).map_err(|e| Error::KeyFile {
        path: path.display().to_string(),
        msg: format!("not a PEM certificate: {e}"),
    })
}

impl TlsConfig {
    /// Reads this party's [`KEY_FILE`] and [`CERT_FILE`] from `dir` (as [`keygen`] wrote
    /// them) and the peer's certificate from `peer_cert`.
    pub fn load(dir: &Path, peer_cert: &Path) -> Result<Self, Error> {
        let key_path = dir.join(KEY_FILE);
        let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| Error::KeyFile {
            path: key_path.display().to_string(),
            msg: format!("not a PEM private key: {e}"),
        })?;
        Ok(TlsConfig {
            cert: load_cert(&dir.join(CERT_FILE))?,
            key,
            peer: load_cert(peer_cert)?,
        })
    }
}

/// The ring provider, and a verifier that accepts only the peer's pinned certificate.
fn pinned(config: &TlsConfig) -> (Arc<CryptoProvider>, Arc<Pinned>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(Pinned {
        cert: config.peer.clone(),
        provider: provider.clone(),
    });
    (provider, verifier)
}

fn tls_error(e: rustls::Error) -> Error {
    Error::Tls(e.to_string())
}

/// Accepts exactly one certificate, then checks the handshake signature with it.
#[derive(Debug)]
struct Pinned {
    cert: CertificateDer<'static>,
    provider: Arc<CryptoProvider>,
}

impl Pinned {
    fn check(&self, end_entity: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        if end_entity.as_ref() == self.cert.as_ref() {
            Ok(())
        } else {
            Err(rustls::Error::General(
                "the peer's certificate is not the pinned one".into(),
            ))
        }
    }
}

/// The handshake-signature methods both verifier traits share: checked with the pinned
/// certificate's key by the provider's algorithms.
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

/// A TLS stream, either end.
#[derive(Debug)]
pub enum TlsStream {
    /// The connecting party.
    Client(StreamOwned<ClientConnection, TcpStream>),
    /// The listening party.
    Server(StreamOwned<ServerConnection, TcpStream>),
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            TlsStream::Client(s) => s.read(buf),
            TlsStream::Server(s) => s.read(buf),
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            TlsStream::Client(s) => s.write(buf),
            TlsStream::Server(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            TlsStream::Client(s) => s.flush(),
            TlsStream::Server(s) => s.flush(),
        }
    }
}

fn handshake(
    conn: &mut rustls::ConnectionCommon<impl rustls::SideData>,
    sock: &mut TcpStream,
) -> Result<(), Error> {
    while conn.is_handshaking() {
        conn.complete_io(sock)
            .map_err(|e| Error::Tls(format!("handshake: {e}")))?;
    }
    Ok(())
}

/// Runs the client side of the handshake on a connected `sock`.
pub fn client(
    mut sock: TcpStream,
    config: &TlsConfig,
    timeout: Duration,
) -> Result<Framed<TlsStream>, Error> {
    let (provider, verifier) = pinned(config);
    let tls = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_error)?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_auth_cert(vec![config.cert.clone()], config.key.clone_key())
        .map_err(tls_error)?;
    let name = ServerName::try_from(PEER_NAME).map_err(|e| Error::Tls(e.to_string()))?;
    let mut conn = ClientConnection::new(Arc::new(tls), name).map_err(tls_error)?;
    handshake(&mut conn, &mut sock)?;
    Ok(Framed::new(
        TlsStream::Client(StreamOwned::new(conn, sock)),
        timeout,
    ))
}

/// Runs the server side of the handshake on an accepted `sock`.
pub fn server(
    mut sock: TcpStream,
    config: &TlsConfig,
    timeout: Duration,
) -> Result<Framed<TlsStream>, Error> {
    let (provider, verifier) = pinned(config);
    let tls = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_error)?
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![config.cert.clone()], config.key.clone_key())
        .map_err(tls_error)?;
    let mut conn = ServerConnection::new(Arc::new(tls)).map_err(tls_error)?;
    handshake(&mut conn, &mut sock)?;
    Ok(Framed::new(
        TlsStream::Server(StreamOwned::new(conn, sock)),
        timeout,
    ))
}

/// Connects to `addr` over TLS (retrying while the peer is not yet listening).
pub fn connect(
    addr: &str,
    config: &TlsConfig,
    timeout: Duration,
) -> Result<Framed<TlsStream>, Error> {
    client(tcp::connect_stream(addr, timeout)?, config, timeout)
}

/// Accepts one TLS peer on `listener`.
pub fn accept(
    listener: &TcpListener,
    config: &TlsConfig,
    timeout: Duration,
) -> Result<Framed<TlsStream>, Error> {
    server(tcp::accept_stream(listener, timeout)?, config, timeout)
}
