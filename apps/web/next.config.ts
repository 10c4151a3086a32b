import type { NextConfig } from 'next';

const config: NextConfig = {
  // The console never ships with type errors: the build type-checks, as `pnpm typecheck` does.
  typescript: { ignoreBuildErrors: false },
  reactStrictMode: true,
  poweredByHeader: false,
};

export default config;
