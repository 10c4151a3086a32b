import { describe, expect, it } from 'vitest';
import { parseEnv } from '../env.ts';
import { parseListenAddress } from './metrics-address.ts';

describe('the metrics and readiness settings', () => {
  it.each([
    ['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
    ['metrics.internal:9464', { host: 'metrics.internal', port: 9464 }],
    ['[::1]:9464', { host: '::1', port: 9464 }],
    ['9464', undefined],
    ['127.0.0.1', undefined],
    ['127.0.0.1:65536', undefined],
    ['::1:9464', undefined],
    [' 127.0.0.1:9464', undefined],
    ['127.0.0.1:', undefined],
  ])('listen address %j parses to %j', (text, want) => {
    expect(parseListenAddress(text)).toEqual(want);
  });

  it('defaults: no token, no address (so /metrics is off), 5 s scrape bound, 2 s readiness bound', () => {
    const env = parseEnv({});
    expect(env.SAGAFLOW_METRICS_TOKEN).toBeUndefined();
    expect(env.SAGAFLOW_METRICS_ADDRESS).toBeUndefined();
    expect(env.SAGAFLOW_METRICS_TIMEOUT_MS).toBe(5000);
    expect(env.SAGAFLOW_READY_TIMEOUT_MS).toBe(2000);
  });

  it.each([
    [{ SAGAFLOW_METRICS_TOKEN: 'short' }, /^invalid setting SAGAFLOW_METRICS_TOKEN: must be at least 16 visible/],
    [{ SAGAFLOW_METRICS_TOKEN: 'has a space in it, long enough' }, /^invalid setting SAGAFLOW_METRICS_TOKEN/],
    [{ SAGAFLOW_METRICS_ADDRESS: '9464' }, /^invalid setting SAGAFLOW_METRICS_ADDRESS: must be host:port/],
    [{ SAGAFLOW_METRICS_TIMEOUT_MS: '10' }, /^invalid setting SAGAFLOW_METRICS_TIMEOUT_MS/],
    [{ SAGAFLOW_READY_TIMEOUT_MS: 'soon' }, /^invalid setting SAGAFLOW_READY_TIMEOUT_MS/],
  ])('a bad value %j is refused naming the setting', (source, message) => {
    expect(() => parseEnv(source)).toThrow(message);
  });

  it('a good token and address are kept', () => {
    const env = parseEnv({ SAGAFLOW_METRICS_TOKEN: 'a'.repeat(32), SAGAFLOW_METRICS_ADDRESS: '[::1]:9464' });
    expect(env.SAGAFLOW_METRICS_TOKEN).toBe('a'.repeat(32));
    expect(env.SAGAFLOW_METRICS_ADDRESS).toEqual({ host: '::1', port: 9464 });
  });
});
