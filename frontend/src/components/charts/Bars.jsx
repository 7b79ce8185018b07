import { color } from "../../lib/chart.js";
import { useChartWidth } from "../../hooks/useChartWidth.js";
import { fmt } from "../../lib/format.js";

// Horizontal bar chart: [{label, value}] with a unit formatter.
export function Bars({ items, format = fmt, label, width: preferred = 560 }) {
  const [box, width] = useChartWidth(preferred, 320);
  if (!items || !items.length) return <p className="muted">Nothing to chart.</p>;
  const max = Math.max(...items.map((i) => i.value)) || 1;
  const left = 170;
  const row = 26;
  const height = items.length * row + 10;
  return (
    <figure className="chart" aria-label={label}>
      <div ref={box} className="chart-box">
        <svg width={width} height={height} role="img" aria-label={label}>
          {items.map((item, i) => {
            const w = ((width - left - 110) * item.value) / max;
            return (
              <g key={item.label}>
                <text x={left - 8} y={i * row + 18} fontSize="12" textAnchor="end">
                  {item.label}
                </text>
                <rect
                  x={left}
                  y={i * row + 5}
                  width={Math.max(1, w)}
                  height={row - 8}
                  fill={color(i)}
                />
                <text x={left + w + 6} y={i * row + 18} fontSize="12">
                  {format(item.value)}
                </text>
              </g>
            );
          })}
        </svg>
      </div>
    </figure>
  );
}
