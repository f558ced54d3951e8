//! Identifiers: unguessable ones (session ids, URL elicitation ids), digests that name a
//! secret without revealing it (callers, sessions as task owners), and the canonical JSON that
//! digests of JSON values (a request's binding, an ask) are taken over.

use serde_json::Value;

/// 128 bits from the operating system's CSPRNG, as lowercase hex: visible ASCII, safe in a
/// header value or a URL.
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    hex(&bytes)
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of `bytes`, as lowercase hex.
pub(crate) fn digest_hex(bytes: &[u8]) -> String {
    hex(&sha256(bytes))
}

/// The SHA-256 of `bytes`: sha2's where the `auth` feature brings it in (it uses the CPU's SHA
/// instructions, several times faster than the portable one, and a caller is hashed on every
/// authorized request), the portable one otherwise. The same digest either way.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    #[cfg(feature = "auth")]
    {
        use sha2::Digest;
        sha2::Sha256::digest(bytes).into()
    }
    #[cfg(not(feature = "auth"))]
    {
        hmac_sha256::Hash::hash(bytes)
    }
}

/// JSON with object keys sorted at every level, so equal values give equal bytes whatever the
/// order they arrived in (and whether or not serde_json preserves it): what a digest of a JSON
/// value is taken over.
pub(crate) fn canonical_json(value: &Value) -> Vec<u8> {
    fn write(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push(b'{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend(serde_json::to_vec(key).expect("a string serializes"));
                    out.push(b':');
                    write(&map[key], out);
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write(item, out);
                }
                out.push(b']');
            }
            other => out.extend(serde_json::to_vec(other).expect("a scalar serializes")),
        }
    }
    let mut out = Vec::new();
    write(value, &mut out);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_is_sha256() {
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            super::digest_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(super::sha256(b"abc"), hmac_sha256::Hash::hash(b"abc"));
    }

    #[test]
    fn ids_are_128_bit_hex_and_differ() {
        let (a, b) = (super::random_id(), super::random_id());
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(
            super::digest_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(super::hex(&[0x0a, 0xff]), "0aff");
    }
}
