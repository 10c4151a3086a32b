import { describe, expect, it } from 'vitest';
import { EngineError } from '../errors/engine-error.ts';
import {
  defaultStoreRetry,
  isTransientStoreError,
  noStoreRetry,
  storeRetryDelay,
  withStoreRetry,
} from './store-retry.ts';

const sqlError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('store retry', () => {
  it.each([
    ['serialization failure', sqlError('40001'), true],
    ['deadlock', sqlError('40P01'), true],
    ['connection failure class 08', sqlError('08006'), true],
    ['admin shutdown', sqlError('57P01'), true],
    ['connection reset', sqlError('ECONNRESET'), true],
    ['Prisma write conflict', sqlError('P2034'), true],
    [
      'wrapped by the driver adapter',
      Object.assign(new Error('raw query failed'), {
        meta: { driverAdapterError: { cause: { originalCode: '40P01' } } },
      }),
      true,
    ],
    ['in the cause chain', new Error('outer', { cause: sqlError('40001') }), true],
    ['by message only', new Error('ERROR: deadlock detected'), true],
    ['a retryable engine error', new EngineError('version_conflict', 'moved'), true],
    ['unique violation', sqlError('23505'), false],
    ['syntax error', sqlError('42601'), false],
    ['a bad input', new EngineError('invalid_input', 'no'), false],
    ['a plain bug', new TypeError('undefined is not a function'), false],
    ['not an error', 'oops', false],
  ])('%s → transient: %s', (_label, err, expected) => {
    expect(isTransientStoreError(err)).toBe(expected);
  });

  it('backs off from 100 ms doubling up to 2 s', () => {
    expect([1, 2, 3, 4, 5, 6, 9].map((a) => storeRetryDelay(defaultStoreRetry, a))).toEqual([
      100, 200, 400, 800, 1600, 2000, 2000,
    ]);
  });

  it('gives up after ten attempts and rethrows the last error', async () => {
    const waits: number[] = [];
    let calls = 0;
    const err = sqlError('40001');
    await expect(
      withStoreRetry(
        defaultStoreRetry,
        async () => {
          calls++;
          throw err;
        },
        async (ms) => waits.push(ms),
      ),
    ).rejects.toBe(err);
    expect(calls).toBe(10);
    expect(waits).toEqual([100, 200, 400, 800, 1600, 2000, 2000, 2000, 2000]);
  });

  it('succeeds as soon as the store answers again', async () => {
    let calls = 0;
    const r = await withStoreRetry(
      defaultStoreRetry,
      async () => {
        if (++calls < 3) throw sqlError('40P01');
        return 'ok';
      },
      async () => undefined,
    );
    expect([r, calls]).toEqual(['ok', 3]);
  });

  it('does not retry a non-transient error, nor anything with no retry configured', async () => {
    let calls = 0;
    await expect(
      withStoreRetry(
        defaultStoreRetry,
        async () => {
          calls++;
          throw sqlError('23505');
        },
        async () => undefined,
      ),
    ).rejects.toThrow();
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      withStoreRetry(
        noStoreRetry,
        async () => {
          calls++;
          throw sqlError('40001');
        },
        async () => undefined,
      ),
    ).rejects.toThrow();
    expect(calls).toBe(1);
  });
});
