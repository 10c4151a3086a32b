import type { SqlDriver } from '../../src/db/database.ts';
import type { SchemaShape } from './database-schema.ts';

/**
 * The expectation with each partial index's predicate in PostgreSQL's own spelling, so it compares
 * with what the catalog deparses (`status IN ('a', 'b')` is stored as `= ANY (ARRAY[...])`, columns
 * lose their quotes). Each predicate is given to a probe index on its table in a transaction that
 * is rolled back: the server that will run the migrations is the one that parses it.
 */
export async function deparsePredicates(driver: SqlDriver, expected: SchemaShape): Promise<SchemaShape> {
  const indexes = { ...expected.indexes };
  const partial = Object.entries(indexes).filter(([, idx]) => idx.predicate !== null);
  await driver
    .transaction(async (tx) => {
      for (const [i, [name, idx]] of partial.entries()) {
        const probe = `drift_probe_${i}`;
        const columns = idx.columns.map((c) => `"${c}"`).join(', ');
        await tx.exec(`create index "${probe}" on "sagaflow"."${idx.table}" (${columns}) where ${idx.predicate}`);
        const [row] = await tx.query<{ predicate: string }>(
          `select pg_get_expr(ix.indpred, ix.indrelid) as predicate from pg_index ix
            where ix.indexrelid = '"sagaflow"."${probe}"'::regclass`,
        );
        indexes[name] = { ...idx, predicate: row?.predicate ?? null };
      }
      throw new ProbesDone();
    })
    .catch((e: unknown) => {
      if (!(e instanceof ProbesDone)) throw e;
    });
  return { ...expected, indexes };
}

/** Rolls the probes back once every predicate is read. */
class ProbesDone extends Error {}
