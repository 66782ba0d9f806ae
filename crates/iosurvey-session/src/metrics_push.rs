//! `--metrics-push URL`: the live metrics sent to a Prometheus Pushgateway
//! by a thread of their own, so that a slow or absent gateway never holds
//! up the run. Each push replaces the group's metrics (HTTP PUT), so the
//! series of a finished point go with it; the newest body waiting is the
//! only one sent. The gateway is asked whether it is ready before any I/O.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

/// How long the check before the run may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a push may take.
const PUSH_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the end of the run waits for the last push.
const FINISH_WAIT: Duration = Duration::from_secs(3);

/// The gateway's address, checked: `http://HOST[:PORT][/PATH]`, with the
/// group's path made from the job name and the host.
#[derive(Clone, Debug)]
pub struct Gateway {
    /// The URL as given, for messages.
    pub given: String,
    /// Where the metrics are PUT.
    pub group: String,
    /// The gateway's readiness check.
    ready: String,
}

/// Why `--metrics-push` cannot be used: said before any I/O (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error(
        "--metrics-push {0}: give the Pushgateway as http://HOST:PORT (https is not built in)"
    )]
    NotHttp(String),
    #[error("--metrics-push {0}: the Pushgateway did not answer its readiness check ({1}); start it or give its address")]
    NotReady(String, String),
}

impl Gateway {
    /// Parses `url` and names the group of the run: its host and, as
    /// `instance`, a hash of its targets' paths, so that runs on other
    /// targets of one host keep apart and the same test run again
    /// replaces its own.
    pub fn parse(url: &str, host: &str, targets: &str) -> Result<Gateway, GatewayError> {
        let shown = iosurvey_db::redact(url);
        let bad = || GatewayError::NotHttp(shown.clone());
        let base = url.trim_end_matches('/');
        if !base
            .get(..7)
            .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
        {
            return Err(bad());
        }
        let rest = &base[7..];
        if rest.contains(['?', '#', ' ', '\t', '\n']) {
            return Err(bad());
        }
        let authority = rest.split('/').next().unwrap_or("");
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let port_ok = match host_port.rsplit_once(':') {
            // An IPv6 literal's colons are inside its brackets.
            Some((h, p)) if !p.contains(']') => {
                !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0)
            }
            _ => !host_port.is_empty(),
        };
        if !port_ok {
            return Err(bad());
        }
        let base = format!("http://{rest}");
        let instance = iosurvey_db::hash::hex64(targets.as_bytes());
        Ok(Gateway {
            given: shown,
            group: format!(
                "{base}/metrics/job/iosurvey/{}/{}",
                segment("host", host),
                segment("instance", &instance)
            ),
            ready: format!("{base}/-/ready"),
        })
    }

    /// Asks the gateway whether it is ready.
    pub fn check(&self) -> Result<(), GatewayError> {
        agent(CHECK_TIMEOUT)
            .get(&self.ready)
            .call()
            .map(drop)
            .map_err(|e| GatewayError::NotReady(self.given.clone(), one_line(&e)))
    }
}

/// A grouping key's `label/value` in the path: as it is when it is
/// letters, digits, `-`, `.` and `_`, else (a `/` in a host name, an empty
/// value) `label@base64/` and the value in URL-safe base64, as the
/// Pushgateway reads it.
fn segment(label: &str, v: &str) -> String {
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_');
    if !v.is_empty() && v.bytes().all(plain) {
        return format!("{label}/{v}");
    }
    format!("{label}@base64/{}", base64_url(v.as_bytes()))
}

/// URL-safe base64, with padding (`=` alone for nothing).
fn base64_url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if bytes.is_empty() {
        return "=".into();
    }
    let mut o = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                o.push(char::from(A[(n >> (18 - 6 * k) & 63) as usize]));
            } else {
                o.push('=');
            }
        }
    }
    o
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(timeout)
        .redirects(0)
        .build()
}

fn one_line(e: &ureq::Error) -> String {
    let text = iosurvey_db::redact(&e.to_string().replace('\n', " "));
    text.replacen("Network Error: Network Error:", "Network Error:", 1)
}

/// The thread that pushes, and what it was last told.
pub struct Pusher {
    send: Option<Sender<String>>,
    /// The last push's failure (or none), once the thread is done.
    done: Option<Receiver<Option<String>>>,
    /// The first failure, said once on stderr.
    failed: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    said: bool,
}

impl Pusher {
    /// Starts the thread that pushes to `gw`.
    pub fn start(gw: Gateway) -> Pusher {
        let (send, recv) = channel::<String>();
        let (done_tx, done) = channel::<Option<String>>();
        let failed = std::sync::Arc::new(std::sync::Mutex::new(None));
        let f = std::sync::Arc::clone(&failed);
        let started = std::thread::Builder::new()
            .name("iosurvey-push".into())
            .spawn(move || {
                let _ = done_tx.send(push_all(&gw, &recv, &f));
            });
        Pusher {
            send: Some(send),
            done: started.ok().map(|_| done),
            failed,
            said: false,
        }
    }

    /// Queues `body` (the newest body queued is the one pushed).
    pub fn push(&mut self, body: String) {
        if let Some(s) = &self.send {
            let _ = s.send(body);
        }
    }

    /// A failure not said yet, once.
    pub fn new_failure(&mut self) -> Option<String> {
        if self.said {
            return None;
        }
        let f = self.failed.lock().ok()?.clone()?;
        self.said = true;
        Some(f)
    }

    /// Waits for the last body to be pushed, at most [`FINISH_WAIT`]: the
    /// last push's failure, if it failed or did not end in time (the
    /// thread is then left to the process's exit).
    pub fn finish(&mut self) -> Option<String> {
        self.send = None;
        let done = self.done.take()?;
        match done.recv_timeout(FINISH_WAIT) {
            Ok(last) => last,
            Err(_) => Some(format!(
                "the last push did not end within {} s",
                FINISH_WAIT.as_secs()
            )),
        }
    }
}

/// Pushes each newest body until the channel closes; the last push's
/// failure, if any.
fn push_all(
    gw: &Gateway,
    recv: &Receiver<String>,
    failed: &std::sync::Mutex<Option<String>>,
) -> Option<String> {
    let agent = agent(PUSH_TIMEOUT);
    let mut last = None;
    while let Ok(mut body) = recv.recv() {
        while let Ok(newer) = recv.try_recv() {
            body = newer;
        }
        let sent = agent
            .put(&gw.group)
            .set("Content-Type", "text/plain; version=0.0.4")
            .send_string(&body);
        last = match sent {
            Ok(_) => None,
            Err(e) => {
                let why = format!(
                    "--metrics-push {}: pushing failed: {}",
                    gw.given,
                    one_line(&e)
                );
                if let Ok(mut f) = failed.lock() {
                    f.get_or_insert_with(|| why.clone());
                }
                Some(why)
            }
        };
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_is_the_job_the_host_and_the_targets() {
        let g = Gateway::parse("HTTP://u:pw@127.0.0.1:9091/", "node 1/a", "t").unwrap();
        let instance = iosurvey_db::hash::hex64(b"t");
        assert_eq!(
            g.group,
            format!(
                "http://u:pw@127.0.0.1:9091/metrics/job/iosurvey/host@base64/bm9kZSAxL2E=/instance/{instance}"
            )
        );
        assert_eq!(g.ready, "http://u:pw@127.0.0.1:9091/-/ready");
        assert_eq!(g.given, "HTTP://u:***@127.0.0.1:9091/");
        let plain = Gateway::parse("http://[::1]:9091/base", "vm.lan", "t").unwrap();
        let tail = format!("/base/metrics/job/iosurvey/host/vm.lan/instance/{instance}");
        assert!(plain.group.ends_with(&tail), "{}", plain.group);
        for bad in [
            "https://x:9091",
            "127.0.0.1:9091",
            "http://",
            "http://x/?a=b",
            "http://x:99999",
            "http://x:",
            "http://exa mple:1",
        ] {
            assert!(Gateway::parse(bad, "h", "t").is_err(), "{bad}");
        }
        assert_eq!(base64_url(b""), "=");
        assert_eq!(base64_url(b"ab"), "YWI=");
        assert_eq!(base64_url(b"\xfb\xff"), "-_8=");
    }

    #[test]
    fn a_gateway_that_is_not_there_is_said() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let g = Gateway::parse(&format!("http://127.0.0.1:{port}"), "h", "t").unwrap();
        let e = g.check().unwrap_err().to_string();
        assert!(e.contains("did not answer its readiness check"), "{e}");
        assert!(!e.contains('\n'));
    }
}
