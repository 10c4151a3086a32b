import type { NextConfig } from 'next';

const config: NextConfig = {
  // The console never ships with type errors: the build type-checks, as `npm run typecheck` does,
  // except in `npm test`, which builds it only after that step type-checked these same files (ADR 0092).
  typescript: { ignoreBuildErrors: process.env.SAGAFLOW_CONSOLE_TYPES_CHECKED === '1' },
  reactStrictMode: true,
  poweredByHeader: false,
};

export default config;
