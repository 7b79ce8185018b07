// A run's results: overall figures, kernel and transfer times, timeline, processes, energy,
// collective calls, the memory hierarchy and the components.
import { fmt, fmtEnergy, fmtTime } from "../../lib/format.js";
import { Bars } from "../../components/charts/Bars.jsx";
import { Gantt } from "../../components/charts/Gantt.jsx";
import { ganttInput } from "../../components/charts/ganttLayout.js";
import { GridTable, TABLE_PAGE_SIZE } from "../../components/GridTable.jsx";
import { MemoryHierarchy, memoryNames, memoryText } from "./MemoryHierarchy.jsx";
import { ModelWarning, modelWarningLines } from "./ModelWarning.jsx";
import { PowerWarning, powerMissingLines } from "./PowerWarning.jsx";
import { EnergyAccounting } from "./EnergyAccounting.jsx";
import { accountingLabel, accountingOf } from "./energy.js";
import { KernelWaves } from "./KernelWaves.jsx";
import { CostAndFailures } from "./CostAndFailures.jsx";
import { Interval } from "./Interval.jsx";
import { intervalNote } from "./interval.js";
import { Collectives } from "./Collectives.jsx";
import { LinkUtilisation } from "./LinkUtilisation.jsx";
import { KERNEL_CHARTS, boundText, detailedKernels, phases } from "./runs.js";

const PHASE_KINDS = { compute: "kernel (compute)", transfer: "transfer", memory: "memory access" };

export function Results({ result, memoryCsvUrl }) {
  const energy = result.energy_j; // {total, per_component, ...}: the simulator's one shape
  const ph = phases(result);
  const components = result.components || [];
  const nodeName = Object.fromEntries(components.map((c) => [c.node, c.name || c.node]));
  const energyItems = components
    .filter((c) => c.energy_j > 0)
    .map((c) => ({ label: `${c.name || c.node}[${c.instance}]`, value: c.energy_j }));
  const memoryName = memoryNames(result.memory);
  const detailed = detailedKernels(ph);
  const hasMemoryPhases = ph.some((t) => t.kind === "memory");
  const showMemoryTime =
    Boolean(result.memory) || (result.processes || []).some((p) => p.memory_s > 0);
  return (
    <div className="results">
      <div className="cards">
        <div className="card">
          <span className="card-label">Overall time</span>
          <strong data-testid="overall-time">{fmtTime(result.overall_time_s)}</strong>
          {result.uncertainty && (
            <span className="muted card-note" data-testid="overall-time-interval">
              {intervalNote(result.uncertainty, "overall_time_s", fmtTime)}
            </span>
          )}
        </div>
        <div className="card">
          <span className="card-label">Energy</span>
          <strong data-testid="energy">{fmtEnergy(energy.total)}</strong>
          <span className="muted card-note">{accountingLabel(accountingOf(result))}</span>
          {result.uncertainty && (
            <span className="muted card-note" data-testid="energy-interval">
              {intervalNote(result.uncertainty, "energy_j", fmtEnergy)}
            </span>
          )}
        </div>
        <div className="card">
          <span className="card-label">Reliability (P success)</span>
          <strong data-testid="reliability">{fmt(result.reliability?.p_success, 6)}</strong>
        </div>
        <div className="card">
          <span className="card-label">Events</span>
          <strong>{result.stats?.events ?? "—"}</strong>
        </div>
      </div>
      <ModelWarning scope="This run's" lines={modelWarningLines(result)} />
      <PowerWarning scope="This run's" lines={powerMissingLines(result)} />
      <h2>{hasMemoryPhases ? "Kernel, transfer and memory times" : "Kernel and transfer times"}</h2>
      <GridTable
        label="Kernel and transfer times"
        pageSize={TABLE_PAGE_SIZE}
        columns={[
          "Process",
          "Kind",
          "Node",
          "Direction",
          "Bytes",
          hasMemoryPhases ? "Bound by / detail" : "Bound by",
          "Start",
          "Duration",
        ]}
      >
        {ph.map((t, i) => (
          <tr key={i} data-kind={t.kind}>
            <td>{t.process}</td>
            <td>{PHASE_KINDS[t.kind]}</td>
            <td>{t.node ? `${nodeName[t.node] || t.node}[${t.instance ?? 0}]` : ""}</td>
            <td>{t.direction || ""}</td>
            <td>{t.size ? fmt(t.size) : ""}</td>
            <td data-testid={`bound-${i}`}>
              {t.kind === "memory" ? memoryText(t.detail, memoryName) : boundText(t.detail)}
            </td>
            <td>{fmtTime(t.start_s)}</td>
            <td className="num" data-testid={`phase-${i}`}>
              {fmtTime(t.duration)}
            </td>
          </tr>
        ))}
      </GridTable>
      {detailed.length > 0 && (
        <section aria-label="Detailed kernels">
          <h2>Detailed kernels: waves and SMs</h2>
          {detailed.length > KERNEL_CHARTS && (
            <p className="muted">
              The first {KERNEL_CHARTS} of {detailed.length} kernels simulated block by block; the
              table above lists them all.
            </p>
          )}
          <div className="kernel-charts">
            {detailed.slice(0, KERNEL_CHARTS).map((k) => (
              <KernelWaves key={k.index} kernel={k} />
            ))}
          </div>
        </section>
      )}
      <h2>Timeline</h2>
      <Gantt {...ganttInput(result)} />
      <LinkUtilisation links={result.links} overall={result.overall_time_s} />
      <Collectives calls={result.collectives} />
      <div className="two-col">
        <div>
          <h2>Processes</h2>
          <GridTable
            label="Processes"
            pageSize={TABLE_PAGE_SIZE}
            columns={[
              "Process",
              "Node",
              "Compute",
              showMemoryTime && "Memory",
              "Comm.",
              "Wait",
              "Finish",
            ]}
          >
            {(result.processes || []).map((p) => (
              <tr key={p.process || `${p.label}${p.rank}`}>
                <td>{p.process || `${p.label}[${p.rank}]`}</td>
                <td>
                  {nodeName[p.node] || p.node}[{p.instance}]
                </td>
                <td>{fmtTime(p.compute_s)}</td>
                {showMemoryTime && <td>{fmtTime(p.memory_s)}</td>}
                <td>{fmtTime(p.comm_s)}</td>
                <td>{fmtTime(p.wait_s)}</td>
                <td>{fmtTime(p.finish_s)}</td>
              </tr>
            ))}
          </GridTable>
        </div>
        <div>
          <h2>Energy breakdown</h2>
          <Bars items={energyItems} format={fmtEnergy} label="Energy per component" width={520} />
        </div>
      </div>
      <EnergyAccounting result={result} />
      {result.memory && <MemoryHierarchy memory={result.memory} csvUrl={memoryCsvUrl} />}
      <Interval interval={result.uncertainty} />
      <CostAndFailures result={result} />
      <h2>Components</h2>
      <GridTable
        label="Components"
        pageSize={TABLE_PAGE_SIZE}
        columns={["Node", "Hardware", "Type", "Busy", "Utilisation", "Energy"]}
      >
        {components.map((c) => (
          <tr key={`${c.node}-${c.instance}`}>
            <td>
              {c.name || c.node}[{c.instance}]
            </td>
            <td>{c.hardware}</td>
            <td>{c.type}</td>
            <td>{fmtTime(c.busy_s)}</td>
            <td>{(100 * (c.utilisation || 0)).toFixed(1)}%</td>
            <td>{fmtEnergy(c.energy_j)}</td>
          </tr>
        ))}
      </GridTable>
    </div>
  );
}
