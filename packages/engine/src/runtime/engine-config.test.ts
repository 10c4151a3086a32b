import { describe, expect, it } from 'vitest';
import { parseEngineConfig } from './engine-config.ts';

describe('engine config is parsed once, and a bad value names its key', () => {
  it('defaults: reclaim and the doctor are off; locks off with a 900 s TTL', () => {
    const c = parseEngineConfig(undefined);
    expect(c.reclaim.actions).toEqual({ enabled: false, after_seconds: 900 });
    expect(c.reclaim.compensations).toEqual({ enabled: false, after_seconds: 900 });
    expect(c.repair).toMatchObject({ enabled: false, grace_seconds: 60 });
    expect(c.locks).toEqual({ enabled: false, action_ttl_seconds: 900 });
    expect(c.monitor.expiration.defaults).toEqual({ action: null, compensation: null, run: null });
    expect(c.monitor.expiration.backoff).toEqual({ base_seconds: 30, max_seconds: 3600 });
  });

  it('defaults: embedded maintenance is on, every 60 s', () => {
    expect(parseEngineConfig(undefined).maintenance).toEqual({ enabled: true, interval_ms: 60_000 });
  });

  it.each([
    [{ reclaim: { actions: { after_seconds: -5 } } }, 'reclaim.actions.after_seconds'],
    [{ repair: { grace_seconds: 0 } }, 'repair.grace_seconds'],
    [{ worker: { concurrency: 0 } }, 'worker.concurrency'],
    [{ reclaim: { actions: { enabeld: true } } }, 'reclaim.actions.enabeld'],
    [{ monitors: {} }, 'monitors'],
    [{ monitor: { expiration: { defaults: { run: -1 } } } }, 'monitor.expiration.defaults.run'],
    [{ monitor: { expiration: { backoff: { max_seconds: 0 } } } }, 'monitor.expiration.backoff.max_seconds'],
    [{ monitor: { expiration: { defaults: { step: 5 } } } }, 'monitor.expiration.defaults.step'],
    [{ maintenance: { interval_ms: 0 } }, 'maintenance.interval_ms'],
    [{ maintenance: { enabled: 'no' } }, 'maintenance.enabled'],
  ])('%j is refused, naming %s', (input, key) => {
    expect(() => parseEngineConfig(input)).toThrow(
      new RegExp(`invalid engine config at "${key.replaceAll('.', '\\.')}"`),
    );
  });
});
