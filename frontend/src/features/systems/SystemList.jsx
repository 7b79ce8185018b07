// The system models: list, new, import a snapshot.
import { useRef } from "react";
import { ApiError, post } from "../../lib/api.js";
import { Link, navigate } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { Loading } from "../../components/Loading.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";

export function SystemList() {
  const {
    data: systems,
    error,
    setError,
  } = useApiGet("/api/systems/?page_size=200", { all: true });
  const fileInput = useRef(null);
  const importFile = async (event) => {
    const file = event.target.files[0];
    event.target.value = "";
    if (!file) return;
    try {
      const s = await post("/api/systems/import/", JSON.parse(await file.text()));
      navigate(`/app/systems/${s.id}`);
    } catch (e) {
      setError(
        e instanceof ApiError
          ? e
          : new ApiError(400, { detail: `The file is not valid JSON: ${e.message}` }),
      );
    }
  };
  return (
    <section aria-labelledby="systems-title">
      <header className="page-head">
        <h1 id="systems-title">System models</h1>
        <div className="actions">
          <button onClick={() => navigate("/app/systems/new")}>New system model</button>
          <button onClick={() => fileInput.current.click()}>Import snapshot…</button>
          <input
            ref={fileInput}
            type="file"
            accept=".json,application/json"
            hidden
            aria-label="Import snapshot file"
            onChange={importFile}
          />
        </div>
      </header>
      <ErrorSummary error={error} />
      {!systems ? (
        <Loading />
      ) : (
        <table className="grid" aria-label="System models">
          <thead>
            <tr>
              <th>Name</th>
              <th>Nodes</th>
              <th>Owner</th>
            </tr>
          </thead>
          <tbody>
            {systems.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link to={`/app/systems/${s.id}`}>{s.name}</Link>
                </td>
                <td>{(s.graph?.nodes || []).length}</td>
                <td>
                  {s.owner || "built-in"}
                  {s.shared ? " · shared" : ""}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
