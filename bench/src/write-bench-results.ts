import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Writes `markdown` and `json` as `bench/results/<UTC timestamp>-<name>[-quick].{md,json}` and returns
 * the two paths. Each run gets its own dated pair; nothing is overwritten.
 */
export async function writeBenchResults(
  resultsDir: string,
  startedAt: Date,
  quick: boolean,
  markdown: string,
  json: unknown,
  name = 'peer',
): Promise<string[]> {
  await mkdir(resultsDir, { recursive: true });
  const stamp = startedAt.toISOString().slice(0, 16).replace(':', '').replace('T', '-') + 'Z';
  const base = join(resultsDir, `${stamp}-${name}${quick ? '-quick' : ''}`);
  await writeFile(`${base}.md`, markdown);
  await writeFile(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  return [`${base}.md`, `${base}.json`];
}

export const readmeStart = '<!-- bench:peer:start -->';
export const readmeEnd = '<!-- bench:peer:end -->';

/**
 * Replaces what stands between the bench markers in the README with `table`. Refuses (and changes
 * nothing) when the markers are missing, so a README without a bench section is never rewritten.
 * Then formats the README with the repository's Prettier.
 */
export async function updateReadmeTable(readmePath: string, table: string): Promise<void> {
  const text = await readFile(readmePath, 'utf8');
  const start = text.indexOf(readmeStart);
  const end = text.indexOf(readmeEnd);
  if (start < 0 || end < start) {
    throw new Error(`${readmePath} has no ${readmeStart} … ${readmeEnd} pair; add them where the bench table goes.`);
  }
  const updated = `${text.slice(0, start + readmeStart.length)}\n${table.trim()}\n${text.slice(end)}`;
  await writeFile(readmePath, updated);
  // The repository checks the README with Prettier; the table goes in the way Prettier lays it out.
  const root = dirname(readmePath);
  await promisify(execFile)(join(root, 'node_modules', '.bin', 'prettier'), ['--write', readmePath], { cwd: root });
}
