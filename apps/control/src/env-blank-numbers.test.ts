import { describe, expect, it } from 'vitest';
import { parseEnv } from './env.ts';

// zod's coerce reads '' and ' ' as 0: a blank numeric setting must be refused naming it, not read as
// 0 (or as a "too small" 0) (review 34, ADR 0109).
describe('a blank numeric setting', () => {
  it.each([
    'CONTROL_PORT',
    'SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS',
    'SAGAFLOW_WORKER_CONCURRENCY',
    'SAGAFLOW_SESSION_IDLE_SECONDS',
    'SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS',
  ])('%s blank or a space is refused naming it', (name) => {
    for (const value of ['', ' ', '\t'])
      expect(() => parseEnv({ [name]: value })).toThrow(`invalid setting ${name}: is blank`);
  });

  it('unset still takes the default, and a number is still read', () => {
    expect(parseEnv({}).CONTROL_PORT).toBe(4000);
    expect(parseEnv({ CONTROL_PORT: '0' }).CONTROL_PORT).toBe(0);
    expect(parseEnv({ SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS: '0' }).SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS).toBe(0);
  });

  it('a blank text setting is left to its own rule', () => {
    expect(() => parseEnv({ CONTROL_HOST: '' })).toThrow(/invalid setting CONTROL_HOST/);
  });
});
