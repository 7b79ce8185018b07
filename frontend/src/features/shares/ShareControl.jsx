// The owner's Share control of a run or sweep page: share read-only with a user by name,
// publish under a link, list and revoke the shares (POST/GET/DELETE /api/shares/).
import { useCallback, useEffect, useState } from "react";
import { del, get, ignoreAbort, post } from "../../lib/api.js";
import { shareAddress, shareLabel, sharesUrl } from "./shares.js";

export function ShareControl({ kind, id }) {
  const [open, setOpen] = useState(false);
  const [shares, setShares] = useState(null);
  const [username, setUsername] = useState("");
  const [problem, setProblem] = useState("");
  const load = useCallback(
    (signal) =>
      get(sharesUrl(kind, id), { signal }).then(
        (page) => setShares(page.results ?? page),
        ignoreAbort((e) => setProblem(e.message)),
      ),
    [kind, id],
  );
  useEffect(() => {
    if (!open) return undefined;
    const controller = new AbortController();
    load(controller.signal);
    return () => controller.abort();
  }, [open, load]);
  const act = (promise) =>
    promise.then(
      () => {
        setProblem("");
        return load();
      },
      (e) => setProblem(e.fields?.username?.[0] || e.fields?.non_field_errors?.[0] || e.message),
    );
  const shareWithUser = (event) => {
    event.preventDefault();
    act(post("/api/shares/", { [kind]: id, username: username.trim() })).then(() =>
      setUsername(""),
    );
  };
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Share…
      </button>
    );
  }
  const origin = window.location.origin;
  return (
    <div
      className="share-control"
      role="group"
      aria-label={`Share this ${kind === "simulation" ? "run" : "sweep"}`}
    >
      <form onSubmit={shareWithUser}>
        <label>
          Share read-only with user{" "}
          <input value={username} onChange={(e) => setUsername(e.target.value)} required />
        </label>{" "}
        <button type="submit">Share</button>{" "}
        <button type="button" onClick={() => act(post("/api/shares/", { [kind]: id, link: true }))}>
          Publish link
        </button>{" "}
        <button type="button" onClick={() => setOpen(false)}>
          Close
        </button>
      </form>
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
      {shares && shares.length === 0 && <p className="muted">Shared with no one.</p>}
      {shares && shares.length > 0 && (
        <ul aria-label="Shares">
          {shares.map((share) => (
            <li key={share.id}>
              {shareLabel(share)}
              {share.link_path && (
                <>
                  {" "}
                  <input
                    readOnly
                    aria-label="Link address"
                    value={shareAddress(share, origin)}
                    onFocus={(e) => e.target.select()}
                    size={60}
                  />
                </>
              )}{" "}
              <button type="button" onClick={() => act(del(`/api/shares/${share.id}/`))}>
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
