// Read one API resource when a component mounts (and again when the url changes); the request
// is cancelled when the component goes away.
import { useEffect, useState } from "react";
import { get, getAll, ignoreAbort } from "../lib/api.js";

// Return {data, error, setError}; `all` reads every page of a paginated list (getAll).
export function useApiGet(url, { all = false } = {}) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const controller = new AbortController();
    const request = all
      ? getAll(url, { signal: controller.signal })
      : get(url, { signal: controller.signal });
    // A later answer replaces an earlier failure: the page shows what its address asks now.
    request.then((value) => {
      setData(value);
      setError(null);
    }, ignoreAbort(setError));
    return () => controller.abort();
  }, [url, all]);
  return { data, error, setError };
}
