const startedAt = performance.now();

/** One progress line on stderr, stamped with seconds since the bench started; stdout carries only the report. */
export function progress(line: string): void {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1).padStart(5);
  process.stderr.write(`[bench ${seconds}s] ${line}\n`);
}

/** Milliseconds since the bench process loaded this module. */
export function benchElapsedMs(): number {
  return performance.now() - startedAt;
}
