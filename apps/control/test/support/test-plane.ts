import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { expect, inject } from 'vitest';
import '../provided-context.ts';
import type { AppRouter } from '../../src/api/app-router.ts';

/** A fresh, migrated database on the test cluster (a clone of the template), named after `label`. */
export function testDatabaseUrl(label: string): Promise<string> {
  return createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName(label), { template: inject('pgTemplate') });
}

/** A tRPC client for a control plane listening at `url`. */
export function apiClient(url: string) {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc` })] });
}

/** What a refused call told the client: its message, HTTP status and the field it named. */
export async function rejection(p: Promise<unknown>) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCClientError);
  const e = err as TRPCClientError<AppRouter>;
  return {
    message: e.message,
    status: e.data?.httpStatus,
    field: (e.data as { field?: string | null } | undefined)?.field,
  };
}
