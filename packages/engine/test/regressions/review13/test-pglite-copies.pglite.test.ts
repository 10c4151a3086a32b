import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { testCopySettings, type PgliteTemplates } from '../../support/pglite-templates.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * The engine-pglite project's copies (ADR 0065, ADR 0084): a closed copy leaves nothing behind, and
 * every copy starts with the small shared buffers PGlite would otherwise zero on each start.
 */
describe('PGlite test copies', () => {
  it('a closed PGlite copy leaves no directory behind, the templates stay', async () => {
    const templates = inject('pgliteTemplates') as PgliteTemplates | undefined;
    expect(templates, 'the engine-pglite project provides its templates (ADR 0065)').toBeDefined();
    // This file's own copy, by its path: other files open and close copies beside it (two workers).
    const db = await openTestDatabase();
    const copy = db.description;
    expect(dirname(copy)).toBe(templates!.root);
    expect(basename(copy)).toMatch(/^copy-/);
    expect(existsSync(copy)).toBe(true);
    await db.close();
    expect(existsSync(copy)).toBe(false);
    expect(existsSync(templates!.migrated) && existsSync(templates!.fresh)).toBe(true);
  });

  it("a PGlite copy, migrated or not, starts with the test copies' small shared buffers (ADR 0084)", async () => {
    for (const migrated of [true, false]) {
      const db = await openTestDatabase({ migrated });
      try {
        const [row] = await db.driver.query<{ shared_buffers: string }>('show shared_buffers');
        expect(`shared_buffers = ${row!.shared_buffers}`, `migrated: ${migrated}`).toBe(testCopySettings);
      } finally {
        await db.close();
      }
    }
  });
});
