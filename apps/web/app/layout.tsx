import type { Metadata } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { ApprovalsNavLink } from '@/approvals/approvals-nav-link';
import { SessionMenu } from '@/auth/session-menu';
import { OperatorsNavLink } from '@/operators/operators-nav-link';
import { ConsoleProviders } from '@/trpc/console-providers';
import './global.css';
import '../repairs/repairs.css';

export const metadata: Metadata = {
  title: { default: 'Sagaflow console', template: '%s · Sagaflow' },
  description: 'Runs, steps and history of Sagaflow sagas.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <ConsoleProviders>
          <header className="topbar">
            <Link href="/" className="brand">
              Sagaflow
            </Link>
            <nav>
              <Link href="/">Overview</Link>
              <Link href="/runs">Runs</Link>
              <Link href="/instances">Instances</Link>
              <Link href="/anomalies">Anomalies</Link>
              <Link href="/audit">Audit</Link>
              <Link href="/definitions">Definitions</Link>
              <ApprovalsNavLink />
              <Link href="/demo">Demo</Link>
              <OperatorsNavLink />
            </nav>
            <SessionMenu />
          </header>
          <main>{children}</main>
        </ConsoleProviders>
      </body>
    </html>
  );
}
