// The refusal of a stale save (someone else saved the record after it was loaded): what they
// changed, and the two ways on: take their record (dropping the edits here) or save these
// edits over it.
import { changedFields } from "../lib/versions.js";

export function VersionConflict({ conflict, onReload, onOverwrite, label }) {
  if (!conflict) return null;
  const changed = changedFields(conflict.changed, label);
  return (
    <div className="error-box version-conflict" role="alert" aria-live="assertive">
      <strong>Not saved: someone else saved this record after you opened it.</strong>
      <p>
        {changed ? `They changed: ${changed}.` : "Their changes are not known field by field."}{" "}
        Reload shows their version and drops your unsaved changes; Overwrite saves your version over
        theirs.
      </p>
      <div className="actions">
        <button onClick={onReload}>Reload</button>
        <button className="danger" onClick={onOverwrite}>
          Overwrite
        </button>
      </div>
    </div>
  );
}
