import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { makePgliteTemplates, type PgliteTemplates } from './pglite-templates.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplates: PgliteTemplates;
  }
}

/** Makes the PGlite template data directories once for the run; every test file opens a copy (ADR 0065). */
export default async function setup(project: TestProject): Promise<() => void> {
  const templates = await makePgliteTemplates();
  project.provide('pgliteTemplates', templates);
  return () => rmSync(templates.root, { recursive: true, force: true });
}
