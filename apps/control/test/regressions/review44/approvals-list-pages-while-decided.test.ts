import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
  createTestOperator,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli as cli } from '../../support/run-cli.ts';

/**
 * ADR 0113: `approvals list` is "keyset paged with the same shell-quoted next page line as the other
 * lists", pending by default. The second operator pages through the queue one at a time and decides
 * each approval before asking for the next page: every pending approval must be listed exactly once,
 * none skipped because the ones before it left the pending list.
 */
describe('approvals list --cursor while the listed approvals are decided between pages', () => {
  let plane: ControlPlane;
  const env = { ana: {}, ben: {} } as Record<'ana' | 'ben', Record<string, string>>;
  let anaCookie = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r44_approvals_paging'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    for (const who of ['ana', 'ben'] as const) {
      const cookie = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
      if (who === 'ana') anaCookie = cookie;
      const { token } = await apiClient(plane.url, cookie).tokens.create.mutate({ name: `${who}-cli` });
      env[who] = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
    }
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('each of three pending approvals is listed once, newest first, though each is decided before the next page', async () => {
    const drafted: string[] = [];
    for (let i = 0; i < 3; i++) {
      const runId = await startWaitingRun(plane, anaCookie);
      const d = await cli(['terminate', runId, '--reason', `draft ${i}`], env.ana);
      expect(d.code, d.err + d.out).toBe(4);
      drafted.push(/approval\s+([0-9a-f-]{36})/.exec(d.out)?.[1] ?? '');
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const listed = await cli(
        ['approvals', 'list', '--limit', '1', '--json', ...(cursor === null ? [] : ['--cursor', cursor])],
        env.ben,
      );
      expect(listed.code, listed.err).toBe(0);
      const doc = JSON.parse(listed.out) as { items: { id: string }[]; nextCursor: string | null };
      for (const a of doc.items) {
        seen.push(a.id);
        const decided =
          seen.length % 2 === 1
            ? await cli(['approve', a.id], env.ben)
            : await cli(['reject', a.id, '--reason', 'paged'], env.ben);
        expect(decided.code, decided.err).toBe(0);
      }
      cursor = doc.nextCursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual([...drafted].reverse());
  });
});
