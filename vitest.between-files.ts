import { afterAll, vi } from 'vitest';

// The unit, engine-pglite and postgres projects run their files one after another in the same worker
// process (`isolate: false`, ADR 0081). What a file may leave behind in that process's globals is put
// back before the next file starts: the clock (a file that faked it and failed before restoring it).
afterAll(() => {
  vi.useRealTimers();
});
