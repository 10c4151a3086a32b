import { randomBytes } from 'node:crypto';
import type { Database } from '@sagaflow/engine';
import { createOperator } from './create-operator.ts';

export interface FirstAdmin {
  name: string;
  /** Set only when generated: shown once, never stored in clear. */
  generatedPassword: string | null;
}

/**
 * On a database with no operator, creates the first admin ("admin") with the configured password,
 * or a generated one that the caller prints once. Does nothing when any operator exists; a replica
 * that loses the race to create it does nothing either.
 */
export async function ensureFirstAdmin(
  prisma: Database['prisma'],
  configuredPassword: string | undefined,
  at: Date,
): Promise<FirstAdmin | null> {
  if ((await prisma.operator.count()) > 0) return null;
  const generatedPassword = configuredPassword ? null : randomBytes(15).toString('base64url');
  try {
    await createOperator(
      prisma,
      {
        name: 'admin',
        displayName: 'Administrator',
        role: 'admin',
        password: configuredPassword ?? generatedPassword ?? '',
      },
      { id: null, name: 'system', address: null, at },
    );
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') return null;
    throw err;
  }
  return { name: 'admin', generatedPassword };
}
