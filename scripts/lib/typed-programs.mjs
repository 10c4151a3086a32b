// The TypeScript programs `npm test` type-checks (ADR 0092): every Node package's files as ONE
// program (tsconfig.node-packages.json), then each package whose types differ (DOM) on its own.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const ts = createRequire(import.meta.url)('typescript');

/** The packages checked as programs of their own, by folder: the console and the e2e specs need the DOM's types. */
export const ownPrograms = ['apps/web', 'e2e'];

/** The one program of every other package. */
export const nodeProgram = 'tsconfig.node-packages.json';

/** Each workspace package's folder (pnpm-workspace.yaml's globs, one level deep), relative to `root`. */
export function workspacePackages(root) {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const globs = [...(yaml.split(/^packages:\n/m)[1] ?? '').matchAll(/^ {2}- (\S+)$/gm)].map((m) => m[1]);
  const folders = [];
  for (const glob of globs) {
    if (!glob.endsWith('/*')) folders.push(glob);
    else {
      const parent = glob.slice(0, -2);
      for (const entry of readdirSync(join(root, parent), { withFileTypes: true }))
        if (entry.isDirectory()) folders.push(`${parent}/${entry.name}`);
    }
  }
  return folders.filter((f) => existsSync(join(root, f, 'package.json')) && existsSync(join(root, f, 'tsconfig.json')));
}

/** The files a tsconfig makes a program of, as TypeScript itself reads it (absolute paths). */
export function programFiles(root, tsconfig) {
  const path = join(root, tsconfig);
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (parsed === undefined) throw new Error(`${tsconfig}: TypeScript could not read it`);
  if (parsed.errors.length > 0)
    throw new Error(
      `${tsconfig}: ${parsed.errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, ' ')).join('; ')}`,
    );
  return parsed.fileNames;
}

/**
 * The files some package's own tsconfig.json has that its program in `npm test` does not: none, or a
 * package's files would not be type-checked (nor linted with types) at all. Relative to `root`.
 */
export function filesOutsideTheirProgram(root) {
  const inNodeProgram = new Set(programFiles(root, nodeProgram));
  const missing = [];
  for (const folder of workspacePackages(root)) {
    if (ownPrograms.includes(folder)) continue;
    for (const file of programFiles(root, join(folder, 'tsconfig.json')))
      if (!inNodeProgram.has(file)) missing.push(relative(root, file));
  }
  return missing;
}
