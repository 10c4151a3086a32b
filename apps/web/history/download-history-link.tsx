/**
 * "Download history (JSON)": everything recorded about a run or an instance, as a file (the
 * control plane's /history download through the console's proxy, behind the same session).
 */
export function DownloadHistoryLink({ kind, id }: { kind: 'run' | 'instance'; id: string }) {
  return (
    <a
      className="download-history"
      href={`/api/history/${kind === 'run' ? 'runs' : 'instances'}/${encodeURIComponent(id)}`}
      download
      data-testid="download-history"
    >
      Download history (JSON)
    </a>
  );
}
