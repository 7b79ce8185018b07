// A small history-API router with an unsaved-changes guard shared by every editor.
import {
  createContext,
  useContext,
  useEffect,
  useRef,
  useState,
  useSyncExternalStore,
} from "react";

const listeners = new Set();
const dirtyEditors = new Set();
export const LEAVE_QUESTION = "You have unsaved changes. Leave this page and lose them?";

function notify() {
  listeners.forEach((listener) => listener());
}

function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function currentLocation() {
  return window.location.pathname + window.location.search;
}

// Ask before leaving when an editor holds unsaved work; return true when leaving is fine.
export function confirmLeave() {
  if (dirtyEditors.size === 0) return true;
  if (window.confirm(LEAVE_QUESTION)) {
    dirtyEditors.clear();
    return true;
  }
  return false;
}

export function navigate(to, { replace = false, force = false } = {}) {
  if (to === currentLocation()) return;
  if (!force && !confirmLeave()) return;
  if (replace) window.history.replaceState({}, "", to);
  else window.history.pushState({}, "", to);
  window.scrollTo(0, 0);
  notify();
}

let lastLocation = currentLocation();
window.addEventListener("popstate", () => {
  if (dirtyEditors.size && !window.confirm(LEAVE_QUESTION)) {
    window.history.pushState({}, "", lastLocation);
    return;
  }
  dirtyEditors.clear();
  notify();
});
listeners.add(() => {
  lastLocation = currentLocation();
});

window.addEventListener("beforeunload", (event) => {
  if (dirtyEditors.size) {
    event.preventDefault();
    event.returnValue = LEAVE_QUESTION;
  }
});

export function useLocation() {
  const loc = useSyncExternalStore(subscribe, currentLocation);
  const url = new URL(loc, window.location.origin);
  return { path: url.pathname, query: url.searchParams };
}

// Register an editor's unsaved state with the guard (in-app links, back button, tab close).
export function useUnsavedGuard(dirty) {
  const token = useRef({});
  useEffect(() => {
    const me = token.current;
    if (dirty) dirtyEditors.add(me);
    else dirtyEditors.delete(me);
    return () => dirtyEditors.delete(me);
  }, [dirty]);
}

export function Link({ to, children, ...rest }) {
  return (
    <a
      href={to}
      onClick={(event) => {
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(to);
      }}
      {...rest}
    >
      {children}
    </a>
  );
}

// Match "/app/hardware/:id" against a path; return the params or null.
export function match(pattern, path) {
  const p = pattern.split("/").filter(Boolean);
  const s = path.split("/").filter(Boolean);
  if (p.length !== s.length) return null;
  const params = {};
  for (let i = 0; i < p.length; i += 1) {
    if (p[i].startsWith(":")) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return params;
}

export const ToastContext = createContext(() => {});
export const useToast = () => useContext(ToastContext);

export function useToasts() {
  const [toasts, setToasts] = useState([]);
  const push = (text, kind = "ok") => {
    const id = Math.random();
    setToasts((list) => [...list, { id, text, kind }]);
    setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), 4000);
  };
  return [toasts, push];
}
