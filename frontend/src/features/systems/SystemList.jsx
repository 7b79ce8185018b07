// The system models: list, new, import a snapshot.
import { post } from "../../lib/api.js";
import { Link, navigate } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { GridTable } from "../../components/GridTable.jsx";
import { JsonImport } from "../../components/JsonImport.jsx";
import { Loading } from "../../components/Loading.jsx";
import { OwnerCell } from "../../components/RecordFields.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";

export function SystemList() {
  const {
    data: systems,
    error,
    setError,
  } = useApiGet("/api/systems/?page_size=200", { all: true });
  const importSnapshot = async (snapshot) => {
    const s = await post("/api/systems/import/", snapshot);
    navigate(`/app/systems/${s.id}`);
  };
  return (
    <section aria-labelledby="systems-title">
      <header className="page-head">
        <h1 id="systems-title">System models</h1>
        <div className="actions">
          <button onClick={() => navigate("/app/systems/new")}>New system model</button>
          <JsonImport
            label="Import snapshot…"
            fileLabel="Import snapshot file"
            accept=".json,application/json"
            onImport={importSnapshot}
            onError={setError}
          />
        </div>
      </header>
      <ErrorSummary error={error} />
      {!systems ? (
        <Loading />
      ) : (
        <GridTable label="System models" columns={["Name", "Nodes", "Owner"]}>
          {systems.map((s) => (
            <tr key={s.id}>
              <td>
                <Link to={`/app/systems/${s.id}`}>{s.name}</Link>
              </td>
              <td>{(s.graph?.nodes || []).length}</td>
              <OwnerCell owner={s.owner || "built-in"} shared={s.shared} />
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}
