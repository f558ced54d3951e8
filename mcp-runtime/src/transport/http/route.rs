//! Session ids that name the instance that minted them: `<route>-<random>`, so a load
//! balancer can pin a session to its instance with a plain `map` on the id's prefix.

use std::sync::OnceLock;

/// The longest route token: with the 32 hex digits of randomness and the `-`, an id stays
/// within 64 characters (nginx `map`, HAProxy stick tables and gateways that check ids with
/// `^[a-zA-Z0-9-]{1,128}$` all take it).
const MAX_ROUTE: usize = 16;

/// The instance's part of every session id it mints: 1 to 16 ASCII letters and digits
/// (`i1`, `pod7`, `eu2a`). Give each instance of a fleet its own, and route on it at the load
/// balancer (`map $http_mcp_session_id $upstream { ~^i1- i1; … }`).
///
/// ```
/// use mcp_runtime::transport::http::RouteToken;
/// assert!("i1".parse::<RouteToken>().is_ok());
/// assert!("i-1".parse::<RouteToken>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RouteToken(String);

/// Why a route token was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidRouteToken(String);

impl std::fmt::Display for InvalidRouteToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidRouteToken {}

impl RouteToken {
    /// The token `text`, if it is 1 to 16 ASCII letters and digits.
    pub fn new(text: &str) -> Result<RouteToken, InvalidRouteToken> {
        if text.is_empty() || text.len() > MAX_ROUTE {
            return Err(InvalidRouteToken(format!(
                "a route token is 1 to {MAX_ROUTE} characters, not {}",
                text.len()
            )));
        }
        if let Some(bad) = text.chars().find(|c| !c.is_ascii_alphanumeric()) {
            return Err(InvalidRouteToken(format!(
                "a route token is ASCII letters and digits only; {bad:?} is not one"
            )));
        }
        Ok(RouteToken(text.to_owned()))
    }

    /// The token as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// This process's token when none is configured: random, made once, so that the ids one
    /// process mints share a prefix and two processes' ids do not.
    pub(crate) fn process_default() -> &'static RouteToken {
        static TOKEN: OnceLock<RouteToken> = OnceLock::new();
        TOKEN.get_or_init(|| RouteToken(crate::id::random_id()[..8].to_owned()))
    }

    /// A new session id of this instance: `<token>-<128 random bits in hex>`.
    pub(crate) fn session_id(&self) -> String {
        format!("{}-{}", self.0, crate::id::random_id())
    }
}

/// Whether `id` has the form [`RouteToken::session_id`] mints: a token, `-`, 32 lowercase hex
/// digits. Only such an id can name a session in a shared store.
pub(crate) fn is_session_id(id: &str) -> bool {
    id.split_once('-').is_some_and(|(route, random)| {
        RouteToken::new(route).is_ok()
            && random.len() == 32
            && random
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

impl std::str::FromStr for RouteToken {
    type Err = InvalidRouteToken;

    fn from_str(s: &str) -> Result<RouteToken, InvalidRouteToken> {
        RouteToken::new(s)
    }
}

impl std::fmt::Display for RouteToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_short_and_alphanumeric() {
        for good in ["i1", "A", "pod7eu2a", "0123456789abcdef"] {
            assert_eq!(RouteToken::new(good).unwrap().as_str(), good);
        }
        for bad in ["", "i-1", "i_1", "i 1", "é", "0123456789abcdefg", "i1\n"] {
            assert!(RouteToken::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ids_carry_the_route_and_128_random_bits() {
        let token = RouteToken::new("i2").unwrap();
        let (a, b) = (token.session_id(), token.session_id());
        let random = a.strip_prefix("i2-").expect("the route comes first");
        assert_eq!(random.len(), 32);
        assert!(random.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        let default = RouteToken::process_default();
        assert!(RouteToken::new(default.as_str()).is_ok());
        assert_eq!(default, RouteToken::process_default(), "one per process");
        let longest = RouteToken::new("0123456789abcdef").unwrap().session_id();
        assert!(longest.len() <= 64, "{}", longest.len());
        for minted in [&a, &b, &longest, &default.session_id()] {
            assert!(is_session_id(minted), "{minted}");
        }
        let hex = "0123456789abcdef0123456789abcdef";
        for other in [
            String::new(),
            hex.to_owned(),
            format!("-{hex}"),
            format!("i2-{}", &hex[1..]),
            format!("i2-{hex}0"),
            format!("i2-{}", hex.to_uppercase()),
            format!("i-2-{hex}"),
            format!("i2-{hex}\n"),
            "../../etc/passwd".to_owned(),
        ] {
            assert!(!is_session_id(&other), "{other:?}");
        }
    }
}
