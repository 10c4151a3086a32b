import Link from 'next/link';

export default function NotFound() {
  return (
    <section className="panel panel-bad" role="alert">
      <h2>Page not found</h2>
      <p>This console has no page at this address.</p>
      <p className="actions">
        <Link href="/runs">← Go to all runs</Link>
      </p>
    </section>
  );
}
