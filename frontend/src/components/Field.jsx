// A labelled form control with the API's messages for its field beside it.
import { cloneElement, isValidElement } from "react";
import { errorId } from "../lib/errors.js";

export function FieldErrors({ errors, path, id }) {
  const messages = errors?.[path];
  if (!messages || !messages.length) return null;
  return (
    <div className="field-error" role="alert" id={id || errorId(path)} data-error-path={path}>
      {messages.length === 1
        ? messages[0]
        : messages.map((message, i) => <div key={i}>{message}</div>)}
    </div>
  );
}

export function Field({ label, path, errors, children, hint }) {
  const invalid = Boolean(errors?.[path]);
  // The control says it is invalid and names its message, for screen readers.
  const control =
    invalid && isValidElement(children)
      ? cloneElement(children, { "aria-invalid": true, "aria-describedby": errorId(path) })
      : children;
  return (
    <div className={`field${invalid ? " invalid" : ""}`}>
      <label className="field">
        <span className="field-label">{label}</span>
        {control}
      </label>
      {hint && <span className="hint">{hint}</span>}
      <FieldErrors errors={errors} path={path} />
    </div>
  );
}
