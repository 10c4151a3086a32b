import { describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/create-database.ts';

describe('createDatabase: bad settings fail with a message naming them', () => {
  it('an unreachable PostgreSQL URL says which server could not be reached, hiding the password', async () => {
    const err = await createDatabase({ kind: 'postgres', url: 'postgres://u:secret@127.0.0.1:1/db' }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'database_unreachable' });
    expect((err as Error).message).toContain('127.0.0.1:1');
    expect((err as Error).message).not.toContain('secret');
  });

  it('a data directory that cannot be created is refused before anything is opened', async () => {
    const err = await createDatabase({ kind: 'pglite', dataDir: '/proc/version/sagaflow' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'data_dir_unusable' });
    expect((err as Error).message).toContain('/proc/version/sagaflow');
  });
});
