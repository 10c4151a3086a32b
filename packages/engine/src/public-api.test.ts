import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';

const entries = { '@sagaflow/engine': '../src/index.ts', '@sagaflow/engine/testing': '../src/testing/index.ts' };
const reportFile = fileURLToPath(new URL('../public-api.txt', import.meta.url));

/** Every name each entry exports, marked value or type: what a host can import. */
function publicSurface(): string {
  const files = Object.values(entries).map((f) => fileURLToPath(new URL(f, import.meta.url)));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const lines: string[] = [];
  for (const [name, file] of Object.entries(entries)) {
    const source = program.getSourceFile(fileURLToPath(new URL(file, import.meta.url)))!;
    const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!);
    lines.push(`# ${name}`);
    for (const symbol of exports.sort((a, b) => a.name.localeCompare(b.name))) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      lines.push(`${target.flags & ts.SymbolFlags.Value ? 'value' : 'type '} ${symbol.name}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

// The public API is what the two entries export, nothing deeper. A change to it is a release
// decision (a changeset), so it must show up in review: this report is committed and compared.
it('the public exports are the reviewed ones (public-api.txt)', () => {
  const surface = publicSurface();
  if (process.env.SAGAFLOW_UPDATE_API_REPORT === '1') writeFileSync(reportFile, surface);
  expect(
    surface,
    'the public API changed: if intended, add a changeset and run `SAGAFLOW_UPDATE_API_REPORT=1 pnpm exec vitest run packages/engine/src/public-api.test.ts`',
  ).toBe(readFileSync(reportFile, 'utf8'));
}, 120_000);
