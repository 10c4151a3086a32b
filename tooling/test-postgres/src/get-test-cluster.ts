import type { PgCluster, StartClusterOptions } from './pg-cluster.ts';
import { startCluster } from './start-cluster.ts';

/**
 * What {@link getTestCluster} returns: a cluster this process started (`external: false`, can be
 * restarted), or the server named by `DATABASE_URL` (`external: true`, `stop()` does nothing).
 */
export type TestCluster =
  | (PgCluster & { readonly external: false })
  | { readonly external: true; readonly adminUrl: string; stop(): Promise<void> };

/**
 * For a vitest `globalSetup`: uses the server in `DATABASE_URL` when set (CI with a service
 * container), otherwise starts a throwaway cluster. Hand `adminUrl` to the tests with `provide`.
 *
 * @example
 * // vitest.global-setup.ts
 * export default async function setup({ provide }: TestProject) {
 *   const cluster = await getTestCluster();
 *   provide('adminUrl', cluster.adminUrl);
 *   return () => cluster.stop();
 * }
 */
export async function getTestCluster(opts?: StartClusterOptions): Promise<TestCluster> {
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl !== undefined && databaseUrl !== '') {
    return { external: true, adminUrl: databaseUrl, stop: async () => {} };
  }
  return { ...(await startCluster(opts)), external: false };
}
