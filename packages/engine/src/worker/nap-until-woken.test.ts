import { describe, expect, it } from 'vitest';
import { napUntilWoken } from './nap-until-woken.ts';

describe('napUntilWoken', () => {
  it('ends with the timer when nobody wakes it', async () => {
    expect(await napUntilWoken(1, () => undefined)).toBe('poll');
  });

  it('ends at once when woken, and a timer that fires later changes nothing', async () => {
    let wake: () => void = () => undefined;
    const napping = napUntilWoken(60_000, (w) => (wake = w));
    wake();
    expect(await napping).toBe('wake');
  });
});
