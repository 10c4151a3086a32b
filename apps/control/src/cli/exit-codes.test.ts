import { describe, expect, it } from 'vitest';
import { exitCodeFor, type ApiFailure } from './control-client.ts';
import { exitCodeForRepairStatus } from './exit-codes.ts';

const failure = (httpStatus: number, data: ApiFailure['data'] = {}): ApiFailure => ({
  httpStatus,
  code: 'X',
  message: 'm',
  data,
});

describe('the CLI exit status says done, refused, awaiting approval, unauthorised, error or usage', () => {
  it.each([
    ['applied', 0],
    ['awaiting_approval', 4],
    ['conflict', 2],
    ['refused', 2],
    ['something_new', 2],
  ])('a repair answering %s exits %i', (status, code) => {
    expect(exitCodeForRepairStatus(status)).toBe(code);
  });

  it.each([
    ['401 (no or refused token)', failure(401), 3],
    ['403 (role too low, foreign Host)', failure(403), 3],
    ['429 (too many refused tokens)', failure(429), 3],
    ['409 with a repair body (repair_conflict / repair_refused)', failure(409, { repair: { current: {} } }), 2],
    ['409 without one (an operator name taken)', failure(409), 1],
    ['400 naming a field', failure(400, { field: 'input.reason' }), 64],
    ['413 (too large)', failure(413), 64],
    ['404', failure(404), 1],
    ['500', failure(500), 1],
  ])('%s exits %i', (_label, f, code) => {
    expect(exitCodeFor(f)).toBe(code);
  });
});
