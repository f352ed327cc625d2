//! KMS's cryptography, all of it from RustCrypto crates: key material generation, AES-256-GCM
//! for symmetric keys, RSA-OAEP, RSA and ECDSA signatures, HMAC, ML-KEM (FIPS 203) key
//! encapsulation, the unwrapping of imported key material (RSA-OAEP and RSA-AES key wrap),
//! and the DER encodings (PKCS #8 private keys, SubjectPublicKeyInfo public keys) that KMS
//! returns.
//!
//! Material is kept in the store as raw bytes for symmetric and HMAC keys, as PKCS #8 DER for
//! RSA and ECC keys, and for ML-KEM keys as the expanded decapsulation key followed by the
//! encapsulation key, so this module is the only place that knows the key types.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use ecdsa::signature::hazmat::{PrehashSigner, PrehashVerifier};
use hmac::{Hmac, Mac};
use ml_kem::array::typenum::Unsigned;
use ml_kem::kem::{Decapsulate, Encapsulate};
use ml_kem::{Ciphertext, Encoded, EncodedSizeUser, KemCore, MlKem1024, MlKem512, MlKem768};
use rand_core::{OsRng, RngCore};
use roto_core::{AwsError, AwsResult};
use rsa::pkcs8::der::asn1::BitStringRef;
use rsa::pkcs8::der::Encode;
use rsa::pkcs8::spki::{AlgorithmIdentifierRef, ObjectIdentifier, SubjectPublicKeyInfoRef};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use rsa::traits::PublicKeyParts;
use rsa::{Oaep, Pkcs1v15Sign, Pss, RsaPrivateKey, RsaPublicKey};
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

/// The length of the AES-GCM nonce in a ciphertext blob.
pub const NONCE_LEN: usize = 12;

/// The families of key material KMS holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// AES-256 (`SYMMETRIC_DEFAULT`).
    Symmetric,
    /// RSA of a size in bits.
    Rsa(usize),
    /// NIST P-256.
    P256,
    /// NIST P-384.
    P384,
    /// HMAC with a key of a size in bytes.
    Hmac(usize),
    /// ML-KEM of a parameter set (512, 768 or 1024).
    MlKem(u16),
}

impl Family {
    /// The family of a `KeySpec` (or `DataKeyPairSpec`) that Roto supports.
    pub fn of(spec: &str) -> Option<Family> {
        Some(match spec {
            "SYMMETRIC_DEFAULT" => Family::Symmetric,
            "RSA_2048" => Family::Rsa(2048),
            "RSA_3072" => Family::Rsa(3072),
            "RSA_4096" => Family::Rsa(4096),
            "ECC_NIST_P256" => Family::P256,
            "ECC_NIST_P384" => Family::P384,
            "HMAC_224" => Family::Hmac(28),
            "HMAC_256" => Family::Hmac(32),
            "HMAC_384" => Family::Hmac(48),
            "HMAC_512" => Family::Hmac(64),
            "ML_KEM_512" => Family::MlKem(512),
            "ML_KEM_768" => Family::MlKem(768),
            "ML_KEM_1024" => Family::MlKem(1024),
            _ => return None,
        })
    }

    /// The key usages a key of this family may have.
    pub fn usages(self) -> &'static [&'static str] {
        match self {
            Family::Symmetric => &["ENCRYPT_DECRYPT"],
            Family::Rsa(_) => &["ENCRYPT_DECRYPT", "SIGN_VERIFY"],
            Family::P256 | Family::P384 => &["SIGN_VERIFY", "KEY_AGREEMENT"],
            Family::Hmac(_) => &["GENERATE_VERIFY_MAC"],
            Family::MlKem(_) => &["ENCAPSULATE_DECAPSULATE"],
        }
    }

    /// The encryption algorithms a key of this family supports.
    pub fn encryption_algorithms(self) -> &'static [&'static str] {
        match self {
            Family::Symmetric => &["SYMMETRIC_DEFAULT"],
            Family::Rsa(_) => &["RSAES_OAEP_SHA_1", "RSAES_OAEP_SHA_256"],
            _ => &[],
        }
    }

    /// The signing algorithms a key of this family supports.
    pub fn signing_algorithms(self) -> &'static [&'static str] {
        match self {
            Family::Rsa(_) => &[
                "RSASSA_PKCS1_V1_5_SHA_256",
                "RSASSA_PKCS1_V1_5_SHA_384",
                "RSASSA_PKCS1_V1_5_SHA_512",
                "RSASSA_PSS_SHA_256",
                "RSASSA_PSS_SHA_384",
                "RSASSA_PSS_SHA_512",
            ],
            Family::P256 => &["ECDSA_SHA_256"],
            Family::P384 => &["ECDSA_SHA_384"],
            _ => &[],
        }
    }

    /// The MAC algorithms a key of this family supports.
    pub fn mac_algorithms(self) -> &'static [&'static str] {
        match self {
            Family::Hmac(28) => &["HMAC_SHA_224"],
            Family::Hmac(32) => &["HMAC_SHA_256"],
            Family::Hmac(48) => &["HMAC_SHA_384"],
            Family::Hmac(_) => &["HMAC_SHA_512"],
            _ => &[],
        }
    }
}

fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(format!("cryptography failed: {e}"))
}

/// `n` bytes from the operating system's generator.
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    OsRng.fill_bytes(&mut out);
    out
}

/// New key material for a family.
pub fn generate(family: Family) -> AwsResult<Vec<u8>> {
    match family {
        Family::Symmetric => Ok(random_bytes(32)),
        Family::Hmac(len) => Ok(random_bytes(len)),
        Family::Rsa(bits) => {
            let key = RsaPrivateKey::new(&mut OsRng, bits).map_err(internal)?;
            Ok(key.to_pkcs8_der().map_err(internal)?.as_bytes().to_vec())
        }
        Family::P256 => Ok(p256::SecretKey::random(&mut OsRng)
            .to_pkcs8_der()
            .map_err(internal)?
            .as_bytes()
            .to_vec()),
        Family::P384 => Ok(p384::SecretKey::random(&mut OsRng)
            .to_pkcs8_der()
            .map_err(internal)?
            .as_bytes()
            .to_vec()),
        Family::MlKem(512) => Ok(ml_kem_generate::<MlKem512>()),
        Family::MlKem(768) => Ok(ml_kem_generate::<MlKem768>()),
        Family::MlKem(_) => Ok(ml_kem_generate::<MlKem1024>()),
    }
}

/// The DER SubjectPublicKeyInfo of an asymmetric key's material.
pub fn public_key_der(family: Family, material: &[u8]) -> AwsResult<Vec<u8>> {
    let der = match family {
        Family::Rsa(_) => RsaPublicKey::from(rsa_key(material)?).to_public_key_der(),
        Family::P256 => p256::SecretKey::from_pkcs8_der(material)
            .map_err(internal)?
            .public_key()
            .to_public_key_der(),
        Family::P384 => p384::SecretKey::from_pkcs8_der(material)
            .map_err(internal)?
            .public_key()
            .to_public_key_der(),
        Family::MlKem(level) => {
            let (oid, encapsulation_key) = match level {
                512 => (ML_KEM_512_OID, ml_kem_split::<MlKem512>(material)?.1),
                768 => (ML_KEM_768_OID, ml_kem_split::<MlKem768>(material)?.1),
                _ => (ML_KEM_1024_OID, ml_kem_split::<MlKem1024>(material)?.1),
            };
            let info = SubjectPublicKeyInfoRef {
                algorithm: AlgorithmIdentifierRef {
                    oid,
                    parameters: None,
                },
                subject_public_key: BitStringRef::from_bytes(encapsulation_key)
                    .map_err(internal)?,
            };
            return info.to_der().map_err(internal);
        }
        Family::Symmetric | Family::Hmac(_) => {
            return Err(internal("no public key for symmetric material"))
        }
    };
    Ok(der.map_err(internal)?.as_bytes().to_vec())
}

/// The object identifiers of the ML-KEM parameter sets (NIST's `id-alg-ml-kem-*`).
const ML_KEM_512_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.4.1");
const ML_KEM_768_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.4.2");
const ML_KEM_1024_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.4.3");

fn ml_kem_generate<K: KemCore>() -> Vec<u8> {
    let (decapsulation_key, encapsulation_key) = K::generate(&mut OsRng);
    [
        decapsulation_key.as_bytes().as_slice(),
        encapsulation_key.as_bytes().as_slice(),
    ]
    .concat()
}

/// The decapsulation and encapsulation keys an ML-KEM key's material holds.
fn ml_kem_split<K: KemCore>(material: &[u8]) -> AwsResult<(&[u8], &[u8])> {
    let split = <<K::DecapsulationKey as EncodedSizeUser>::EncodedSize as Unsigned>::USIZE;
    if material.len() <= split {
        return Err(internal("ML-KEM material is too short"));
    }
    Ok(material.split_at(split))
}

fn ml_kem_encapsulate<K: KemCore>(material: &[u8]) -> AwsResult<(Vec<u8>, Vec<u8>)> {
    let encoded = Encoded::<K::EncapsulationKey>::try_from(ml_kem_split::<K>(material)?.1)
        .map_err(internal)?;
    let (ciphertext, secret) = K::EncapsulationKey::from_bytes(&encoded)
        .encapsulate(&mut OsRng)
        .map_err(|_| internal("ML-KEM encapsulation failed"))?;
    Ok((ciphertext.to_vec(), secret.to_vec()))
}

fn ml_kem_decapsulate<K: KemCore>(
    material: &[u8],
    ciphertext: &[u8],
) -> AwsResult<Option<Vec<u8>>> {
    let encoded = Encoded::<K::DecapsulationKey>::try_from(ml_kem_split::<K>(material)?.0)
        .map_err(internal)?;
    let Ok(ciphertext) = Ciphertext::<K>::try_from(ciphertext) else {
        return Ok(None);
    };
    let secret = K::DecapsulationKey::from_bytes(&encoded)
        .decapsulate(&ciphertext)
        .map_err(|_| internal("ML-KEM decapsulation failed"))?;
    Ok(Some(secret.to_vec()))
}

/// A fresh shared secret and its encapsulation (ciphertext) under an ML-KEM key's public half.
pub fn encapsulate(family: Family, material: &[u8]) -> AwsResult<(Vec<u8>, Vec<u8>)> {
    match family {
        Family::MlKem(512) => ml_kem_encapsulate::<MlKem512>(material),
        Family::MlKem(768) => ml_kem_encapsulate::<MlKem768>(material),
        Family::MlKem(_) => ml_kem_encapsulate::<MlKem1024>(material),
        _ => Err(internal("only ML-KEM keys encapsulate")),
    }
}

/// The shared secret an encapsulation carries; `None` when the ciphertext's length does not
/// fit the key (any ciphertext of the right length yields a secret: ML-KEM rejects
/// implicitly).
pub fn decapsulate(
    family: Family,
    material: &[u8],
    ciphertext: &[u8],
) -> AwsResult<Option<Vec<u8>>> {
    match family {
        Family::MlKem(512) => ml_kem_decapsulate::<MlKem512>(material, ciphertext),
        Family::MlKem(768) => ml_kem_decapsulate::<MlKem768>(material, ciphertext),
        Family::MlKem(_) => ml_kem_decapsulate::<MlKem1024>(material, ciphertext),
        _ => Err(internal("only ML-KEM keys decapsulate")),
    }
}

fn rsa_key(material: &[u8]) -> AwsResult<RsaPrivateKey> {
    RsaPrivateKey::from_pkcs8_der(material).map_err(internal)
}

/// Seals `plaintext` under a 256-bit key with `aad`: the nonce, then ciphertext and tag.
pub fn seal(key: &[u8], aad: &[u8], plaintext: &[u8]) -> AwsResult<Vec<u8>> {
    let cipher = Aes256Gcm::new_from_slice(key).map_err(internal)?;
    let nonce = random_bytes(NONCE_LEN);
    let sealed = cipher
        .encrypt(
            Nonce::from_slice(&nonce),
            Payload {
                msg: plaintext,
                aad,
            },
        )
        .map_err(internal)?;
    Ok([nonce, sealed].concat())
}

/// Opens what [`seal`] produced; `None` when the key, the AAD or the bytes do not match.
pub fn open(key: &[u8], aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < NONCE_LEN {
        return None;
    }
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    let cipher = Aes256Gcm::new_from_slice(key).ok()?;
    cipher
        .decrypt(Nonce::from_slice(nonce), Payload { msg: body, aad })
        .ok()
}

/// The OAEP padding of an encryption or wrapping algorithm, by its hash suffix.
fn oaep(algorithm: &str) -> Oaep {
    if algorithm.ends_with("SHA_1") {
        Oaep::new::<sha1::Sha1>()
    } else {
        Oaep::new::<Sha256>()
    }
}

/// RSA-OAEP encryption with the key's public half; `None` when the plaintext is too long.
pub fn rsa_encrypt(
    material: &[u8],
    algorithm: &str,
    plaintext: &[u8],
) -> AwsResult<Option<Vec<u8>>> {
    let public = RsaPublicKey::from(rsa_key(material)?);
    Ok(public.encrypt(&mut OsRng, oaep(algorithm), plaintext).ok())
}

/// RSA-OAEP decryption; `None` when the ciphertext does not decrypt.
pub fn rsa_decrypt(
    material: &[u8],
    algorithm: &str,
    ciphertext: &[u8],
) -> AwsResult<Option<Vec<u8>>> {
    Ok(rsa_key(material)?.decrypt(oaep(algorithm), ciphertext).ok())
}

/// Unwraps key material that a caller wrapped for import under the public half of the RSA
/// wrapping key `wrapping` (PKCS #8 DER): `RSAES_OAEP_SHA_*` wraps the material itself,
/// `RSA_AES_KEY_WRAP_SHA_*` an AES-256 key (RSA-OAEP, as long as the modulus) followed by the
/// material under that key with AES key wrap with padding (RFC 5649). `None` when it does not
/// unwrap.
pub fn unwrap_imported(
    wrapping: &[u8],
    algorithm: &str,
    wrapped: &[u8],
) -> AwsResult<Option<Vec<u8>>> {
    let key = rsa_key(wrapping)?;
    if algorithm.starts_with("RSAES_OAEP") {
        return Ok(key.decrypt(oaep(algorithm), wrapped).ok());
    }
    if wrapped.len() <= key.size() {
        return Ok(None);
    }
    let (wrapped_aes, wrapped_material) = wrapped.split_at(key.size());
    let Ok(aes) = key.decrypt(oaep(algorithm), wrapped_aes) else {
        return Ok(None);
    };
    let Ok(kek) = aes_kw::KekAes256::try_from(aes.as_slice()) else {
        return Ok(None);
    };
    Ok(kek.unwrap_with_padding_vec(wrapped_material).ok())
}

/// Imported key material as it is stored, or `None` when it does not fit the key: 256 bits
/// for a symmetric key, the spec's range of lengths for an HMAC key (28-64 bytes for
/// HMAC_224, up to 128 for HMAC_384 and HMAC_512), a PKCS #8 DER private key of the key's
/// type and size for an asymmetric one, re-encoded so that the same key always stores the
/// same bytes.
pub fn imported_material(family: Family, material: &[u8]) -> Option<Vec<u8>> {
    let der = match family {
        Family::Symmetric => return (material.len() == 32).then(|| material.to_vec()),
        Family::Hmac(min) => {
            let max = if min <= 32 { 64 } else { 128 };
            return (min..=max)
                .contains(&material.len())
                .then(|| material.to_vec());
        }
        Family::Rsa(bits) => {
            let key = RsaPrivateKey::from_pkcs8_der(material).ok()?;
            if key.size() * 8 != bits {
                return None;
            }
            key.to_pkcs8_der().ok()?
        }
        Family::P256 => p256::SecretKey::from_pkcs8_der(material)
            .ok()?
            .to_pkcs8_der()
            .ok()?,
        Family::P384 => p384::SecretKey::from_pkcs8_der(material)
            .ok()?
            .to_pkcs8_der()
            .ok()?,
        Family::MlKem(_) => return None,
    };
    Some(der.as_bytes().to_vec())
}

/// The id of a key's material (`KeyMaterialId`, 64 hex digits): derived from the key id and
/// the material, as KMS derives it, without revealing the material.
pub fn material_id(key_id: &str, material: &[u8]) -> AwsResult<String> {
    Ok(hex::encode(mac(
        "HMAC_SHA_256",
        material,
        key_id.as_bytes(),
    )?))
}

/// The digest a signing algorithm signs, by its suffix.
pub fn digest(algorithm: &str, message: &[u8]) -> Vec<u8> {
    match digest_len(algorithm) {
        48 => Sha384::digest(message).to_vec(),
        64 => Sha512::digest(message).to_vec(),
        _ => Sha256::digest(message).to_vec(),
    }
}

/// The length of the digest a signing algorithm signs.
pub fn digest_len(algorithm: &str) -> usize {
    if algorithm.ends_with("SHA_384") {
        48
    } else if algorithm.ends_with("SHA_512") {
        64
    } else {
        32
    }
}

fn rsa_scheme_sign(
    key: &RsaPrivateKey,
    algorithm: &str,
    digest: &[u8],
) -> Result<Vec<u8>, rsa::Error> {
    let pss = algorithm.starts_with("RSASSA_PSS");
    match (pss, digest_len(algorithm)) {
        (true, 48) => key.sign_with_rng(&mut OsRng, Pss::new::<Sha384>(), digest),
        (true, 64) => key.sign_with_rng(&mut OsRng, Pss::new::<Sha512>(), digest),
        (true, _) => key.sign_with_rng(&mut OsRng, Pss::new::<Sha256>(), digest),
        (false, 48) => key.sign(Pkcs1v15Sign::new::<Sha384>(), digest),
        (false, 64) => key.sign(Pkcs1v15Sign::new::<Sha512>(), digest),
        (false, _) => key.sign(Pkcs1v15Sign::new::<Sha256>(), digest),
    }
}

fn rsa_scheme_verify(key: &RsaPublicKey, algorithm: &str, digest: &[u8], signature: &[u8]) -> bool {
    let pss = algorithm.starts_with("RSASSA_PSS");
    let result = match (pss, digest_len(algorithm)) {
        (true, 48) => key.verify(Pss::new::<Sha384>(), digest, signature),
        (true, 64) => key.verify(Pss::new::<Sha512>(), digest, signature),
        (true, _) => key.verify(Pss::new::<Sha256>(), digest, signature),
        (false, 48) => key.verify(Pkcs1v15Sign::new::<Sha384>(), digest, signature),
        (false, 64) => key.verify(Pkcs1v15Sign::new::<Sha512>(), digest, signature),
        (false, _) => key.verify(Pkcs1v15Sign::new::<Sha256>(), digest, signature),
    };
    result.is_ok()
}

/// Signs a digest with an asymmetric key (ECDSA signatures DER-encoded, as KMS returns them).
pub fn sign(family: Family, material: &[u8], algorithm: &str, digest: &[u8]) -> AwsResult<Vec<u8>> {
    match family {
        Family::Rsa(_) => rsa_scheme_sign(&rsa_key(material)?, algorithm, digest).map_err(internal),
        Family::P256 => {
            let key = p256::ecdsa::SigningKey::from(
                p256::SecretKey::from_pkcs8_der(material).map_err(internal)?,
            );
            let signature: p256::ecdsa::Signature = key.sign_prehash(digest).map_err(internal)?;
            Ok(signature.to_der().as_bytes().to_vec())
        }
        Family::P384 => {
            let key = p384::ecdsa::SigningKey::from(
                p384::SecretKey::from_pkcs8_der(material).map_err(internal)?,
            );
            let signature: p384::ecdsa::Signature = key.sign_prehash(digest).map_err(internal)?;
            Ok(signature.to_der().as_bytes().to_vec())
        }
        Family::Symmetric | Family::Hmac(_) | Family::MlKem(_) => {
            Err(internal("this material cannot sign"))
        }
    }
}

/// Whether `signature` is a valid signature of `digest` by the key.
pub fn verify(
    family: Family,
    material: &[u8],
    algorithm: &str,
    digest: &[u8],
    signature: &[u8],
) -> AwsResult<bool> {
    Ok(match family {
        Family::Rsa(_) => rsa_scheme_verify(
            &RsaPublicKey::from(rsa_key(material)?),
            algorithm,
            digest,
            signature,
        ),
        Family::P256 => {
            let key = p256::ecdsa::VerifyingKey::from(
                p256::SecretKey::from_pkcs8_der(material)
                    .map_err(internal)?
                    .public_key(),
            );
            p256::ecdsa::Signature::from_der(signature)
                .is_ok_and(|s| key.verify_prehash(digest, &s).is_ok())
        }
        Family::P384 => {
            let key = p384::ecdsa::VerifyingKey::from(
                p384::SecretKey::from_pkcs8_der(material)
                    .map_err(internal)?
                    .public_key(),
            );
            p384::ecdsa::Signature::from_der(signature)
                .is_ok_and(|s| key.verify_prehash(digest, &s).is_ok())
        }
        Family::Symmetric | Family::Hmac(_) | Family::MlKem(_) => false,
    })
}

/// The HMAC of `message` under `key` with a MAC algorithm (`HMAC_SHA_256`, ...).
pub fn mac(algorithm: &str, key: &[u8], message: &[u8]) -> AwsResult<Vec<u8>> {
    fn run<M: Mac + KeyInit>(key: &[u8], message: &[u8]) -> AwsResult<Vec<u8>> {
        let mut mac = <M as KeyInit>::new_from_slice(key).map_err(internal)?;
        mac.update(message);
        Ok(mac.finalize().into_bytes().to_vec())
    }
    match algorithm {
        "HMAC_SHA_224" => run::<Hmac<Sha224>>(key, message),
        "HMAC_SHA_384" => run::<Hmac<Sha384>>(key, message),
        "HMAC_SHA_512" => run::<Hmac<Sha512>>(key, message),
        _ => run::<Hmac<Sha256>>(key, message),
    }
}

/// The ECDH shared secret (the x-coordinate) of the key and a peer's DER public key;
/// `None` when the peer key is not a valid key on the same curve.
pub fn shared_secret(
    family: Family,
    material: &[u8],
    peer_der: &[u8],
) -> AwsResult<Option<Vec<u8>>> {
    Ok(match family {
        Family::P256 => {
            let secret = p256::SecretKey::from_pkcs8_der(material).map_err(internal)?;
            p256::PublicKey::from_public_key_der(peer_der)
                .ok()
                .map(|peer| {
                    p256::ecdh::diffie_hellman(secret.to_nonzero_scalar(), peer.as_affine())
                        .raw_secret_bytes()
                        .to_vec()
                })
        }
        Family::P384 => {
            let secret = p384::SecretKey::from_pkcs8_der(material).map_err(internal)?;
            p384::PublicKey::from_public_key_der(peer_der)
                .ok()
                .map(|peer| {
                    p384::ecdh::diffie_hellman(secret.to_nonzero_scalar(), peer.as_affine())
                        .raw_secret_bytes()
                        .to_vec()
                })
        }
        _ => None,
    })
}

/// A fresh data key pair: PKCS #8 DER private key and SubjectPublicKeyInfo DER public key.
pub fn key_pair(family: Family) -> AwsResult<(Vec<u8>, Vec<u8>)> {
    let private = generate(family)?;
    let public = public_key_der(family, &private)?;
    Ok((private, public))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_bytes_open_only_with_the_same_aad() {
        let key = random_bytes(32);
        let sealed = seal(&key, b"ctx", b"secret").unwrap();
        assert_eq!(open(&key, b"ctx", &sealed).unwrap(), b"secret");
        assert!(open(&key, b"other", &sealed).is_none());
        assert!(open(&key, b"ctx", &sealed[..5]).is_none());
    }

    #[test]
    fn ecdsa_signatures_verify_and_tampered_ones_do_not() {
        for family in [Family::P256, Family::P384] {
            let material = generate(family).unwrap();
            let alg = family.signing_algorithms()[0];
            let d = digest(alg, b"message");
            let sig = sign(family, &material, alg, &d).unwrap();
            assert!(verify(family, &material, alg, &d, &sig).unwrap());
            let other = digest(alg, b"messagf");
            assert!(!verify(family, &material, alg, &other, &sig).unwrap());
            assert!(!verify(family, &material, alg, &d, b"junk").unwrap());
        }
    }

    #[test]
    fn rsa_aes_key_wrap_unwraps_and_other_wrappings_do_not() {
        let (wrapping, _) = key_pair(Family::Rsa(2048)).unwrap();
        let public = RsaPublicKey::from(rsa_key(&wrapping).unwrap());
        let aes = random_bytes(32);
        let material = random_bytes(40);
        for algorithm in ["RSA_AES_KEY_WRAP_SHA_1", "RSA_AES_KEY_WRAP_SHA_256"] {
            let mut wrapped = public.encrypt(&mut OsRng, oaep(algorithm), &aes).unwrap();
            let kek = aes_kw::KekAes256::try_from(aes.as_slice()).unwrap();
            wrapped.extend(kek.wrap_with_padding_vec(&material).unwrap());
            assert_eq!(
                unwrap_imported(&wrapping, algorithm, &wrapped).unwrap(),
                Some(material.clone())
            );
            let other = if algorithm.ends_with("SHA_1") {
                "RSA_AES_KEY_WRAP_SHA_256"
            } else {
                "RSA_AES_KEY_WRAP_SHA_1"
            };
            assert_eq!(unwrap_imported(&wrapping, other, &wrapped).unwrap(), None);
            assert_eq!(
                unwrap_imported(&wrapping, algorithm, &wrapped[..200]).unwrap(),
                None
            );
        }
    }

    #[test]
    fn imported_material_must_fit_the_key_spec() {
        assert!(imported_material(Family::Symmetric, &[0; 32]).is_some());
        assert!(imported_material(Family::Symmetric, &[0; 16]).is_none());
        assert!(imported_material(Family::Hmac(28), &[0; 64]).is_some());
        assert!(imported_material(Family::Hmac(28), &[0; 65]).is_none());
        assert!(imported_material(Family::Hmac(64), &[0; 128]).is_some());
        assert!(imported_material(Family::Hmac(64), &[0; 63]).is_none());
        let p256 = generate(Family::P256).unwrap();
        assert_eq!(imported_material(Family::P256, &p256), Some(p256.clone()));
        assert!(imported_material(Family::P384, &p256).is_none());
        assert!(imported_material(Family::Rsa(2048), &p256).is_none());
    }

    #[test]
    fn material_ids_depend_on_key_and_material() {
        let a = material_id("k1", b"material").unwrap();
        assert_eq!(a.len(), 64);
        assert_eq!(a, material_id("k1", b"material").unwrap());
        assert_ne!(a, material_id("k2", b"material").unwrap());
        assert_ne!(a, material_id("k1", b"other").unwrap());
    }

    #[test]
    fn ml_kem_secrets_agree_and_ciphertexts_of_another_length_are_refused() {
        for (level, ciphertext_len, public_len) in
            [(512, 768, 800), (768, 1088, 1184), (1024, 1568, 1568)]
        {
            let family = Family::MlKem(level);
            let material = generate(family).unwrap();
            let (ciphertext, secret) = encapsulate(family, &material).unwrap();
            assert_eq!((ciphertext.len(), secret.len()), (ciphertext_len, 32));
            assert_eq!(
                decapsulate(family, &material, &ciphertext).unwrap(),
                Some(secret.clone())
            );
            let mut tampered = ciphertext.clone();
            tampered[0] ^= 1;
            let rejected = decapsulate(family, &material, &tampered).unwrap().unwrap();
            assert_ne!(rejected, secret);
            assert_eq!(
                decapsulate(family, &material, &ciphertext[1..]).unwrap(),
                None
            );
            let public = &material[material.len() - public_len..];
            assert!(public_key_der(family, &material).unwrap().ends_with(public));
        }
    }

    #[test]
    fn hmac_lengths_follow_the_algorithm() {
        let key = random_bytes(28);
        assert_eq!(mac("HMAC_SHA_224", &key, b"m").unwrap().len(), 28);
        assert_eq!(mac("HMAC_SHA_512", &key, b"m").unwrap().len(), 64);
    }
}
