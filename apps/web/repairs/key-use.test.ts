import { describe, expect, it } from 'vitest';
import { describeKeyUse, type KeyUse } from './key-use';

const decision = (over: Partial<KeyUse['decisions'][number]> = {}): KeyUse['decisions'][number] => ({
  repairId: 'r1',
  at: '2026-12-06T17:50:01.000Z',
  actor: 'ana',
  command: 'run.cancel',
  status: 'applied',
  targetType: 'run',
  targetId: 'run-1',
  runId: 'run-1',
  approvedBy: null,
  ...over,
});
const draft = (over: Partial<NonNullable<KeyUse['draft']>> = {}): NonNullable<KeyUse['draft']> => ({
  approvalId: 'a1',
  createdAt: '2026-12-06T17:40:00.000Z',
  drafter: 'ana',
  command: 'run.cancel',
  status: 'pending',
  expiresAt: '2026-12-07T17:40:00.000Z',
  decidedBy: null,
  decidedAt: null,
  decisionReason: null,
  ...over,
});

describe('describeKeyUse: what a kept draft says about its key', () => {
  it('a key never used is null: the draft is truly not applied', () => {
    expect(describeKeyUse({ decisions: [], draft: null })).toBeNull();
    expect(describeKeyUse({ decisions: [], draft: null }, 3)).toBeNull();
  });

  it('an applied key names who applied it, and links its audit rows', () => {
    const used = describeKeyUse({ decisions: [decision({ approvedBy: 'ben' })], draft: draft({ status: 'applied' }) });
    expect(used?.applied).toBe(true);
    expect(used?.text).toMatch(
      /^This draft was applied at 2026-12-0\d \d\d:\d\d:\d\d UTC\S* by ana, approved by ben\.$/,
    );
    expect(used?.link.href).toBe('/audit?source=repair&actor=ana&command=run.cancel&target=run-1');
  });

  it('a step repair links the run; a conflict is not applied and says to draft again', () => {
    const used = describeKeyUse({
      decisions: [decision({ status: 'conflict', targetType: 'step', targetId: 'run-1#3' })],
      draft: null,
    });
    expect(used?.applied).toBe(false);
    expect(used?.text).toContain('not applied: what it acts on had changed. Nothing was done');
    expect(used?.link.href).toContain('target=run-1');
  });

  it('a draft pending, rejected or expired says so, with who decided it', () => {
    expect(describeKeyUse({ decisions: [], draft: draft() })?.text).toContain('waits for a second operator');
    const rejected = describeKeyUse({
      decisions: [],
      draft: draft({
        status: 'rejected',
        decidedBy: 'ben',
        decidedAt: '2026-12-06T17:45:00.000Z',
        decisionReason: 'no',
      }),
    });
    expect(rejected).toMatchObject({ applied: false, link: { href: '/approvals?id=a1#approval-a1' } });
    expect(rejected?.text).toMatch(/ and rejected at .* by ben: no\. Nothing was done/);
    expect(describeKeyUse({ decisions: [], draft: draft({ status: 'expired' }) })?.text).toContain(
      'expired unapproved',
    );
  });

  it('a bulk counts what was applied of its items and names who sent it', () => {
    const used = describeKeyUse(
      { decisions: [decision(), decision({ repairId: 'r2', status: 'conflict', targetId: 'run-2' })], draft: null },
      3,
    );
    expect(used?.applied).toBe(true);
    expect(used?.text).toContain('This bulk draft was already sent at');
    expect(used?.text).toContain('by ana: applied to 1 of 3, 1 not applied (changed or refused).');
  });
});
