import { useEffect, useState } from "react";
import { get, getAll, ignoreAbort } from "../../lib/api.js";

// The system models, application models and queues to launch on, with the chosen system and
// application (from ?system= and ?application=, else the first of each).
export function useLaunchChoices(query) {
  const [systems, setSystems] = useState(null);
  const [apps, setApps] = useState(null);
  const [queues, setQueues] = useState([]);
  // The choices the page was opened with; later changes of the URL do not reload the lists.
  const [asked] = useState(() => ({
    system: query.get("system"),
    application: query.get("application"),
  }));
  const [systemId, setSystemId] = useState(asked.system || "");
  const [appId, setAppId] = useState(asked.application || "");
  const [error, setError] = useState(null);
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    getAll("/api/systems/?page_size=200", { signal }).then((s) => {
      setSystems(s);
      if (!asked.system && s.length) setSystemId(String(s[0].id));
    }, ignoreAbort(setError));
    getAll("/api/applications/?page_size=200", { signal }).then((a) => {
      setApps(a);
      if (!asked.application && a.length) setAppId(String(a[0].id));
    }, ignoreAbort(setError));
    get("/api/queues/", { signal }).then(
      setQueues,
      ignoreAbort(() => setQueues([])),
    );
    return () => controller.abort();
  }, [asked]);
  const system = systems?.find((s) => String(s.id) === String(systemId));
  const app = apps?.find((a) => String(a.id) === String(appId));
  return { systems, apps, queues, systemId, setSystemId, appId, setAppId, system, app, error };
}
