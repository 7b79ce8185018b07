// Poll `load(signal)` every `interval` ms while `keepGoing(value)` holds. A lost connection or a
// server error does not end a live view: it is reported as `retrying` and retried slower
// (up to 8 s) until the server answers; any other error ends the polling as `error`.
// Polling restarts when `key` changes; leaving the page cancels the request in flight.
import { useEffect, useRef, useState } from "react";
import { isAbort, isTransient } from "../lib/api.js";

export function usePolling(load, keepGoing, interval, key) {
  const [value, setValue] = useState(null);
  const [error, setError] = useState(null);
  const [retrying, setRetrying] = useState(null);
  // The latest callbacks, so that a new closure each render does not restart the polling.
  const latest = useRef({ load, keepGoing });
  useEffect(() => {
    latest.current = { load, keepGoing };
  });
  useEffect(() => {
    const controller = new AbortController();
    let timer;
    let failures = 0;
    const poll = async () => {
      let next;
      try {
        next = await latest.current.load(controller.signal);
      } catch (e) {
        if (controller.signal.aborted || isAbort(e)) return;
        if (!isTransient(e)) {
          setError(e);
          return;
        }
        failures += 1;
        setRetrying(e);
        timer = setTimeout(poll, Math.min(interval * 2 ** failures, 8000));
        return;
      }
      if (controller.signal.aborted) return;
      failures = 0;
      setRetrying(null);
      setValue(next);
      if (latest.current.keepGoing(next)) timer = setTimeout(poll, interval);
    };
    poll();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [key, interval]);
  return { value, error, retrying };
}
