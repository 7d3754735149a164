//! TLS for the HTTP transport (`[http.tls]`): a rustls server
//! configuration from PEM files, so that bearer tokens never travel in the
//! clear.

use std::io;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::TlsConfig;

/// The rustls configuration for `tls`: its certificate chain and key
/// (PKCS#8, PKCS#1 or SEC1), TLS 1.2 and 1.3 with the ring provider.
pub fn server_config(tls: &TlsConfig) -> io::Result<rustls::ServerConfig> {
    let bad = |what: &str, path: &str, e: &dyn std::fmt::Display| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("http.tls.{what} {path:?}: {e}"))
    };
    let certs = CertificateDer::pem_file_iter(&tls.cert)
        .map_err(|e| bad("cert", &tls.cert, &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad("cert", &tls.cert, &e))?;
    if certs.is_empty() {
        return Err(bad("cert", &tls.cert, &"no certificate in the file"));
    }
    let key = PrivateKeyDer::from_pem_file(&tls.key).map_err(|e| bad("key", &tls.key, &e))?;
    // rustls 0.23.48 deprecates the ring provider for its lack of
    // post-quantum key exchange; the other provider, aws-lc-rs, builds a C
    // library with CMake into every TLS build. Kept: TLS 1.3 and 1.2 with
    // classical key exchange, as config/default.toml says.
    #[allow(deprecated)]
    let provider = rustls::crypto::ring::default_provider();
    rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad("cert", &tls.cert, &e))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad("key", &tls.key, &e))
}
