import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/**
 * Runs the real control-plane entry point and returns how it ended: node with tsx's loader, as the
 * other tests' control planes run (tsx's own bin started a second node process for each run).
 */
function runControl(env: Record<string, string>) {
  // The engine from its sources, as everywhere in the workspace (no build needed).
  const r = spawnSync(process.execPath, ['--conditions=@sagaflow/source', '--import', 'tsx', main], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stderr: r.stderr.trim() };
}

describe('control plane start-up refuses bad settings with one clear line and creates nothing', () => {
  let busy: Server;
  let busyPort = 0;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => {
    busy.close();
  });

  it('a port in use names CONTROL_PORT and leaves no data directory behind', () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'sagaflow-ctl-')), 'data');
    const r = runControl({ CONTROL_PORT: String(busyPort), SAGAFLOW_DATA_DIR: dataDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`CONTROL_PORT ${busyPort}`);
    expect(r.stderr.split('\n')).toHaveLength(1);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('an unreachable DATABASE_URL names DATABASE_URL', () => {
    const r = runControl({ CONTROL_PORT: '0', DATABASE_URL: 'postgres://127.0.0.1:1/nothing' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sagaflow control: DATABASE_URL: cannot reach the PostgreSQL server/);
    expect(r.stderr.split('\n')).toHaveLength(1);
  });

  it('a data directory that cannot be written names SAGAFLOW_DATA_DIR', () => {
    const r = runControl({ CONTROL_PORT: '0', SAGAFLOW_DATA_DIR: '/proc/version/data' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SAGAFLOW_DATA_DIR');
    expect(r.stderr.split('\n')).toHaveLength(1);
  });

  it('a malformed setting is named', () => {
    const r = runControl({ CONTROL_PORT: 'eighty' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONTROL_PORT');
  });

  it('an invalid engine setting names the key inside SAGAFLOW_ENGINE_CONFIG', () => {
    const negative = runControl({ CONTROL_PORT: '0', SAGAFLOW_ENGINE_CONFIG: '{"repair":{"grace_seconds":-1}}' });
    expect(negative.code).toBe(1);
    expect(negative.stderr).toMatch(/SAGAFLOW_ENGINE_CONFIG: invalid engine config at "repair\.grace_seconds"/);
    const unknown = runControl({ CONTROL_PORT: '0', SAGAFLOW_ENGINE_CONFIG: '{"reclaim":{"action":{}}}' });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/invalid engine config at "reclaim\.action"/);
    const notJson = runControl({ CONTROL_PORT: '0', SAGAFLOW_ENGINE_CONFIG: '{repair' });
    expect(notJson.stderr).toMatch(/SAGAFLOW_ENGINE_CONFIG: not JSON/);
  });

  it('outbox routes are checked at start-up: a bad key inside SAGAFLOW_OUTBOX_ROUTES is named, and a nats route needs SAGAFLOW_NATS_URL', () => {
    const badUrl = runControl({
      CONTROL_PORT: '0',
      SAGAFLOW_OUTBOX_ROUTES: '{"billing":{"kind":"webhook","url":"ftp://x","secret":"0123456789abcdef"}}',
    });
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toMatch(/invalid setting SAGAFLOW_OUTBOX_ROUTES\.billing\.url/);
    const shortSecret = runControl({
      CONTROL_PORT: '0',
      SAGAFLOW_OUTBOX_ROUTES: '{"billing":{"kind":"webhook","url":"https://x.test/h","secret":"short"}}',
    });
    expect(shortSecret.stderr).toMatch(/SAGAFLOW_OUTBOX_ROUTES\.billing\.secret/);
    const noNats = runControl({ CONTROL_PORT: '0', SAGAFLOW_OUTBOX_ROUTES: '{"inventory":{"kind":"nats"}}' });
    expect(noNats.code).toBe(1);
    expect(noNats.stderr).toMatch(/SAGAFLOW_NATS_URL: required by the nats routes/);
  });
});
