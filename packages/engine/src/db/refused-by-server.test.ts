import { describe, expect, it } from 'vitest';
import { refusedByServer } from './refused-by-server.ts';

const serverError = (code: string, severity: string) => Object.assign(new Error(code), { code, severity });

describe('refusedByServer', () => {
  it("is true for the server's errors after which the session lives on and nothing of the statement was written", () => {
    expect(refusedByServer(serverError('23505', 'ERROR'))).toBe(true);
    expect(refusedByServer(serverError('40P01', 'ERROR'))).toBe(true);
    expect(refusedByServer(serverError('57014', 'ERROR'))).toBe(true);
    // A server whose lc_messages is German: the severity's text is translated, the code is not.
    expect(refusedByServer(serverError('23505', 'FEHLER'))).toBe(true);
  });

  it('is false where the statement may have committed: a session ended or broken off, a failure on the client', () => {
    expect(refusedByServer(serverError('57P01', 'FATAL'))).toBe(false);
    // A session the server ended, whatever language its severity is in.
    expect(refusedByServer(serverError('57P01', 'ERROR'))).toBe(false);
    expect(refusedByServer(serverError('08P01', 'FATAL'))).toBe(false);
    expect(refusedByServer(serverError('XX000', 'PANIC'))).toBe(false);
    expect(refusedByServer(serverError('53100', 'FATAL'))).toBe(false);
    expect(refusedByServer(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(refusedByServer(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    expect(refusedByServer(undefined)).toBe(false);
  });
});
