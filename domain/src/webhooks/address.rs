//! Which URLs an endpoint may have and which addresses are never called:
//! loopback, private, shared, link-local (cloud metadata among them),
//! multicast, unspecified and reserved ranges, in IPv4 and IPv6 (and IPv4
//! inside IPv6). Checked on registration and again on every connection,
//! after name resolution, unless the operator allows internal addresses.

use crate::error::{Error, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Longest URL an endpoint may have.
pub const MAX_URL_CHARS: usize = 2048;

/// The URL's host and whether it is an IP literal; 400 `invalid_url` for
/// one that is not `http(s)://host[:port]/...` within
/// [`MAX_URL_CHARS`], or that carries credentials.
pub fn url(s: &str) -> Result<url::Url> {
    let bad = |why: &str| Error::invalid("invalid_url", why.to_owned());
    if s.len() > MAX_URL_CHARS {
        return Err(bad("a URL is at most 2,048 characters"));
    }
    let u = url::Url::parse(s).map_err(|e| bad(&format!("not a URL: {e}")))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(bad("a URL is http:// or https://"));
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(bad("a URL carries no credentials"));
    }
    if u.host().is_none() {
        return Err(bad("a URL names a host"));
    }
    Ok(u)
}

/// Whether an endpoint may never be called at `ip` (unless the operator
/// allows internal addresses).
pub fn internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => internal_v6(v6),
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_unspecified()
        || ip.is_documentation()
        || a == 0
        // Shared address space (carrier-grade NAT), 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24.
        || (a == 192 && b == 0 && c == 0)
        // Benchmarking, 198.18.0.0/15.
        || (a == 198 && (b == 18 || b == 19))
        // Reserved, 240.0.0.0/4.
        || a >= 240
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return internal_v4(v4);
    }
    let s = ip.segments();
    // IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96) carry an IPv4
    // address that some networks reach.
    let embedded = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0, 0, 0, 0, 0, 0] || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return ip.is_unspecified() || ip.is_loopback() || internal_v4(embedded);
    }
    let v4 = |a: u16, b: u16| Ipv4Addr::new((a >> 8) as u8, a as u8, (b >> 8) as u8, b as u8);
    // 6to4 (2002::/16) carries an IPv4 address after its prefix; Teredo
    // (2001::/32) its client's, inverted.
    if s[0] == 0x2002 && internal_v4(v4(s[1], s[2])) {
        return true;
    }
    if s[0] == 0x2001 && s[1] == 0 && internal_v4(v4(!s[6], !s[7])) {
        return true;
    }
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // Local-use NAT64, 64:ff9b:1::/48.
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
        // Unique local, fc00::/7 (cloud metadata services among them).
        || (s[0] & 0xfe00) == 0xfc00
        // Link-local, fe80::/10, and the old site-local, fec0::/10.
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        // Documentation, 2001:db8::/32.
        || (s[0] == 0x2001 && s[1] == 0xdb8)
}

/// Where a URL's requests go: an address, or a name to resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Ip(IpAddr),
    Name(String, u16),
}

/// The target of a URL [`url`] accepted.
pub fn target(u: &url::Url) -> Target {
    let port = u.port_or_known_default().unwrap_or(443);
    match u.host() {
        Some(url::Host::Ipv4(ip)) => Target::Ip(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Target::Ip(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) => Target::Name(d.to_owned(), port),
        None => Target::Name(String::new(), port),
    }
}

/// 400 `webhook_address_refused`, naming the address.
pub fn refused(host: &str, ip: IpAddr) -> Error {
    Error::invalid(
        "webhook_address_refused",
        format!("{host} is {ip}, an internal address (loopback, private, link-local or reserved): endpoints must be public unless the operator allows internal ones (--webhook-allow-internal)"),
    )
}
