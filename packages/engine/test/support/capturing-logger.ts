import { Writable } from 'node:stream';
import { pino } from 'pino';

/** A pino logger (info and up) whose JSON lines land in `lines`, as a host would read them. */
export function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}
