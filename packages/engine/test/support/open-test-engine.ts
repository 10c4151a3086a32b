import type { EngineOptions } from '../../src/create-engine.ts';
import { createTestEngine, type TestEngine } from '../../src/testing/create-test-engine.ts';
import { openTestDatabase } from './test-database.ts';

/** The test kit's engine on this project's database (PGlite or the real PostgreSQL). */
export async function openTestEngine(
  options: Omit<EngineOptions, 'db' | 'clock' | 'faults'>,
): Promise<TestEngine & { closeAll(): Promise<void> }> {
  const db = await openTestDatabase();
  const t = await createTestEngine({ ...options, db });
  return Object.assign(t, {
    async closeAll() {
      await t.close();
      await db.close();
    },
  });
}
