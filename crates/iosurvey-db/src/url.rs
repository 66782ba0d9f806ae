//! `--db postgres://...`: a PostgreSQL URL told from a file name, read
//! into the client's settings (with iosurvey's own parameters `schema`
//! and `sslmode`), its TLS set up, and its password hidden wherever it is
//! shown. TLS is pure Rust (rustls with ring): for `sslmode` `prefer` and
//! `require` the connection is encrypted without the server's certificate
//! being verified, as libpq does; `verify-full` verifies it against the
//! Mozilla roots compiled in and the host name.

use crate::store::DbError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The schemes of a PostgreSQL URL.
const SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// The schema the tables are in when the URL names none.
pub const DEFAULT_SCHEMA: &str = "iosurvey";

/// How long connecting may take before the server is said unreachable.
const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// How TLS is used (`sslmode`), as libpq reads it: `disable` never,
/// `prefer` when the server offers it, `require` always (neither
/// verifies the server's certificate, as in libpq), `verify-full` always,
/// with the certificate verified against the Mozilla roots and the host
/// name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tls {
    Disable,
    Prefer,
    Require,
    VerifyFull,
}

/// Where a PostgreSQL database is, read from its URL.
pub(crate) struct PgAt {
    pub config: postgres::Config,
    pub schema: String,
    pub tls: Tls,
}

/// Whether `given` (a `--db` value) is a PostgreSQL URL.
pub fn is_postgres(given: &Path) -> bool {
    let b = given.as_os_str().as_encoded_bytes();
    SCHEMES.iter().any(|s| b.starts_with(s.as_bytes()))
}

/// `given` read as a PostgreSQL URL; None when it is a file name.
pub(crate) fn postgres(given: &Path, shown: &str) -> Result<Option<PgAt>, DbError> {
    if !is_postgres(given) {
        return Ok(None);
    }
    let bad = |what: String| DbError::Refused(format!("{shown}: {what}"));
    let Some(url) = given.to_str() else {
        return Err(bad("is not UTF-8; give a PostgreSQL URL in UTF-8".into()));
    };
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut schema = DEFAULT_SCHEMA.to_string();
    let mut tls = Tls::Prefer;
    let mut rest = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "schema" => schema = v.to_string(),
            "sslmode" => {
                tls = match v {
                    "disable" => Tls::Disable,
                    "prefer" => Tls::Prefer,
                    "require" => Tls::Require,
                    "verify-full" => Tls::VerifyFull,
                    _ => return Err(bad(format!(
                        "sslmode={v} is not one iosurvey knows; give disable, prefer, require or verify-full"
                    ))),
                }
            }
            _ => rest.push(pair),
        }
    }
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    if schema.is_empty()
        || schema.len() > 63
        || !schema.chars().all(ok)
        || schema.starts_with(|c: char| c.is_ascii_digit())
        || schema.starts_with("pg_")
    {
        return Err(bad(format!(
            "schema={schema} is not a schema name iosurvey uses; give lower-case letters, digits and _ (at most 63, not starting with a digit or pg_)"
        )));
    }
    let plain = match rest.is_empty() {
        true => base.to_string(),
        false => format!("{base}?{}", rest.join("&")),
    };
    let mut config: postgres::Config = plain.parse().map_err(|e| {
        bad(format!(
            "is not a PostgreSQL URL iosurvey can read ({e}); give postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
        ))
    })?;
    if config.get_user().is_none() {
        return Err(bad(
            "names no user; give postgres://USER@HOST/DATABASE".into()
        ));
    }
    // The password kept out of the command line, as libpq reads it.
    if config.get_password().is_none() {
        if let Some(pw) = std::env::var_os("PGPASSWORD") {
            config.password(pw.as_encoded_bytes());
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_WAIT);
    }
    config.application_name("iosurvey");
    config.ssl_mode(match tls {
        Tls::Disable => postgres::config::SslMode::Disable,
        Tls::Prefer => postgres::config::SslMode::Prefer,
        Tls::Require | Tls::VerifyFull => postgres::config::SslMode::Require,
    });
    Ok(Some(PgAt {
        config,
        schema,
        tls,
    }))
}

/// `text` with the password of every PostgreSQL URL in it hidden
/// (`postgres://user:***@host/db`, `password=***`).
pub fn redact(text: &str) -> String {
    // The database's URLs and a Pushgateway's (`--metrics-push`, which may
    // carry a password for Basic authentication), whatever their case.
    let lower = text.to_ascii_lowercase();
    let found = SCHEMES.iter().chain(&["http://", "https://"]);
    let Some(at) = found.filter_map(|s| lower.find(s)).min() else {
        return text.to_string();
    };
    let (head, url) = text.split_at(at);
    let start = url.find("://").map_or(0, |i| i + 3);
    // The client takes all up to the last `@` as the user and password
    // (a password may hold `/`, `?` or `#`): hidden from the first `:`.
    let mut out = format!("{head}{}", &url[..start]);
    let mut rest = &url[start..];
    if let Some(last_at) = rest.rfind('@') {
        let cred = &rest[..last_at];
        match cred.find(':') {
            Some(colon) => out.push_str(&format!("{}:***", &cred[..colon])),
            None => out.push_str(cred),
        }
        rest = &rest[last_at..];
    }
    // `password=` in the query, by its name as the client decodes it
    // (`pass%77ord`), to the next `&`.
    let mut from = 0;
    while let Some(eq) = rest[from..].find('=').map(|i| from + i) {
        let key_start = rest[..eq].rfind(['?', '&']).map_or(0, |i| i + 1);
        let value_end = rest[eq..].find('&').map_or(rest.len(), |i| eq + i);
        if percent_decoded(&rest[key_start..eq]).eq_ignore_ascii_case("password") {
            out.push_str(&rest[..=eq]);
            out.push_str("***");
            rest = &rest[value_end..];
            from = 0;
        } else {
            from = eq + 1;
        }
    }
    out.push_str(rest);
    out
}

/// `s` with its `%XX` escapes decoded (bytes that are not UTF-8 lost).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A command line with the passwords of its PostgreSQL URLs hidden: what
/// reports and the database keep of it.
pub fn redact_args(argv: &[String]) -> Vec<String> {
    argv.iter().map(|a| redact(a)).collect()
}

/// The connector for `tls`; an error says why TLS could not be set up.
pub(crate) fn connector(tls: Tls) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("setting up TLS: {e}"))?;
    let config = match tls {
        Tls::VerifyFull => {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Tls::Disable | Tls::Prefer | Tls::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
            .with_no_client_auth(),
    };
    Ok(MakeRustlsConnect::new(config))
}

/// Takes any certificate, as libpq's `sslmode=require` does (the
/// handshake's signatures are still checked: the session is encrypted to
/// the holder of the certificate's key).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

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
            &self.0.signature_verification_algorithms,
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
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden_and_the_rest_kept() {
        assert_eq!(
            redact("postgres://u:s3cret@h:5432/db?sslmode=require"),
            "postgres://u:***@h:5432/db?sslmode=require"
        );
        assert_eq!(
            redact("--db=postgresql://u:p@ss@h/db"),
            "--db=postgresql://u:***@h/db"
        );
        assert_eq!(
            redact("postgres://u@h/db?password=x&schema=s"),
            "postgres://u@h/db?password=***&schema=s"
        );
        assert_eq!(redact("/tmp/h.db"), "/tmp/h.db");
        for (given, hidden) in [
            ("postgres://u:pa/ss@h/db", "postgres://u:***@h/db"),
            ("postgres://u:pa?ss@h/db", "postgres://u:***@h/db"),
            ("postgres://u:pa#ss@h/db", "postgres://u:***@h/db"),
            (
                "postgres://u@h/db?password=a b&x=1",
                "postgres://u@h/db?password=***&x=1",
            ),
            (
                "postgres://u@h/db?pass%77ord=zz",
                "postgres://u@h/db?pass%77ord=***",
            ),
            ("HTTP://u:pw@gw:9091", "HTTP://u:***@gw:9091"),
        ] {
            assert_eq!(redact(given), hidden, "{given}");
        }
    }

    #[test]
    fn schema_and_sslmode_are_read_and_bad_ones_refused() {
        let at = postgres(
            Path::new("postgres://u@h/db?schema=fleet_1&sslmode=disable"),
            "x",
        )
        .unwrap()
        .unwrap();
        assert_eq!((at.schema.as_str(), at.tls), ("fleet_1", Tls::Disable));
        for bad in [
            "postgres://u@h/db?schema=Bad-Name",
            "postgres://u@h/db?sslmode=allow",
            "postgres://h/db",
        ] {
            assert!(matches!(
                postgres(Path::new(bad), "x"),
                Err(DbError::Refused(_))
            ));
        }
        assert!(postgres(Path::new("h.db"), "x").unwrap().is_none());
    }
}
