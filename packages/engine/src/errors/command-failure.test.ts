import { describe, expect, it } from 'vitest';
import { commandFailure, EngineError } from './engine-error.ts';

describe('commandFailure', () => {
  it("keeps Prisma's last line and drops its source path and excerpt", () => {
    const prisma = new Error(
      [
        'Invalid `db.flowRun.findUnique()` invocation in',
        '/work/review49/packages/engine/src/store/find-run.ts:4:21',
        '',
        '  1 import type { Db } from "./types.ts";',
        '→ 4   return db.flowRun.findUnique(',
        'Transaction API error: A query cannot be executed on an expired transaction.',
      ].join('\n'),
    );
    const err = commandFailure(prisma);
    expect(err).toBeInstanceOf(EngineError);
    expect(err.code).toBe('internal');
    expect(err.message).toBe(
      'the command failed in the database: Transaction API error: A query cannot be executed on an expired transaction.',
    );
    expect(err.cause).toBe(prisma);
  });

  it('replaces a source path left in a one-line message, and passes an EngineError through', () => {
    expect(commandFailure(new Error('failed at /srv/app/dist/store/x.mjs:10:2 badly')).message).toBe(
      'the command failed in the database: failed at <source> badly',
    );
    const own = new EngineError('run_not_found', 'run x does not exist');
    expect(commandFailure(own)).toBe(own);
  });
});
