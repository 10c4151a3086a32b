import { hash, verify } from '@node-rs/argon2';

// argon2id with the library's defaults (19 MiB, 2 passes: OWASP's minimum for argon2id).
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

// A hash of nothing anyone knows, verified against when the account does not exist, so an unknown
// name costs the same time as a wrong password and the two cannot be told apart.
let decoy: Promise<string> | undefined;

/** True when `password` matches `passwordHash`; with no hash, spends the same time and answers false. */
export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (passwordHash === null) {
    await verify(await (decoy ??= hash(`decoy-${Math.random()}`)), password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}
