import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const engineDir = fileURLToPath(new URL('..', import.meta.url));
const repoMigrations = fileURLToPath(new URL('../../../prisma/migrations', import.meta.url));

describe('the engine package ships what an embedding service needs', () => {
  it('a packed @sagaflow/engine contains every SQL migration and the generated Prisma client', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts=false'], {
      cwd: engineDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = (JSON.parse(out) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
    const migrations = readdirSync(repoMigrations).filter((n) => /^\d{4}_/.test(n));
    expect(migrations.length).toBeGreaterThan(0);
    for (const m of migrations) expect(files).toContain(`migrations/${m}/migration.sql`);
    expect(files).toContain('src/generated/prisma/client.ts');
    expect(files).toContain('src/index.ts');
    // postpack removed the copy again: the repository keeps one source of migrations.
    expect(existsSync(fileURLToPath(new URL('../migrations', import.meta.url)))).toBe(false);
  });
});
