import type { NextConfig } from 'next';

/**
 * Said on every answer the console gives (ADR 0111): no page may frame it (its Apply, Approve and
 * Terminate buttons cannot be clicked through a same-site page's frame), no browser reads an answer
 * as another type than it says, and no other site learns the console's addresses from a Referer.
 * Only `frame-ancestors` from CSP: a script policy would need nonces for Next's inline scripts.
 */
const securityHeaders = [
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'Content-Security-Policy', value: "frame-ancestors 'none'" },
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'same-origin' },
];

const config: NextConfig = {
  // The console never ships with type errors: the build type-checks, as `npm run typecheck` does,
  // except in `npm test`, which builds it only after that step type-checked these same files (ADR 0092).
  typescript: { ignoreBuildErrors: process.env.SAGAFLOW_CONSOLE_TYPES_CHECKED === '1' },
  reactStrictMode: true,
  poweredByHeader: false,
  headers: async () => [{ source: '/:path*', headers: securityHeaders }],
};

export default config;
