'use client';

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink, httpLink, splitLink } from '@trpc/client';
import type { AppRouter } from '@sagaflow/control';
import { useState, type ReactNode } from 'react';
import { bounceIfSignedOut } from '@/auth/bounce-if-signed-out';
import { shouldRetry } from './api-error';
import { TRPCProvider } from './trpc-context';

/** A query input longer than this (as JSON) is sent in a POST's body instead of the URL. */
const maxQueryInputInUrl = 2_000;
/** Batched queries are split so no URL passes this (the control plane's server refuses 16 KB of headers). */
const maxBatchUrlLength = 6_000;

/**
 * One QueryClient and tRPC client per browser tab; all calls go to this origin's /api/trpc. Any
 * call answered 401 (no session, or it ended: idle, absolute expiry, sign-out elsewhere, disabled)
 * sends the page to sign-in, which brings it back here afterwards.
 */
export function ConsoleProviders({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        queryCache: new QueryCache({ onError: bounceIfSignedOut }),
        mutationCache: new MutationCache({ onError: bounceIfSignedOut }),
        defaultOptions: { queries: { retry: shouldRetry, refetchOnWindowFocus: true } },
      }),
  );
  // At most 10 calls per request: the control plane refuses batches over SAGAFLOW_API_MAX_BATCH_SIZE (default 20).
  // A query whose input would not fit in a URL (a bulk preview of hundreds of items) goes alone as a
  // POST, which the control plane takes for a query (ADR 0122 addendum).
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === 'query' && JSON.stringify(op.input ?? null).length > maxQueryInputInUrl,
          true: httpLink({ url: '/api/trpc', methodOverride: 'POST' }),
          false: httpBatchLink({ url: '/api/trpc', maxItems: 10, maxURLLength: maxBatchUrlLength }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
