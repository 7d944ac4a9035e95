import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 32 };

function scryptAsync(secret: string, salt: Buffer, keyLength: number, opts: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, keyLength, { ...opts, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A new random secret (API key or token) of 256 bits, URL-safe. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A new random public key (tracking, form, block key) of 128 bits, URL-safe. */
export function newPublicKey(): string {
  return randomBytes(16).toString('hex');
}

/** SHA-256 of a high-entropy secret (tokens): enough, since they cannot be guessed. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Hashes an API key with scrypt and a random salt; the result is self-describing. */
export async function hashApiKey(apiKey: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(apiKey, salt, SCRYPT.keyLength, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** A hash of a random key, used when the client is unknown so that both paths cost the same. */
let decoyHash: Promise<string> | undefined;
export function decoyApiKeyHash(): Promise<string> {
  decoyHash ??= hashApiKey(newSecret());
  return decoyHash;
}

/** Checks an API key against its stored scrypt hash in constant time. */
export async function verifyApiKey(apiKey: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(apiKey, Buffer.from(salt, 'base64'), expected.length, { N: Number(N), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected);
}
