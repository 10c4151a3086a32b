import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { root } from './ensure-pnpm.mjs';

const file = join(root, '.data', 'demo-admin-password');

/**
 * The demo's first-admin password: SAGAFLOW_ADMIN_PASSWORD when set, otherwise one generated on the
 * first `npm start` and kept (mode 0600) in .data/ beside the embedded database it was used for, so
 * every later start can print it again. The control plane uses it only when it creates the first
 * admin, i.e. on a database with no operator yet.
 */
export function demoAdminPassword() {
  if (process.env.SAGAFLOW_ADMIN_PASSWORD) return { password: process.env.SAGAFLOW_ADMIN_PASSWORD, file: null };
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept.length >= 8) return { password: kept, file };
  }
  const password = randomBytes(12).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return { password, file };
}
