// Errors no test awaited fail a vitest run without failing a test, and the runner prints them far above the
// end of a long log. `npm test` names a file (SAGAFLOW_VITEST_UNHANDLED); vitest.config.ts's onUnhandledError
// appends each error to it, and scripts/test.mjs repeats each one among the failed tests at the end.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/**
 * vitest's onUnhandledError: one JSON line per error, with the file and test that were running when it surfaced
 * (with shared workers, ADR 0081, possibly not its cause). Returns nothing, so the error still fails the run.
 * @param {Error & { type?: string, VITEST_TEST_PATH?: string, VITEST_TEST_NAME?: string }} error
 */
export function recordUnhandledError(error) {
  const file = process.env.SAGAFLOW_VITEST_UNHANDLED;
  if (!file) return;
  const entry = {
    type: error.type ?? 'Error',
    message: `${error.name ?? 'Error'}: ${error.message ?? String(error)}`,
    stack: (error.stack ?? '').split('\n').slice(0, 12).join('\n'),
    testPath: error.VITEST_TEST_PATH ?? null,
    testName: error.VITEST_TEST_NAME ?? null,
  };
  appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

/** Each recorded error as one failure line for the end of the log, paths shown from `root`. */
export function unhandledErrorFailures(file, root) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const e = JSON.parse(line);
      const where = e.testPath ? ` while ${fromRoot(e.testPath, root)}${e.testName ? ` › ${e.testName}` : ''} ran` : '';
      return `vitest unhandled ${e.type}${where}: ${e.message}\n${e.stack.replace(/^/gm, '      ')}`;
    });
}

/** `path` relative to `root` when it lies under it. */
export const fromRoot = (path, root) => (path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path);
