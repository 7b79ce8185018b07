import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../lib/api.js";
import { JsonImport } from "./JsonImport.jsx";

afterEach(cleanup);

function choose(text) {
  const input = screen.getByLabelText("Import file");
  const file = new File([text], "x.json", { type: "application/json" });
  fireEvent.change(input, { target: { files: [file] } });
}

function renderImport(onImport, onError = vi.fn()) {
  render(
    <JsonImport
      label="Import JSON…"
      fileLabel="Import file"
      accept=".json"
      onImport={onImport}
      onError={onError}
    />,
  );
  return onError;
}

describe("JsonImport", () => {
  it("renders a button and a hidden file input", () => {
    renderImport(vi.fn());
    expect(screen.getByRole("button", { name: "Import JSON…" })).toBeTruthy();
    const input = screen.getByLabelText("Import file");
    expect(input.type).toBe("file");
    expect(input.hidden).toBe(true);
    expect(input.accept).toBe(".json");
  });

  it("hands the parsed file to onImport", async () => {
    const onImport = vi.fn();
    renderImport(onImport);
    choose('{"components": []}');
    await waitFor(() => expect(onImport).toHaveBeenCalledWith({ components: [] }));
  });

  it("reports a file that is not JSON as an ApiError", async () => {
    const onImport = vi.fn();
    const onError = renderImport(onImport);
    choose("not json");
    await waitFor(() => expect(onError).toHaveBeenCalled());
    const error = onError.mock.calls[0][0];
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toMatch(/^The file is not valid JSON: /);
    expect(onImport).not.toHaveBeenCalled();
  });

  it("passes the API's own error on", async () => {
    const refused = new ApiError(400, { detail: "Duplicate name." });
    const onError = renderImport(() => Promise.reject(refused));
    choose("[]");
    await waitFor(() => expect(onError).toHaveBeenCalledWith(refused));
  });
});
