'use client';

import { createTRPCContext } from '@trpc/tanstack-react-query';
import type { AppRouter } from '@sagaflow/control';

/** Typed query/mutation option factories for the control plane's API (types only from control). */
export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();
