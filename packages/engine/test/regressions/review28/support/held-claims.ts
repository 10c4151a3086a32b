import type { Database } from '../../../../src/db/database.ts';
import type { RawStatement } from '../../../../src/db/raw-db.ts';

/**
 * The database handle with the pool's claim (`/* sagaflow: job claims *\/`) intercepted: once the
 * claim has committed and answered, `after(rows)` runs before the pool sees the rows (hold it at a
 * gate there: the claim's runs are marked, the pool does not know it yet).
 */
export function holdClaims(db: Database, after: (rows: unknown) => Promise<void>): Database {
  const isClaim = (s: RawStatement) => s.text.includes('sagaflow: job claims');
  const statement = (s: RawStatement, limits?: Parameters<Database['driver']['statement']>[1]) => {
    const p = db.driver.statement(s, limits);
    if (!isClaim(s)) return p;
    return p.then(async (rows) => {
      await after(rows);
      return rows;
    });
  };
  const driver = {
    ...db.driver,
    raw: (s: RawStatement) => {
      const p = db.driver.raw(s);
      if (!isClaim(s)) return p;
      return p.then(async (rows) => {
        await after(rows);
        return rows;
      });
    },
    statement,
  };
  return { ...db, driver };
}
