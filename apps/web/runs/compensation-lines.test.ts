import { describe, expect, it } from 'vitest';
import { compensationLines } from './compensation-lines';

describe('compensationLines', () => {
  it('keeps the recorded order and leads each rollback level with a header counting its rows', () => {
    const rows = [
      { rollbackLevel: 1, name: 'demo.cancel-hotel' },
      { rollbackLevel: 1, name: 'demo.cancel-flight' },
      { rollbackLevel: 2, name: 'demo.cancel-car' },
    ];
    expect(
      compensationLines(rows).map((l) => (l.type === 'level' ? `level ${l.level} (${l.count})` : l.compensation.name)),
    ).toEqual(['level 1 (2)', 'demo.cancel-hotel', 'demo.cancel-flight', 'level 2 (1)', 'demo.cancel-car']);
  });
});
