//! DNS-rebinding protection: the `Host` and `Origin` checks every request passes first.

use http::HeaderMap;
use http::header::{HOST, HeaderName, HeaderValue, ORIGIN};

use super::config::HttpConfig;

/// `localhost`, or an IP address literal that is loopback (`127.x.y.z`, `[::1]`). A name that
/// merely starts like one (`127.0.0.1.attacker.example`) is not: such names can resolve to
/// loopback, which is exactly the rebinding attack.
fn is_loopback_name(host: &str) -> bool {
    // The names nearly every local client sends, without parsing an address.
    if host == "127.0.0.1" || host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let literal = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    literal
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a connection's local address is loopback, counting the IPv4-mapped form a
/// dual-stack (`[::]`) listener sees for 127.0.0.1 (`::ffff:127.0.0.1`, which
/// `Ipv6Addr::is_loopback` does not count).
pub(crate) fn is_loopback_ip(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback(),
        std::net::IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
    }
}

/// `host` without its port (`[::1]:80` → `[::1]`).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.rsplit_once(':').map_or(host, |(name, port)| {
        if port.bytes().all(|b| b.is_ascii_digit()) {
            name
        } else {
            host
        }
    })
}

/// The value of `name` when it is there once; `refusal` of the second when it is there twice.
fn single<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
    refusal: fn(String) -> Refusal,
) -> Result<Option<&'h HeaderValue>, Refusal> {
    let mut all = headers.get_all(name).iter();
    let first = all.next();
    match all.next() {
        Some(second) => Err(refusal(
            String::from_utf8_lossy(second.as_bytes()).into_owned(),
        )),
        None => Ok(first),
    }
}

/// Why a request is refused before anything else is read.
pub(crate) enum Refusal {
    Host(String),
    Origin(String),
}

/// `authority` is the request's `:authority` (HTTP/2), used when there is no `Host` header;
/// `local_loopback` whether the request came in through a loopback address (then, unless
/// hosts are listed, the `Host` must be loopback too: go-sdk's rule, GHSA-xw59-hvm2-8pj6).
pub(crate) fn check(
    headers: &HeaderMap,
    authority: Option<&str>,
    config: &HttpConfig,
    local_loopback: bool,
) -> Result<(), Refusal> {
    // Two copies of either could each be read by a different hop: refuse outright.
    let host = single(headers, &HOST, Refusal::Host)?;
    let origin = single(headers, &ORIGIN, Refusal::Origin)?;
    let host = host
        .and_then(|h| h.to_str().ok())
        .or(authority)
        .unwrap_or("");
    let host_ok = match &config.allowed_hosts {
        Some(allowed) => allowed
            .iter()
            .any(|a| a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(host_name(host))),
        None => !local_loopback || is_loopback_name(host_name(host)),
    };
    if !host_ok {
        return Err(Refusal::Host(host.to_owned()));
    }
    if let Some(origin) = origin {
        let origin = origin.to_str().unwrap_or("");
        let name = origin
            .split_once("://")
            .map_or("", |(_, rest)| host_name(rest.trim_end_matches('/')));
        let ok = is_loopback_name(name)
            || config
                .allowed_origins
                .iter()
                .any(|o| o.eq_ignore_ascii_case(origin));
        if !ok {
            return Err(Refusal::Origin(origin.to_owned()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_h(h: &HeaderMap, c: &HttpConfig, loopback: bool) -> Result<(), Refusal> {
        check(h, None, c, loopback)
    }

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn mapped_and_plain_loopback_addresses_are_loopback() {
        for ip in ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback_ip(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["10.0.0.1", "::ffff:10.0.0.1", "0.0.0.0", "::"] {
            assert!(!is_loopback_ip(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn loopback_binds_accept_only_loopback_hosts_and_origins() {
        let c = HttpConfig::default();
        assert!(check_h(&headers("127.0.0.1:8000", None), &c, true).is_ok());
        assert!(
            check_h(
                &headers("localhost:8000", Some("http://localhost:3000")),
                &c,
                true
            )
            .is_ok()
        );
        assert!(check_h(&headers("[::1]:8000", Some("http://[::1]:8000")), &c, true).is_ok());
        assert!(check_h(&headers("evil.example.com", None), &c, true).is_err());
        assert!(check_h(&headers("127.0.0.1.evil.example.com", None), &c, true).is_err());
        assert!(check_h(&headers("127.1.2.3.nip.io:80", None), &c, true).is_err());
        assert!(
            check_h(
                &headers("127.0.0.1:80", Some("http://127.0.0.1.evil.example")),
                &c,
                true
            )
            .is_err()
        );
        assert!(check_h(&headers("127.0.0.2:80", None), &c, true).is_ok());
        assert!(
            check_h(
                &headers("127.0.0.1:8000", Some("http://evil.example.com")),
                &c,
                true
            )
            .is_err()
        );
        assert!(
            check_h(&headers("evil.example.com", None), &c, false).is_ok(),
            "public binds list hosts themselves"
        );
        let c = HttpConfig::default()
            .allowed_hosts(["mcp.example.com"])
            .allowed_origins(["https://app.example.com"]);
        assert!(
            check_h(
                &headers("mcp.example.com:443", Some("https://app.example.com")),
                &c,
                false
            )
            .is_ok()
        );
        assert!(check_h(&headers("other.example.com", None), &c, false).is_err());
    }
}
