// A run's analysis: each kernel's bound, occupancy and arithmetic intensity, each GPU's
// roofline with its kernels, and the components' power over time.
import { fmt, fmtTime } from "../../lib/format.js";
import { GridTable } from "../../components/GridTable.jsx";
import { PowerChart } from "./PowerChart.jsx";
import { RooflineChart } from "./RooflineChart.jsx";
import { boundLabel, rooflineCharts } from "./roofline.js";

const percent = (v) => (typeof v === "number" ? `${(100 * v).toFixed(1)} %` : "—");

export function RunAnalysis({ result }) {
  const kernels = result.kernels;
  if (!kernels) {
    return (
      <p className="muted">
        This run was stored before kernel bounds and rooflines were recorded; run it again to see
        them.
      </p>
    );
  }
  const charts = rooflineCharts(result);
  const power = result.power || [];
  const truncated = result.timeline_dropped > 0;
  const names = Object.fromEntries((result.components || []).map((c) => [c.node, c.name]));
  return (
    <section className="run-analysis" aria-label="Kernel analysis">
      {kernels.length > 0 && (
        <>
          <h2>Kernel bounds</h2>
          <GridTable
            label="Kernel bounds"
            columns={[
              "Process",
              "GPU",
              "Start",
              "Duration",
              "Bound by",
              "Occupancy (warps/SM)",
              "Arithmetic intensity (inst/B)",
              "Achieved (G inst/s)",
              "Of the roof",
            ]}
          >
            {kernels.map((k, i) => (
              <tr key={i}>
                <td>{k.process}</td>
                <td>
                  {names[k.node] || k.node}[{k.instance}]
                </td>
                <td>{fmtTime(k.start_s)}</td>
                <td className="num">{fmtTime(k.duration_s)}</td>
                <td data-testid={`kernel-bound-${i}`}>{boundLabel(k)}</td>
                <td className="num">
                  {fmt(k.occupancy)}
                  {typeof k.occupancy_fraction === "number" &&
                    ` (${percent(k.occupancy_fraction)})`}
                </td>
                <td className="num" data-testid={`kernel-intensity-${i}`}>
                  {fmt(k.intensity)}
                </td>
                <td className="num">{k.ops_per_s ? fmt(k.ops_per_s / 1e9) : "—"}</td>
                <td className="num">{percent(k.roof_fraction)}</td>
              </tr>
            ))}
          </GridTable>
          {truncated && (
            <p className="muted">
              The timeline kept its first {result.timeline.length} entries; kernels after them are
              not listed.
            </p>
          )}
        </>
      )}
      {charts.length > 0 && <h2>Roofline</h2>}
      {charts.map(({ roof, kernels: points }) => (
        <RooflineChart key={roof.node} roof={roof} kernels={points} />
      ))}
      {power.length > 0 && (
        <>
          <h2>Power over time</h2>
          <PowerChart power={power} overall={result.overall_time_s} />
          {truncated && (
            <p className="muted">
              Drawn from the timeline&apos;s first {result.timeline.length} entries: later load is
              missing.
            </p>
          )}
        </>
      )}
    </section>
  );
}
