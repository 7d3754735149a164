//! DPoP (RFC 9449): a key of the client's own, generated per OAuth client,
//! that signs a fresh proof for every token request and every request that
//! presents the token, so a stolen token is useless without the key.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use hmac_sha256::Hash;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::json;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A P-256 key that signs DPoP proofs (ES256).
pub(crate) struct DpopKey {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
    /// The public key as a JWK.
    jwk: Jwk,
}

/// A P-256 public key as a JWK (RFC 7517).
#[derive(serde::Serialize)]
struct Jwk {
    kty: &'static str,
    crv: &'static str,
    x: String,
    y: String,
}

impl DpopKey {
    /// A fresh key.
    pub(crate) fn generate() -> Result<Self, String> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| "generating the DPoP key failed".to_owned())?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| "loading the DPoP key failed".to_owned())?;
        // An uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = pair.public_key().as_ref();
        let jwk = Jwk { kty: "EC", crv: "P-256", x: b64(&point[1..33]), y: b64(&point[33..65]) };
        Ok(DpopKey { pair, rng, jwk })
    }

    /// A proof for one request: its method and URL (without query and
    /// fragment), the server's nonce if it gave one, and the hash of the
    /// access token it accompanies.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        nonce: Option<&str>,
        token: Option<&str>,
    ) -> Result<String, String> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let iat = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let mut claims = json!({"jti": uuid::Uuid::new_v4().to_string(), "htm": method, "htu": htu, "iat": iat});
        if let Some(n) = nonce {
            claims["nonce"] = json!(n);
        }
        if let Some(t) = token {
            claims["ath"] = json!(b64(&Hash::hash(t.as_bytes())));
        }
        let input = format!("{}.{}", b64(header.to_string().as_bytes()), b64(claims.to_string().as_bytes()));
        let sig = self.pair.sign(&self.rng, input.as_bytes()).map_err(|_| "signing a DPoP proof failed".to_owned())?;
        Ok(format!("{input}.{}", b64(sig.as_ref())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_with_its_own_jwk_and_binds_the_token() {
        let key = DpopKey::generate().unwrap();
        let proof = key.proof("POST", "https://r.example/mcp?x=1", Some("n1"), Some("tok")).unwrap();
        let parts: Vec<&str> = proof.split('.').collect();
        let decode = |p: &str| -> mcp_protocol::model::JsonObject {
            serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap()
        };
        let (header, claims) = (decode(parts[0]), decode(parts[1]));
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(claims["htu"], "https://r.example/mcp");
        assert_eq!(claims["nonce"], "n1");
        assert_eq!(claims["ath"], b64(&Hash::hash(b"tok")));
        // The signature checks out against the public key in the header.
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header["jwk"]["x"].as_str().unwrap()).unwrap();
        let y = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header["jwk"]["y"].as_str().unwrap()).unwrap();
        let point = [&[4u8][..], &x, &y].concat();
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        let public = ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point);
        public.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig).expect("a valid signature");
        let other = key.proof("POST", "https://r.example/mcp", None, None).unwrap();
        assert_ne!(decode(other.split('.').nth(1).unwrap())["jti"], claims["jti"], "a fresh jti per proof");
    }
}
