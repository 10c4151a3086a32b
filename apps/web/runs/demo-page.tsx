'use client';

import Link from 'next/link';
import { useRoleAllows } from '@/auth/use-session';
import { StartDemoRun } from './start-demo-run';
import { StartRunForm } from './start-run-form';

/** The demo's own page: starting a demo run is kept off the on-call runs list (issue 10). */
export function DemoPage() {
  const canStart = useRoleAllows('operator');
  return (
    <>
      <div className="page-head">
        <h1>Demo</h1>
      </div>
      <p>
        Starts one <span className="mono">demo.order</span> run (charge card, reserve stock, ship) to see a run go
        through the engine. It then shows in the <Link href="/runs">runs list</Link> like any other. Or start any
        registered flow with an input of your own: the form follows the flow&apos;s input schema.
      </p>
      {canStart ? (
        <>
          <StartDemoRun />
          <StartRunForm />
        </>
      ) : (
        <p className="muted">Starting a run needs the operator role; you are signed in as a viewer.</p>
      )}
    </>
  );
}
