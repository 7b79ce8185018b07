// Errors not shown beside a field: listed at the top of the form.
import { useEffect } from "react";
import { unshownErrors, useShownFieldErrors } from "../lib/fieldErrors.js";

// Move the keyboard focus to the first invalid control of the page, else to the error box.
export function focusFirstError() {
  const main = document.getElementById("main");
  if (!main) return;
  const target =
    main.querySelector('[aria-invalid="true"], .field.invalid input, .field.invalid select') ||
    main.querySelector(".error-box");
  if (target) target.focus({ preventScroll: false });
}

// A new error moves the focus to the first invalid field (or to this box), so keyboard and
// screen-reader users land on it. Every field error that no FieldErrors on the page shows
// beside its field is listed here. `names` (optional) turns a path into the words shown before
// its messages (null: none); without it the path is shown as code.
export function ErrorSummary({ error, names }) {
  const shown = useShownFieldErrors();
  useEffect(() => {
    if (error) focusFirstError();
  }, [error]);
  if (!error) return null;
  const rest = unshownErrors(error.fields, shown);
  return (
    <div className="error-box" role="alert" aria-live="assertive" tabIndex={-1}>
      <strong>{error.message}</strong>
      {rest.length > 0 && (
        <ul>
          {rest.map(([path, messages]) => {
            const name = names ? names(path) : null;
            return (
              <li key={path}>
                {names ? (
                  name && <strong>{name}:</strong>
                ) : path && path !== "non_field_errors" && path !== "detail" ? (
                  <code>{path}</code>
                ) : null}{" "}
                {messages.join(" ")}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
