// The export condition under which @sagaflow/engine resolves to its TypeScript sources (src/)
// instead of its build (dist/). The workspace runs with it (vitest, tsx, tsc's customConditions) so
// that tests and `npm start` need no build; a host that installs the package never sets it.
export const sourceCondition = '@sagaflow/source';

/** NODE_OPTIONS with the source condition added once, for a process that runs workspace TypeScript. */
export function withSourceCondition(nodeOptions = '') {
  const flag = `--conditions=${sourceCondition}`;
  return nodeOptions.includes(flag) ? nodeOptions : `${nodeOptions} ${flag}`.trim();
}

/** NODE_OPTIONS without the source condition, for a process that runs built JavaScript (dist/). */
export function withoutSourceCondition(nodeOptions = '') {
  return nodeOptions
    .split(/\s+/)
    .filter((o) => o !== '' && o !== `--conditions=${sourceCondition}`)
    .join(' ');
}
