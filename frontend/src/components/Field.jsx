// A labelled form control with the API's messages for its field beside it.
import { cloneElement, isValidElement, useLayoutEffect } from "react";
import { errorId } from "../lib/errors.js";
import { showFieldError } from "../lib/fieldErrors.js";

// The messages of `path`; while it shows any, the page's ErrorSummary leaves them out.
export function FieldErrors({ errors, path, id }) {
  const messages = errors?.[path];
  const showing = Boolean(messages && messages.length);
  useLayoutEffect(() => (showing ? showFieldError(path) : undefined), [showing, path]);
  if (!showing) return null;
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
