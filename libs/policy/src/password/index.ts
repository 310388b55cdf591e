// Password surface: SCRAM-SHA-256 verifiers computed in-process so cleartext never reaches SQL.
// Salts come from the caller (the only place randomness enters).
export {
  scramSha256Verifier,
  parseScramVerifier,
  SCRAM_DEFAULT_ITERATIONS,
  SCRAM_SALT_LENGTH,
} from './scram.js';
export {
  PASSWORD_ALPHABET,
  PASSWORD_LENGTH,
  VERIFIER_KEY,
  passwordFromRandomBytes,
  generatedSecretData,
} from './generate.js';
