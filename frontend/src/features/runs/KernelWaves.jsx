// The detailed kernel mode's answer as a small chart: each SM's busy share of the kernel (a
// bar per SM), with the waves, the tail and the formula's time beside it.
import { Axes } from "../../components/charts/Axes.jsx";
import { useChartWidth } from "../../hooks/useChartWidth.js";
import { fmtTime } from "../../lib/format.js";
import { waveSummary } from "./runs.js";

const HEIGHT = 150;
const MARGIN = { l: 54, r: 10, t: 10, b: 40 };
const BUSY_TICKS = [0, 0.5, 1];

export function KernelWaves({ kernel }) {
  const [box, width] = useChartWidth(520, 260);
  const { detail } = kernel;
  const busy = detail.smBusy;
  const blocks = detail.smBlocks || [];
  const step = (width - MARGIN.l - MARGIN.r) / busy.length;
  const Y = (v) => HEIGHT - MARGIN.b - v * (HEIGHT - MARGIN.t - MARGIN.b);
  const title = `${kernel.process} at ${fmtTime(kernel.start_s)}`;
  return (
    <figure className="chart kernel-waves" aria-label={`Detailed kernel of ${title}`}>
      <figcaption>
        <strong>{title}</strong> <span className="muted">{waveSummary(detail)}</span>
      </figcaption>
      <div ref={box} className="chart-box">
        <svg
          width={width}
          height={HEIGHT}
          role="img"
          aria-label={`Busy share of each of ${busy.length} SMs`}
        >
          <Axes
            width={width}
            height={HEIGHT}
            margin={MARGIN}
            x={{
              ticks: busy.map((_, i) => ({ at: MARGIN.l + step * (i + 0.5), label: String(i) })),
              title: "SM",
            }}
            y={{
              ticks: BUSY_TICKS.map((v) => ({ at: Y(v), label: `${v * 100} %` })),
              title: "busy",
            }}
          />
          {busy.map((v, i) => (
            <rect
              key={i}
              className="sm-busy"
              x={MARGIN.l + step * i + Math.min(1, step * 0.1)}
              width={Math.max(1, step - Math.min(2, step * 0.2))}
              y={Y(v)}
              height={Math.max(0, Y(0) - Y(v))}
              fill="#2457c5"
            >
              <title>{`SM ${i}: busy ${Math.round(v * 100)} %${typeof blocks[i] === "number" ? `, ${blocks[i]} blocks` : ""}`}</title>
            </rect>
          ))}
        </svg>
      </div>
    </figure>
  );
}
