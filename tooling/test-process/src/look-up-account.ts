import { execFileSync } from 'node:child_process';

/** The uid and gid of a local account, or undefined when it does not exist. */
export function lookUpAccount(user: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8', stdio: 'pipe' }).trim());
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}
