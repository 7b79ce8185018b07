// The load / edit / save / delete cycle every record editor shares (hardware, computational
// models, system models, application models): the record, whether it has unsaved changes (with
// the leave-page guard), the API's error of the last request, and the actions. Saves carry the
// version the record was loaded at; a save refused because someone else saved since (409) keeps
// the edits and offers to reload theirs or overwrite them (lib/versions.js).
import { useCallback, useEffect, useMemo, useReducer, useRef } from "react";
import { del, get, ignoreAbort, post, put } from "../lib/api.js";
import { versionConflict, withVersion } from "../lib/versions.js";
import { navigate, useToast, useUnsavedGuard } from "../lib/router.jsx";

const mergePatch = (record, patch) => ({ ...record, ...patch });
const identity = (record) => record;

// Options: `id` ("new" for a record not yet stored), `endpoint` (the collection's API URL,
// "/api/components/"), `appPath` (the list page; a record is at `${appPath}/${id}`), `blank`
// (a new record's start). Optional: `fromServer(response)` (the editor's record for a server
// record), `toBody(record)` (what a save sends), `afterSave(response, record)` (the record after
// a save; default fromServer(response)), `fingerprint(record)` (what "unsaved" compares;
// default JSON.stringify), `reducer(record, action)` (what edit(action) does; default: merge a
// patch). Returns {isNew, record, dirty, saved, error, setError, sent, edit, save, remove, clone,
// conflict, reload, overwrite}; `record` is null until loaded, `saved` the fingerprint of the
// stored version, `sent` the body of the last save, `conflict` the refusal of a stale save
// ({detail, changed, version, current}) until `reload` (take the stored record, dropping the
// edits) or `overwrite` (save the edits over it).
export function useRecordEditor(options) {
  const { id, endpoint, appPath, blank } = options;
  const {
    fromServer = identity,
    toBody = identity,
    fingerprint = JSON.stringify,
    reducer = mergePatch,
  } = options;
  const afterSave = options.afterSave || ((response) => fromServer(response));
  const isNew = id === "new";
  const toast = useToast();

  // Built each render from the options of that render, as useReducer allows; pure given them.
  const editorReducer = (state, action) => {
    switch (action.type) {
      case "loaded":
        return {
          ...state,
          record: action.record,
          saved: fingerprint(action.record),
          version: action.version ?? null,
          error: null,
          conflict: null,
        };
      case "edited":
        return { ...state, record: reducer(state.record, action.action) };
      case "sending":
        return { ...state, sent: action.body };
      case "saved": {
        const record = afterSave(action.response, state.record);
        const version = action.response?.version ?? null;
        return {
          ...state,
          record,
          saved: fingerprint(record),
          version,
          error: null,
          conflict: null,
        };
      }
      case "conflict":
        return { ...state, conflict: action.conflict, error: null };
      case "removed":
        return { ...state, saved: fingerprint(state.record) };
      case "failed":
        return { ...state, error: action.error };
      default:
        throw new Error(`useRecordEditor: unknown action ${action.type}`);
    }
  };
  const [state, dispatch] = useReducer(editorReducer, null, () => {
    const record = isNew ? fromServer(blank) : null;
    return {
      record,
      saved: record ? fingerprint(record) : null,
      version: null,
      error: null,
      conflict: null,
      sent: null,
    };
  });
  const { record, saved, error, conflict } = state;
  const current = useMemo(() => (record ? fingerprint(record) : null), [record, fingerprint]);
  const dirty = Boolean(record) && saved !== null && current !== saved;
  useUnsavedGuard(dirty);

  // The record's conversion, read when the load answers: a new function each render must not
  // load the record again.
  const convert = useRef(fromServer);
  useEffect(() => {
    convert.current = fromServer;
  });
  useEffect(() => {
    if (isNew) return undefined;
    const controller = new AbortController();
    get(`${endpoint}${id}/`, { signal: controller.signal }).then(
      (response) =>
        dispatch({ type: "loaded", record: convert.current(response), version: response?.version }),
      ignoreAbort((e) => dispatch({ type: "failed", error: e })),
    );
    return () => controller.abort();
  }, [endpoint, id, isNew]);

  const setError = useCallback((e) => dispatch({ type: "failed", error: e }), []);
  const edit = useCallback((action) => dispatch({ type: "edited", action }), []);

  // Save the record made from `version` (default: the one loaded; a click event passed by an
  // onClick is no version); return the server's answer, or null when the save failed (the
  // error or the conflict is kept, and so is every unsaved change).
  const save = async (version) => {
    const from = Number.isInteger(version) ? version : state.version;
    const body = isNew ? toBody(record) : withVersion(toBody(record), from);
    dispatch({ type: "sending", body });
    try {
      const response = isNew ? await post(endpoint, body) : await put(`${endpoint}${id}/`, body);
      dispatch({ type: "saved", response });
      toast("Saved.");
      if (isNew) navigate(`${appPath}/${response.id}`, { replace: true, force: true });
      return response;
    } catch (e) {
      const refused = versionConflict(e);
      if (refused) dispatch({ type: "conflict", conflict: refused });
      else setError(e);
      return null;
    }
  };

  // After a conflict: show the stored record (their changes), dropping the unsaved edits.
  const reload = () => {
    if (!conflict) return;
    dispatch({
      type: "loaded",
      record: convert.current(conflict.current),
      version: conflict.version,
    });
  };

  // After a conflict: save the edits over the stored record, made from its version (a save
  // by someone else in between is refused again).
  const overwrite = () => (conflict ? save(conflict.version) : Promise.resolve(null));

  // Delete the record after asking, then go to the list.
  const remove = async () => {
    if (!window.confirm(`Delete ${record.name}?`)) return;
    try {
      await del(`${endpoint}${id}/`);
      dispatch({ type: "removed" });
      navigate(appPath, { force: true });
    } catch (e) {
      setError(e);
    }
  };

  // Copy the record on the server ("<name> (copy)") and open the copy.
  const clone = async ({ message } = {}) => {
    try {
      const response = await post(`${endpoint}${id}/clone/`, { name: `${record.name} (copy)` });
      if (message) toast(message);
      navigate(`${appPath}/${response.id}`);
    } catch (e) {
      setError(e);
    }
  };

  return {
    isNew,
    record,
    dirty,
    saved,
    error,
    setError,
    sent: state.sent,
    edit,
    save,
    remove,
    clone,
    conflict,
    reload,
    overwrite,
  };
}
