//! Protocol versions and the two eras they belong to.

use std::fmt;

/// A published MCP protocol version this server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first version (stdio and HTTP+SSE).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, tool annotations, audio content.
    V2025_03_26,
    /// 2025-06-18: structured tool output, elicitation, resource links.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, JSON Schema 2020-12 by default.
    V2025_11_25,
    /// 2026-07-28: the stateless rewrite (`server/discover`, per-request `_meta`).
    V2026_07_28,
}

/// The two eras of the MCP protocol, which deliver the same features in different ways: with
/// a session opened by `initialize` (2024-11-05 to 2025-11-25), or stateless, each request
/// carrying its own `_meta` (2026-07-28). [`ProtocolVersion::era`] gives a version's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProtocolEra {
    /// 2024-11-05 … 2025-11-25: an `initialize` handshake opens a session.
    Session,
    /// 2026-07-28 and later: no handshake; every request carries its own `_meta`.
    Stateless,
}

/// The 0.1 name of [`ProtocolEra`].
#[doc(hidden)]
#[deprecated(note = "renamed to `ProtocolEra`")]
pub type Era = ProtocolEra;

impl ProtocolVersion {
    /// Every version this server speaks, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
    /// The newest version.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;
    /// The newest version that is negotiated through `initialize`.
    pub const LATEST_SESSION: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version's date string, as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a version string; `None` for a version this server does not speak.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The era this version belongs to.
    pub const fn era(self) -> ProtocolEra {
        match self {
            ProtocolVersion::V2026_07_28 => ProtocolEra::Stateless,
            _ => ProtocolEra::Session,
        }
    }

    /// The versions of one era, oldest first.
    pub fn of_era(era: ProtocolEra) -> impl Iterator<Item = ProtocolVersion> {
        Self::ALL.into_iter().filter(move |v| v.era() == era)
    }

    /// Whether tool results may carry `structuredContent` and tools an `outputSchema`.
    pub fn has_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_version_and_nothing_else() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert_eq!(ProtocolVersion::parse("2025-01-01"), None);
        assert_eq!(ProtocolVersion::parse(""), None);
    }

    #[test]
    fn eras_split_at_2026() {
        let session: Vec<_> = ProtocolVersion::of_era(ProtocolEra::Session).collect();
        assert_eq!(session.len(), 4);
        assert_eq!(*session.last().unwrap(), ProtocolVersion::LATEST_SESSION);
        assert_eq!(ProtocolVersion::LATEST.era(), ProtocolEra::Stateless);
    }
}
