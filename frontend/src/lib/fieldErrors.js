// Which API field errors the page shows beside their fields: every FieldErrors that shows
// messages registers its path here while it is mounted, and the ErrorSummary lists every
// other error of the response. No form keeps a list of the paths it shows by hand: such a list
// drifts from what is rendered, and an error left off both places is shown nowhere.
import { useSyncExternalStore } from "react";

const counts = new Map();
const listeners = new Set();
let snapshot = new Set();

function changed() {
  snapshot = new Set(counts.keys());
  listeners.forEach((listener) => listener());
}

// Register `path` as shown beside its field; return the function that unregisters it.
export function showFieldError(path) {
  counts.set(path, (counts.get(path) || 0) + 1);
  changed();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (counts.get(path) || 1) - 1;
    if (left) counts.set(path, left);
    else counts.delete(path);
    changed();
  };
}

function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

// Return the set of paths shown beside their fields now (a new set after every change).
export function useShownFieldErrors() {
  return useSyncExternalStore(subscribe, () => snapshot);
}

// Return the entries of `fields` ({path: [messages]}) that no field shows: `shown` is the set
// of paths shown beside their fields.
export function unshownErrors(fields, shown) {
  return Object.entries(fields || {}).filter(
    ([path, messages]) => messages && messages.length && !shown.has(path),
  );
}
