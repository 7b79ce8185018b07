// One GPU's roofline (log-log) with a point per kernel that ran on it.
import { color } from "../../lib/chart.js";
import { fmt } from "../../lib/format.js";
import { Plot } from "./Plot.jsx";
import { boundLabel, ceilingLines, rooflineDomain, roofPoints } from "./roofline.js";

const giga = (v) => `${fmt(v / 1e9, 4)} G`;

export function RooflineChart({ roof, kernels }) {
  const { x, y } = rooflineDomain(roof, kernels);
  const title = `Roofline of ${roof.name} (${roof.hardware})`;
  return (
    <figure className="chart" aria-label={title}>
      <Plot
        label={`${title}: ${kernels.length} kernel${kernels.length === 1 ? "" : "s"}`}
        x={{ domain: x, log: true }}
        y={{ domain: y, log: true }}
        xLabel="Arithmetic intensity (instructions per byte)"
        yLabel="Instructions per second"
        yFormat={giga}
      >
        {(X, Y) => (
          <>
            <polyline
              className="roof"
              fill="none"
              stroke="#333"
              strokeWidth="2.5"
              points={roofPoints(roof, x[0], x[1])
                .map(([a, b]) => `${X(a)},${Y(b)}`)
                .join(" ")}
            />
            {ceilingLines(roof, x[0], x[1]).map((line) => (
              <g key={`${line.kind}-${line.name}`} className={`ceiling ceiling-${line.kind}`}>
                <polyline
                  fill="none"
                  stroke={line.kind === "compute" ? "#7a4" : "#47a"}
                  strokeWidth="1.5"
                  strokeDasharray="6 3"
                  points={line.points.map(([a, b]) => `${X(a)},${Y(b)}`).join(" ")}
                />
                <text
                  x={X(line.points[line.kind === "compute" ? 1 : 0][0])}
                  y={Y(line.points[line.kind === "compute" ? 1 : 0][1]) - 4}
                  textAnchor={line.kind === "compute" ? "end" : "start"}
                  fontSize="11"
                >
                  {line.name}
                </text>
              </g>
            ))}
            <line
              x1={X(roof.ridge_intensity)}
              x2={X(roof.ridge_intensity)}
              y1={Y(roof.peak_ops_per_s)}
              y2={Y(y[0])}
              stroke="#999"
              strokeDasharray="4 4"
            />
            {kernels.map((k, i) => (
              <circle
                key={i}
                className="kernel-point"
                data-testid={`roofline-point-${i}`}
                cx={X(k.intensity)}
                cy={Y(k.ops_per_s)}
                r="6"
                fill={color(i)}
              >
                <title>
                  {`${k.process} at ${fmt(k.start_s * 1e3)} ms: ${fmt(k.intensity)} inst/B, ` +
                    `${giga(k.ops_per_s)} inst/s, ${boundLabel(k)} bound`}
                </title>
              </circle>
            ))}
          </>
        )}
      </Plot>
      <figcaption className="muted">
        Peak {giga(roof.peak_ops_per_s)} instructions/s (CUDA cores), memory{" "}
        {fmt(roof.peak_bytes_per_s / 1e9, 4)} GB/s, ridge at {fmt(roof.ridge_intensity)}{" "}
        instructions per byte.
        {(roof.ceilings || []).length > 1 &&
          ` Ceilings (an FMA one instruction): ${roof.ceilings
            .map((c) => `${c.name} ${giga(c.ops_per_s)}`)
            .join(", ")}.`}
        {(roof.memory_roofs || []).length > 0 &&
          ` Memory roofs: ${roof.memory_roofs
            .map((m) => `${m.name} ${fmt(m.bytes_per_s / 1e9, 4)} GB/s`)
            .join(", ")}.`}
      </figcaption>
    </figure>
  );
}
