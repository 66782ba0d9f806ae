//! `--metrics-push URL`: the live metrics sent to a Prometheus Pushgateway
//! by a thread of their own, so that a slow or absent gateway never holds
//! up the run. Each push replaces the group's metrics (HTTP PUT), so the
//! series of a finished point go with it; the newest body waiting is the
//! only one sent. The gateway is asked whether it is ready before any I/O.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a push, or the check before the run, may take.
const TIMEOUT: Duration = Duration::from_secs(5);

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
    /// Parses `url` and names the group of `host`'s runs.
    pub fn parse(url: &str, host: &str) -> Result<Gateway, GatewayError> {
        let base = url.trim_end_matches('/');
        let Some(rest) = base.strip_prefix("http://") else {
            return Err(GatewayError::NotHttp(url.to_string()));
        };
        let authority = rest.split('/').next().unwrap_or("");
        if authority.is_empty() || rest.contains(['?', '#', ' ']) {
            return Err(GatewayError::NotHttp(url.to_string()));
        }
        Ok(Gateway {
            given: url.to_string(),
            group: format!("{base}/metrics/job/iosurvey/host/{}", segment(host)),
            ready: format!("{base}/-/ready"),
        })
    }

    /// Asks the gateway whether it is ready.
    pub fn check(&self) -> Result<(), GatewayError> {
        agent()
            .get(&self.ready)
            .call()
            .map(drop)
            .map_err(|e| GatewayError::NotReady(self.given.clone(), one_line(&e)))
    }
}

/// A grouping key's value as one path segment: percent-encoded where it
/// is not a letter, digit, `-`, `.` or `_`.
fn segment(v: &str) -> String {
    let mut o = String::new();
    for b in v.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => o.push(b as char),
            _ => o.push_str(&format!("%{b:02X}")),
        }
    }
    if o.is_empty() {
        o.push_str("unknown");
    }
    o
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(TIMEOUT)
        .redirects(0)
        .build()
}

fn one_line(e: &ureq::Error) -> String {
    e.to_string().replace('\n', " ")
}

/// The thread that pushes, and what it was last told.
pub struct Pusher {
    send: Option<Sender<String>>,
    thread: Option<JoinHandle<Option<String>>>,
    /// The first failure, said once on stderr.
    failed: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    said: bool,
}

impl Pusher {
    /// Starts the thread that pushes to `gw`.
    pub fn start(gw: Gateway) -> Pusher {
        let (send, recv) = channel::<String>();
        let failed = std::sync::Arc::new(std::sync::Mutex::new(None));
        let f = std::sync::Arc::clone(&failed);
        let thread = std::thread::Builder::new()
            .name("iosurvey-push".into())
            .spawn(move || push_all(&gw, &recv, &f))
            .ok();
        Pusher {
            send: Some(send),
            thread,
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

    /// Ends the thread once the last body is pushed: the last push's
    /// failure, if it failed.
    pub fn finish(&mut self) -> Option<String> {
        self.send = None;
        self.thread.take().and_then(|t| t.join().ok()).flatten()
    }
}

/// Pushes each newest body until the channel closes; the last push's
/// failure, if any.
fn push_all(
    gw: &Gateway,
    recv: &Receiver<String>,
    failed: &std::sync::Mutex<Option<String>>,
) -> Option<String> {
    let agent = agent();
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
    fn the_group_is_the_job_and_the_host() {
        let g = Gateway::parse("http://127.0.0.1:9091/", "node 1/a").unwrap();
        assert_eq!(
            g.group,
            "http://127.0.0.1:9091/metrics/job/iosurvey/host/node%201%2Fa"
        );
        assert_eq!(g.ready, "http://127.0.0.1:9091/-/ready");
        for bad in [
            "https://x:9091",
            "127.0.0.1:9091",
            "http://",
            "http://x/?a=b",
        ] {
            assert!(Gateway::parse(bad, "h").is_err(), "{bad}");
        }
    }

    #[test]
    fn a_gateway_that_is_not_there_is_said() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let g = Gateway::parse(&format!("http://127.0.0.1:{port}"), "h").unwrap();
        let e = g.check().unwrap_err().to_string();
        assert!(e.contains("did not answer its readiness check"), "{e}");
        assert!(!e.contains('\n'));
    }
}
