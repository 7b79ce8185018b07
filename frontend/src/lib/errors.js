// Where the API's field errors are shown: element ids and the line of a source error.

// Return the id of the message element of the API field `path` (for aria-describedby).
export const errorId = (path) => `error-${String(path).replace(/[^\w-]+/g, "_")}`;

// The line of a source field's error: the server refuses a model or application that does not
// compile with "Line N: ..." on its "source" field.
export function sourceErrorLine(messages) {
  const match = /^Line (\d+):/.exec((messages && messages[0]) || "");
  return match ? Number(match[1]) : null;
}

// Every located error of a source field: [{ line, message }] for each "Line N: ..." message
// (the server reports all the errors an application model's compiler finds at once).
export function sourceErrors(messages) {
  return (messages || [])
    .map((message) => ({ line: sourceErrorLine([message]), message }))
    .filter((error) => error.line !== null);
}
