import { describe, expect, it } from 'vitest';
import { passwordProblem } from './password-problem';

const labels = { password: 'New password', repeated: 'Repeat the new password' };

describe('passwordProblem', () => {
  it('refuses a password under 12 characters, naming the field, even when both agree', () => {
    expect(passwordProblem('elevenchars', 'elevenchars', labels)).toEqual({
      field: 'password',
      message: 'New password: at least 12 characters.',
    });
  });

  it('refuses two passwords that differ, naming the repeated field', () => {
    expect(passwordProblem('twelve chars', 'twelve charz', labels)).toEqual({
      field: 'repeated',
      message: 'Repeat the new password: it differs from the new password.',
    });
  });

  it('accepts exactly 12 characters typed twice', () => {
    expect(passwordProblem('twelve chars', 'twelve chars', labels)).toBeNull();
  });
});
