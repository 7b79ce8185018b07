// An "Import …" button that opens a JSON file and hands what it holds to the page.
import { useRef } from "react";
import { ApiError } from "../lib/api.js";

// `onImport(parsed)` does the import; a file that is not JSON, or an import that fails, reaches
// `onError` as an ApiError so the page's ErrorSummary shows it. `fileLabel` names the hidden file
// input for assistive technology.
export function JsonImport({ label, fileLabel, accept, onImport, onError }) {
  const input = useRef(null);
  const importFile = async (event) => {
    const file = event.target.files[0];
    event.target.value = "";
    if (!file) return;
    try {
      await onImport(JSON.parse(await file.text()));
    } catch (e) {
      onError(
        e instanceof ApiError
          ? e
          : new ApiError(400, { detail: `The file is not valid JSON: ${e.message}` }),
      );
    }
  };
  return (
    <>
      <button onClick={() => input.current.click()}>{label}</button>
      <input
        ref={input}
        type="file"
        accept={accept}
        hidden
        aria-label={fileLabel}
        onChange={importFile}
      />
    </>
  );
}
