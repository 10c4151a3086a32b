// `npm run bench` runs the peer comparison (main.ts); `npm run bench -- scale ...` the scale bench
// (scale/main.ts, ADR 0032). Each reads its own flags.
if (process.argv.slice(2).find((a) => a !== '--') === 'scale') await import('./scale/main.ts');
else await import('./main.ts');
