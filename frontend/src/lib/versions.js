// Optimistic concurrency of record editors: every editable record carries a `version`; a save
// sends back the version it was made from, and the server refuses it (409, code
// "version_conflict") once someone else saved the record, naming the fields they changed and
// carrying the stored record.
import { ApiError } from "./api.js";

export const VERSION_CONFLICT = "version_conflict";

// Return the body of a save with `version` added; without a version (a record never loaded,
// or an old server) the body is sent as it is.
export function withVersion(body, version) {
  return Number.isInteger(version) ? { ...body, version } : body;
}

// Return {detail, changed, version, expected, current} when `error` is the refusal of a stale
// save, else null.
export function versionConflict(error) {
  if (!(error instanceof ApiError) || error.status !== 409) return null;
  const body = error.body;
  if (!body || body.code !== VERSION_CONFLICT || !body.current) return null;
  return {
    detail: String(body.detail || ""),
    changed: Array.isArray(body.changed) ? body.changed.map(String) : [],
    version: body.version,
    expected: body.expected_version,
    current: body.current,
  };
}

// Return the words naming the changed fields ("Description and Name"), each through `label`
// (a field's name in the editor; default: the field name with underscores as spaces).
export function changedFields(changed, label = defaultLabel) {
  const names = changed.map(label);
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

function defaultLabel(field) {
  const words = field.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}
