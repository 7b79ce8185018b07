// A run's collective calls (sim.allreduce & co., docs/collectives.md): per call its algorithm,
// bytes on the wire, time, and algorithm and bus bandwidth as nccl-tests defines them; under
// NCCL's cost layer (protocol="nccl" or a protocol's name) the protocol the call ran with.
import { fmt, fmtTime } from "../../lib/format.js";
import { GridTable, TABLE_PAGE_SIZE } from "../../components/GridTable.jsx";

// Bytes per second as GB/s (1e9 bytes/s, nccl-tests' unit); "—" when the call took no time.
export const gbps = (value) => (value === null || value === undefined ? "—" : fmt(value / 1e9));

export function Collectives({ calls }) {
  if (!calls || calls.length === 0) return null;
  return (
    <section aria-label="Collectives">
      <h2>Collectives</h2>
      <GridTable
        label="Collective calls"
        pageSize={TABLE_PAGE_SIZE}
        columns={[
          "Call",
          "Collective",
          "Algorithm",
          "Ranks",
          "Bytes",
          "On the wire",
          "Time",
          "algbw (GB/s)",
          "busbw (GB/s)",
        ]}
      >
        {calls.map((c) => (
          <tr key={c.call}>
            <td>{c.call}</td>
            <td>{c.collective}</td>
            <td>
              {c.requested === "auto" ? `${c.algorithm} (auto)` : c.algorithm}
              {c.protocol && c.protocol !== "ideal" ? `, NCCL ${c.protocol}` : ""}
            </td>
            <td className="num">{c.participants}</td>
            <td className="num">{fmt(c.size)}</td>
            <td className="num">{fmt(c.wire_bytes)}</td>
            <td className="num">{c.time_s === null ? "—" : fmtTime(c.time_s)}</td>
            <td className="num">{gbps(c.algbw)}</td>
            <td className="num" data-testid={`busbw-${c.call}`}>
              {gbps(c.busbw)}
            </td>
          </tr>
        ))}
      </GridTable>
    </section>
  );
}
