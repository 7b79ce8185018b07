// Link utilisation over time, drawn under the Gantt on the same run time: one row per flow
// link (the busiest first), one cell per hundredth of the run shaded by the fraction of the
// link in use; then every link's bytes, peak and mean utilisation and time saturated.
import { fmt, fmtTime } from "../../lib/format.js";
import { useChartWidth } from "../../hooks/useChartWidth.js";
import { GridTable, TABLE_PAGE_SIZE } from "../../components/GridTable.jsx";
import { CHARTED_LINKS, binSpan, busiestLinks, percent } from "./links.js";

const LEFT = 230;
const RIGHT = 20;
const ROW = 14;
const AXIS = 28;

function Heatmap({ links, overall, total }) {
  const [box, width] = useChartWidth(900, 320);
  const plotW = Math.max(100, width - LEFT - RIGHT);
  const height = links.length * ROW + AXIS;
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <figure className="chart" aria-label="Link utilisation over time">
      <div ref={box} className="chart-box">
        <svg width={width} height={height} role="img" aria-label="Link utilisation over time">
          {links.map((link, row) => {
            const series = link.utilisation_series || [];
            const cell = plotW / Math.max(1, series.length);
            return (
              <g
                key={link.link}
                data-testid={`link-row-${row}`}
                data-link={link.link}
                data-peak={link.peak_utilisation}
                data-mean={link.mean_utilisation}
              >
                <text x={LEFT - 6} y={row * ROW + ROW - 3} textAnchor="end" fontSize="11">
                  {link.link}
                </text>
                <rect x={LEFT} y={row * ROW} width={plotW} height={ROW - 2} fill="#f3f5f8" />
                {series.map((u, i) =>
                  u > 0 ? (
                    <rect
                      key={i}
                      x={LEFT + i * cell}
                      y={row * ROW}
                      width={cell + 0.5}
                      height={ROW - 2}
                      fill="#1f6feb"
                      fillOpacity={Math.min(1, u)}
                    >
                      <title>
                        {`${link.link}, ${binSpan(i, series.length, overall)
                          .map(fmtTime)
                          .join(" to ")}: ${percent(u)}`}
                      </title>
                    </rect>
                  ) : null,
                )}
              </g>
            );
          })}
          {ticks.map((t) => (
            <text
              key={t}
              x={LEFT + t * plotW}
              y={links.length * ROW + 16}
              textAnchor={t === 0 ? "start" : t === 1 ? "end" : "middle"}
              fontSize="11"
            >
              {fmtTime(t * overall)}
            </text>
          ))}
        </svg>
      </div>
      <figcaption className="muted">
        {total > links.length
          ? `The ${links.length} busiest of ${total} links that carried data; the table lists them all. `
          : ""}
        {`Darker is busier: a row's ${links[0]?.utilisation_series?.length || 0} cells are the
        link's mean utilisation in equal parts of the run.`}
      </figcaption>
    </figure>
  );
}

export function LinkUtilisation({ links, overall }) {
  if (!links || links.length === 0) return null;
  const charted = busiestLinks(links, CHARTED_LINKS);
  const carried = busiestLinks(links, Infinity);
  return (
    <section aria-label="Links">
      <h2>Link utilisation</h2>
      {charted.length > 0 && overall > 0 ? (
        <Heatmap links={charted} overall={overall} total={carried.length} />
      ) : (
        <p className="muted">No link carried data.</p>
      )}
      <GridTable
        label="Links"
        pageSize={TABLE_PAGE_SIZE}
        columns={["Link", "Sharing", "Bytes", "Peak", "Mean", "Saturated"]}
      >
        {carried.map((link, i) => (
          <tr key={link.link}>
            <td>{link.link}</td>
            <td>{link.sharing}</td>
            <td className="num">{fmt(link.bytes)}</td>
            <td className="num">{percent(link.peak_utilisation)}</td>
            <td className="num" data-testid={`link-mean-${i}`}>
              {percent(link.mean_utilisation)}
            </td>
            <td className="num">{fmtTime(link.saturated_s)}</td>
          </tr>
        ))}
      </GridTable>
    </section>
  );
}
