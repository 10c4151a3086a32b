/**
 * Business time: timers, signal timeouts, retry backoff, job due times, reclaim and run deadlines.
 * Every such comparison is made in SQL against a time this clock supplies, so a test clock can skip
 * time for the whole engine. (Singleton leases use the database clock instead.)
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
