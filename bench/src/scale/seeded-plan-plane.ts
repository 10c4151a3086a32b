import { parseEnv, startControlPlane, type ControlPlane } from '@sagaflow/control';
import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import pg from 'pg';
import { inject } from 'vitest';
import { signInConsole, type ConsoleHttp } from './console-http.ts';
import { seedConsoleScale, type ConsoleScaleSeed } from './seed-console-scale.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

/** What a plan test works with: the plane, its seed, a signed-in client, a connection to EXPLAIN on. */
export interface SeededPlanPlane {
  plane: ControlPlane;
  seed: ConsoleScaleSeed;
  api: ConsoleHttp;
  explainer: pg.Client;
  stop(): Promise<void>;
}

/** The seeds made in this process: a database holding each (no connection left open on it) and what it wrote. */
const seeded = new Map<string, Promise<{ name: string; seed: ConsoleScaleSeed }>>();

/**
 * A database seeded by the scale bench's seed with `runs` runs, once per process and size: the plan
 * tests of one size each take a copy of it (CREATE DATABASE ... TEMPLATE, a file copy) instead of
 * writing the same rows again. Seeded over a plain client that is closed before any copy is made.
 */
function seededDatabase(runs: number, chunk: number): Promise<{ name: string; seed: ConsoleScaleSeed }> {
  const key = `${runs}/${chunk}`;
  let made = seeded.get(key);
  if (!made) {
    made = (async () => {
      const name = uniqueDatabaseName(`plan_seed_${runs}`);
      const url = await createPgDatabase(inject('pgAdminUrl'), name, { template: inject('pgTemplate') });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const query = async <T>(text: string, values?: readonly unknown[]): Promise<T[]> =>
          (await client.query<T & pg.QueryResultRow>(text, values as unknown[])).rows;
        const seed = await seedConsoleScale({ query }, { runs, chunk });
        return { name, seed };
      } finally {
        await client.end();
      }
    })();
    seeded.set(key, made);
  }
  return made;
}

/**
 * A control plane in this process on a fresh database (named after `label`) seeded with `runs`
 * runs by the scale bench's seed (a copy of this process's seed of that size) and VACUUM ANALYZEd,
 * so the planner's choices are its own. The
 * monitor's interval is at its maximum: the capture sees every statement in this process, and only
 * the console's calls are under test (the sweeps have their own, ADR 0026). `addRows` writes what a
 * test needs beyond the seed, before the ANALYZE.
 */
export async function startSeededPlanPlane(
  label: string,
  runs: number,
  chunk: number,
  addRows?: (sql: ControlPlane['db']['driver']) => Promise<void>,
): Promise<SeededPlanPlane> {
  const { name: template, seed } = await seededDatabase(runs, chunk);
  const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName(label), { template });
  const plane = await startControlPlane(
    parseEnv({
      DATABASE_URL: url,
      CONTROL_PORT: '0',
      LOG_LEVEL: 'silent',
      SAGAFLOW_ADMIN_PASSWORD: 'plan test password',
      SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
    }),
  );
  await addRows?.(plane.db.driver);
  await plane.db.driver.exec('vacuum analyze');
  const api = await signInConsole(plane.url, 'admin', 'plan test password');
  const explainer = new pg.Client({ connectionString: url });
  await explainer.connect();
  return {
    plane,
    seed,
    api,
    explainer,
    stop: async () => {
      await explainer.end();
      await plane.stop();
    },
  };
}
