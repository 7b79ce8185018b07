// What a run's energy includes (issue 45): its accounting, per node what was charged and
// which power states were estimated, and the papers' figures under their own names, apart.
import { fmtEnergy } from "../../lib/format.js";
import { accountingLabel, accountingOf, alternativeEnergies, energyIncludes } from "./energy.js";

export function EnergyAccounting({ result }) {
  const rows = energyIncludes(result);
  const alternatives = alternativeEnergies(result);
  const accounting = accountingOf(result);
  return (
    <section aria-label="What the energy includes">
      <h2>What the energy includes</h2>
      <p data-testid="energy-accounting">
        Accounting: <strong>{accountingLabel(accounting)}</strong>.
      </p>
      {rows.length > 0 && (
        <table className="grid" aria-label="Energy per node and what it includes">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Hardware</th>
              <th scope="col">Energy</th>
              <th scope="col">Includes</th>
              <th scope="col">Estimated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.node}>
                <td>{row.label}</td>
                <td>{row.hardware}</td>
                <td className="num">{fmtEnergy(row.energy)}</td>
                <td>{row.includes}</td>
                <td>
                  {row.estimated.length ? row.estimated.join(", ") : `no: from ${row.statesFrom}`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {alternatives.length > 0 && (
        <>
          <p className="muted">
            Under the papers&apos; accountings (other things counted: not comparable with the total
            above, nor with each other):
          </p>
          <ul aria-label="Energy under other accountings">
            {alternatives.map((alt) => (
              <li key={alt.accounting}>
                {alt.label}: {fmtEnergy(alt.total)}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
