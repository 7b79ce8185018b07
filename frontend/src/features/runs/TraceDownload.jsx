// The run's Chrome trace download (issue 43 item 6): Trace Event Format JSON that Perfetto
// (ui.perfetto.dev, "Open trace file") and chrome://tracing open, one track per simulated
// process and component instance.
export function TraceDownload({ sim, result }) {
  if (!result || !sim.trace_url) return null;
  return (
    <a
      className="button"
      href={sim.trace_url}
      download={`simulation-${sim.id}.trace.json`}
      title="Chrome trace: open it in ui.perfetto.dev or chrome://tracing"
    >
      Download trace (Perfetto)
    </a>
  );
}
