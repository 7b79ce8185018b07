// ParaSim Studio's browser application: layout, navigation and routes.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "./styles.css";
import { Link, ToastContext, confirmLeave, match, useLocation, useToasts } from "./lib/router.jsx";
import { Analyzer } from "./features/analysis/Analyzer.jsx";
import { Measurements } from "./features/analysis/Measurements.jsx";
import { ApplicationEditor, ApplicationList } from "./features/applications/Applications.jsx";
import { HardwareDetail, HardwareList } from "./features/hardware/Hardware.jsx";
import { Launch } from "./features/launch/Launch.jsx";
import { ModelEditor, ModelList } from "./features/models/Models.jsx";
import { Compare } from "./features/runs/Compare.jsx";
import { RunDetail } from "./features/runs/RunDetail.jsx";
import { RunHistory } from "./features/runs/RunHistory.jsx";
import { SharedLink } from "./features/shares/SharedLink.jsx";
import { StudyDetail, StudyList, StudyNew } from "./features/studies/Studies.jsx";
import { SweepDetail, SweepList, SweepNew } from "./features/sweeps/Sweeps.jsx";
import { SystemEditor } from "./features/systems/SystemEditor.jsx";
import { SystemList } from "./features/systems/SystemList.jsx";
import { Workloads } from "./features/workloads/Workloads.jsx";

const ROUTES = [
  ["/", HardwareList],
  ["/app", HardwareList],
  ["/app/hardware", HardwareList],
  ["/app/hardware/:id", HardwareDetail],
  ["/app/models", ModelList],
  ["/app/models/:id", ModelEditor],
  ["/app/systems", SystemList],
  ["/app/systems/:id", SystemEditor],
  ["/app/applications", ApplicationList],
  ["/app/applications/:id", ApplicationEditor],
  ["/app/launch", Launch],
  ["/app/runs", RunHistory],
  ["/app/runs/:id", RunDetail],
  ["/app/compare", Compare],
  ["/app/sweeps", SweepList],
  ["/app/sweeps/new", SweepNew],
  ["/app/sweeps/:id", SweepDetail],
  ["/app/studies", StudyList],
  ["/app/studies/new", StudyNew],
  ["/app/studies/:id", StudyDetail],
  ["/app/workloads", Workloads],
  ["/app/shared/:token", SharedLink],
  ["/app/analyzer", Analyzer],
  ["/app/measurements", Measurements],
];

const NAV = [
  ["/app/hardware", "Hardware"],
  ["/app/models", "Computational models"],
  ["/app/systems", "System models"],
  ["/app/applications", "Application models"],
  ["/app/launch", "Launch"],
  ["/app/runs", "Runs"],
  ["/app/sweeps", "Sweeps"],
  ["/app/studies", "Studies"],
  ["/app/workloads", "Workloads"],
  ["/app/measurements", "Measurements"],
  ["/app/analyzer", "Analyzer"],
];

function App() {
  const { path } = useLocation();
  const [toasts, toast] = useToasts();
  const root = document.getElementById("root");
  let page = (
    <p>
      No page at {path}. <Link to="/app/hardware">Go to the hardware database</Link>.
    </p>
  );
  for (const [pattern, Component] of ROUTES) {
    const params = match(pattern, path);
    if (params) {
      // Keyed by the path: another record (a clone, a new record once saved) gets a fresh editor.
      page = <Component key={path} {...params} />;
      break;
    }
  }
  const signOut = () => {
    if (confirmLeave()) document.getElementById("logout-form").submit();
  };
  return (
    <ToastContext.Provider value={toast}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/app/hardware" className="brand">
          ParaSim Studio
        </Link>
        <nav aria-label="Main">
          {NAV.map(([to, label]) => (
            <Link
              key={to}
              to={to}
              aria-current={
                path.startsWith(to) || (to === "/app/hardware" && (path === "/" || path === "/app"))
                  ? "page"
                  : undefined
              }
            >
              {label}
            </Link>
          ))}
        </nav>
        <div className="user">
          <span aria-label="Signed in as">{root.dataset.user}</span>
          <a href="/api/docs/">API</a>
          <button onClick={signOut}>Sign out</button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.kind}`}>
            {t.text}
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

createRoot(document.getElementById("root")).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
