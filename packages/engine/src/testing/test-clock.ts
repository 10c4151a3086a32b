import type { Clock } from '../runtime/clock.ts';

/** A clock the test moves: every engine deadline (timers, signal timeouts, retries, reclaim) follows it. */
export class TestClock implements Clock {
  private current: number;
  constructor(start: Date = new Date()) {
    this.current = start.getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  /** Skips time forward. */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError('a test clock only moves forward');
    this.current += ms;
  }
  set(to: Date): void {
    if (to.getTime() > this.current) this.current = to.getTime();
  }
}
