//! Identifiers: unguessable ones (session ids, URL elicitation ids) and digests that name a
//! secret without revealing it (callers, sessions as task owners).

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
    hex(&hmac_sha256::Hash::hash(bytes))
}

#[cfg(test)]
mod tests {
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
