// The run history: every run, a page at a time, filtered and searched on the server; a sweep's
// runs collapsed under one row that expands; ticked runs (on any page) open the comparison.
import { useState } from "react";
import { fmtEnergy, fmtTime } from "../../lib/format.js";
import { Link, navigate, useLocation, useToast } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { GridTable } from "../../components/GridTable.jsx";
import { Loading } from "../../components/Loading.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { useNow } from "../../hooks/useNow.js";
import { SharedWithYou } from "../shares/SharedWithYou.jsx";
import { runProgressBrief } from "./runFacts.js";
import {
  COMPARE_LIMIT,
  EMPTY_FILTERS,
  PAGE_SIZES,
  STATUSES,
  compareUrl,
  listAddress,
  listState,
  pageCount,
  runsUrl,
  toggleRun,
} from "./runQuery.js";

const COLUMNS = ["Compare", "Run", "Status", "Overall time", "Energy", "System", "Launched"];
const SWEEP_PAGE_SIZE = 50;

// The page, filters and search live in the page address (runQuery.listState): each change
// is a new history entry, so Back returns to the list as it was.
export function RunHistory() {
  const { query } = useLocation();
  const toast = useToast();
  const { filters, page, pageSize } = listState(query);
  const [search, setSearch] = useState(filters.search);
  // Back (or a link) to another search shows its words in the box.
  const [searched, setSearched] = useState(filters.search);
  if (searched !== filters.search) {
    setSearched(filters.search);
    setSearch(filters.search);
  }
  const show = (state) => navigate(listAddress({ filters, page, pageSize, ...state }));
  const setPage = (next) => show({ page: next });
  const [picked, setPicked] = useState(query.get("compare") ? [query.get("compare")] : []);
  const { data, error } = useApiGet(runsUrl(filters, { page, pageSize }));
  const systems = useApiGet("/api/systems/?page_size=200").data;
  const applications = useApiGet("/api/applications/?page_size=200").data;
  const pages = data ? pageCount(data.count, pageSize) : 1;

  const change = (key, value) => show({ filters: { ...filters, [key]: value }, page: 1 });
  const toggle = (id) => {
    const next = toggleRun(picked, id);
    if (next.refused) {
      toast(`At most ${COMPARE_LIMIT} runs can be compared at once; untick one first.`, "error");
    }
    setPicked(next.picked);
  };
  const filtered = Object.entries(filters).some(
    ([key, value]) => key !== "group_sweeps" && value !== "",
  );

  return (
    <section aria-labelledby="runs-title">
      <header className="page-head">
        <h1 id="runs-title">Run history</h1>
        <div className="actions">
          <button
            className="primary"
            disabled={picked.length < 2}
            onClick={() => navigate(compareUrl(picked))}
          >
            Compare the {picked.length > 1 ? picked.length : ""} selected
          </button>
          <button onClick={() => navigate("/app/launch")}>New launch</button>
        </div>
      </header>
      <p className="hint">
        Tick two to {COMPARE_LIMIT} runs, on any page, to compare them.
        {picked.length > 0 && (
          <>
            {" "}
            Selected: {picked.map((id) => `#${id}`).join(", ")}{" "}
            <button className="link" onClick={() => setPicked([])}>
              Clear the selection
            </button>
          </>
        )}
      </p>
      <form
        className="filters"
        role="search"
        aria-label="Filter runs"
        onSubmit={(e) => {
          e.preventDefault();
          change("search", search);
        }}
      >
        <label>
          Search runs
          <span className="condition">
            <input
              type="search"
              aria-label="Search runs"
              value={search}
              placeholder="run, system or application name, or id"
              onChange={(e) => setSearch(e.target.value)}
            />
            <button type="submit">Search</button>
          </span>
        </label>
        <label>
          Status
          <select
            aria-label="Status"
            value={filters.status}
            onChange={(e) => change("status", e.target.value)}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          System model
          <select
            aria-label="System model"
            value={filters.system_model}
            onChange={(e) => change("system_model", e.target.value)}
          >
            <option value="">any</option>
            {(systems?.results || []).map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Application model
          <select
            aria-label="Application model"
            value={filters.application}
            onChange={(e) => change("application", e.target.value)}
          >
            <option value="">any</option>
            {(applications?.results || []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Launched from
          <input
            type="date"
            aria-label="Launched from"
            value={filters.launched_from}
            onChange={(e) => change("launched_from", e.target.value)}
          />
        </label>
        <label>
          Launched to
          <input
            type="date"
            aria-label="Launched to"
            value={filters.launched_to}
            onChange={(e) => change("launched_to", e.target.value)}
          />
        </label>
        <label className="inline">
          <input
            type="checkbox"
            checked={filters.group_sweeps}
            onChange={(e) => change("group_sweeps", e.target.checked)}
          />
          Group sweeps
        </label>
        {filtered && (
          <button
            type="button"
            onClick={() => {
              setSearch("");
              show({ filters: EMPTY_FILTERS, page: 1 });
            }}
          >
            Clear filters
          </button>
        )}
      </form>
      {error?.status === 404 && page > 1 ? (
        <p className="note" role="status" data-testid="past-the-end">
          Page {page} is past the end of this list.{" "}
          <button type="button" onClick={() => setPage(1)}>
            First page
          </button>
        </p>
      ) : (
        <ErrorSummary error={error} />
      )}
      {!data ? (
        !error && <Loading />
      ) : (
        <>
          <Pager
            label="Runs pages"
            page={page}
            pages={pages}
            count={data.count}
            setPage={setPage}
            pageSize={pageSize}
            setPageSize={(size) => show({ pageSize: size, page: 1 })}
          />
          {data.results.length === 0 ? (
            <p className="muted">No run matches.</p>
          ) : (
            <GridTable label="Simulations" columns={COLUMNS}>
              {data.results.map((r) =>
                filters.group_sweeps && r.sweep ? (
                  <SweepRows
                    key={`sweep-${r.sweep}`}
                    first={r}
                    filters={filters}
                    picked={picked}
                    toggle={toggle}
                  />
                ) : (
                  <RunRow key={r.id} run={r} picked={picked} toggle={toggle} />
                ),
              )}
            </GridTable>
          )}
        </>
      )}
      <SharedWithYou />
    </section>
  );
}

// Page buttons, the page's place and the page size.
function Pager({ label, page, pages, count, setPage, pageSize, setPageSize }) {
  return (
    <nav className="actions pager" aria-label={label}>
      <button disabled={page <= 1} onClick={() => setPage(1)}>
        First page
      </button>
      <button disabled={page <= 1} onClick={() => setPage(page - 1)}>
        Previous page
      </button>
      <span data-testid="page-status">
        Page {page} of {pages} · {count} {count === 1 ? "row" : "rows"}
      </span>
      <button disabled={page >= pages} onClick={() => setPage(page + 1)}>
        Next page
      </button>
      <button disabled={page >= pages} onClick={() => setPage(pages)}>
        Last page
      </button>
      {setPageSize && (
        <label className="inline">
          Per page
          <select
            aria-label="Per page"
            value={pageSize}
            onChange={(e) => setPageSize(Number(e.target.value))}
          >
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      )}
    </nav>
  );
}

function RunRow({ run: r, picked, toggle, nested = false }) {
  const label = r.name || `Simulation ${r.id}`;
  const now = useNow(r.status === "running");
  return (
    <tr className={nested ? "sweep-point" : undefined}>
      <td>
        <input
          type="checkbox"
          aria-label={`Select run ${r.id} for comparison`}
          checked={picked.includes(String(r.id))}
          onChange={() => toggle(String(r.id))}
        />
      </td>
      <td>
        {nested && "↳ "}
        <Link to={`/app/runs/${r.id}`}>{label}</Link> <span className="muted">#{r.id}</span>
      </td>
      <td>
        <span className={`status status-${r.status}`}>{r.status}</span>
        {r.status === "running" && (
          <span className="muted nowrap" data-testid="run-progress">
            {" "}
            {runProgressBrief(r, now)}
          </span>
        )}
        {r.status === "queued" && r.queue_position ? ` #${r.queue_position} in ${r.queue}` : ""}
      </td>
      <td className="nowrap">{fmtTime(r.overall_time_s)}</td>
      <td className="nowrap">{fmtEnergy(r.energy_j)}</td>
      <td>
        {r.system_name || <span className="muted">snapshot</span>}
        {r.application_name && <span className="muted"> · {r.application_name}</span>}
      </td>
      <td>{new Date(r.created).toLocaleString()}</td>
    </tr>
  );
}

// A sweep's one row; expanded, its runs that pass the filters, a page at a time.
function SweepRows({ first, filters, picked, toggle }) {
  const [open, setOpen] = useState(false);
  const [page, setPage] = useState(1);
  const name = first.sweep_name || `Sweep ${first.sweep}`;
  return (
    <>
      <tr className="sweep-row">
        <td />
        <td>
          <button
            className="link"
            aria-expanded={open}
            aria-label={`${open ? "Collapse" : "Expand"} sweep ${name}`}
            onClick={() => setOpen((o) => !o)}
          >
            {open ? "▾" : "▸"} Sweep: {name}
          </button>{" "}
          <span className="muted">
            {first.sweep_size ?? "?"} runs ·{" "}
            <Link to={`/app/sweeps/${first.sweep}`}>open sweep</Link>
          </span>
        </td>
        <td colSpan={4} />
        <td>{new Date(first.created).toLocaleString()}</td>
      </tr>
      {open && (
        <SweepPoints
          sweep={first.sweep}
          name={name}
          filters={filters}
          page={page}
          setPage={setPage}
          picked={picked}
          toggle={toggle}
        />
      )}
    </>
  );
}

function SweepPoints({ sweep, name, filters, page, setPage, picked, toggle }) {
  const { data, error } = useApiGet(runsUrl(filters, { page, pageSize: SWEEP_PAGE_SIZE, sweep }));
  if (error || !data) {
    return (
      <tr>
        <td colSpan={COLUMNS.length}>{error ? <ErrorSummary error={error} /> : <Loading />}</td>
      </tr>
    );
  }
  const pages = pageCount(data.count, SWEEP_PAGE_SIZE);
  return (
    <>
      {data.results.map((r) => (
        <RunRow key={r.id} run={r} picked={picked} toggle={toggle} nested />
      ))}
      {pages > 1 && (
        <tr>
          <td colSpan={COLUMNS.length}>
            <Pager
              label={`Pages of sweep ${name}`}
              page={page}
              pages={pages}
              count={data.count}
              setPage={setPage}
            />
          </td>
        </tr>
      )}
    </>
  );
}
