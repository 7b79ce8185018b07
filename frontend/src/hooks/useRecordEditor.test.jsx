import { act, renderHook, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { json, mockFetch } from "../test/fetch.js";
import { ToastContext } from "../lib/router.jsx";
import { useRecordEditor } from "./useRecordEditor.js";

const BLANK = { name: "", vendor: "", attributes: [] };
const STORED = { id: 7, name: "H100", vendor: "NVIDIA", attributes: [], can_edit: true };

let toast;
function editor(id, extra = {}) {
  const wrapper = ({ children }) => (
    <ToastContext.Provider value={toast}>{children}</ToastContext.Provider>
  );
  return renderHook(
    () =>
      useRecordEditor({
        id,
        endpoint: "/api/components/",
        appPath: "/app/hardware",
        blank: BLANK,
        ...extra,
      }),
    { wrapper },
  );
}

beforeEach(() => {
  toast = vi.fn();
  window.history.replaceState({}, "", "/app/hardware/7");
});
afterEach(() => window.history.replaceState({}, "", "/"));

describe("useRecordEditor", () => {
  it("loads the record and starts clean", async () => {
    const fetch = mockFetch(json(200, STORED));
    const { result } = editor("7");
    expect(result.current.record).toBeNull();
    await waitFor(() => expect(result.current.record).toEqual(STORED));
    expect(fetch.mock.calls[0][0]).toBe("/api/components/7/");
    expect(result.current.dirty).toBe(false);
    expect(result.current.isNew).toBe(false);
  });

  it("starts a new record from the blank one without a request", () => {
    const fetch = mockFetch();
    const { result } = editor("new");
    expect(result.current.record).toEqual(BLANK);
    expect(result.current.dirty).toBe(false);
    expect(fetch).not.toHaveBeenCalled();
  });

  it("keeps a failed load's error", async () => {
    mockFetch(json(404, { detail: "Not found." }));
    const { result } = editor("7");
    await waitFor(() => expect(result.current.error?.message).toBe("Not found."));
    expect(result.current.record).toBeNull();
  });

  it("is dirty after an edit and clean again when the edit is undone", async () => {
    mockFetch(json(200, STORED));
    const { result } = editor("7");
    await waitFor(() => expect(result.current.record).not.toBeNull());
    act(() => result.current.edit({ name: "H200" }));
    expect(result.current.record.name).toBe("H200");
    expect(result.current.dirty).toBe(true);
    act(() => result.current.edit({ name: "H100" }));
    expect(result.current.dirty).toBe(false);
  });

  it("saves with PUT, takes the server's record and is clean", async () => {
    const fetch = mockFetch(
      json(200, STORED),
      json(200, { ...STORED, name: "H200", updated: "now" }),
    );
    const { result } = editor("7", { toBody: (r) => ({ name: r.name }) });
    await waitFor(() => expect(result.current.record).not.toBeNull());
    act(() => result.current.edit({ name: "H200" }));
    await act(() => result.current.save());
    const [url, options] = fetch.mock.calls[1];
    expect(url).toBe("/api/components/7/");
    expect(options.method).toBe("PUT");
    expect(JSON.parse(options.body)).toEqual({ name: "H200" });
    expect(result.current.sent).toEqual({ name: "H200" });
    expect(result.current.record.updated).toBe("now");
    expect(result.current.dirty).toBe(false);
    expect(toast).toHaveBeenCalledWith("Saved.");
  });

  it("keeps the error and the unsaved edit when a save fails", async () => {
    mockFetch(
      json(200, STORED),
      json(400, { name: ["Ensure this field has no more than 200 characters."] }),
    );
    const { result } = editor("7");
    await waitFor(() => expect(result.current.record).not.toBeNull());
    act(() => result.current.edit({ name: "x".repeat(300) }));
    let answer;
    await act(async () => {
      answer = await result.current.save();
    });
    expect(answer).toBeNull();
    expect(result.current.error.fields).toEqual({
      name: ["Ensure this field has no more than 200 characters."],
    });
    expect(result.current.record.name).toBe("x".repeat(300));
    expect(result.current.dirty).toBe(true);
    expect(toast).not.toHaveBeenCalled();
  });

  it("creates a new record with POST and opens it", async () => {
    window.history.replaceState({}, "", "/app/hardware/new");
    const fetch = mockFetch(json(201, { ...STORED, id: 12 }));
    const { result } = editor("new");
    await act(() => result.current.save());
    expect(fetch.mock.calls[0][0]).toBe("/api/components/");
    expect(fetch.mock.calls[0][1].method).toBe("POST");
    expect(window.location.pathname).toBe("/app/hardware/12");
  });

  it("deletes after asking and goes to the list", async () => {
    const fetch = mockFetch(json(200, STORED), json(204));
    const confirm = vi.spyOn(window, "confirm").mockReturnValue(true);
    const { result } = editor("7");
    await waitFor(() => expect(result.current.record).not.toBeNull());
    act(() => result.current.edit({ name: "changed" }));
    await act(() => result.current.remove());
    expect(confirm).toHaveBeenCalledWith("Delete changed?");
    expect(fetch.mock.calls[1][0]).toBe("/api/components/7/");
    expect(fetch.mock.calls[1][1].method).toBe("DELETE");
    expect(result.current.dirty).toBe(false);
    expect(window.location.pathname).toBe("/app/hardware");
  });

  it("does not delete when the user says no", async () => {
    const fetch = mockFetch(json(200, STORED));
    vi.spyOn(window, "confirm").mockReturnValue(false);
    const { result } = editor("7");
    await waitFor(() => expect(result.current.record).not.toBeNull());
    await act(() => result.current.remove());
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it("cancels the load when the editor goes away", () => {
    const fetch = mockFetch("pending");
    const { unmount } = editor("7");
    const { signal } = fetch.mock.calls[0][1];
    expect(signal.aborted).toBe(false);
    unmount();
    expect(signal.aborted).toBe(true);
  });

  it("builds its record with fromServer and edits it with the reducer", async () => {
    mockFetch(json(200, STORED));
    const reducer = (record, action) =>
      action.type === "rename" ? { ...record, title: action.to } : record;
    const { result } = editor("7", {
      fromServer: (r) => ({ title: r.name }),
      reducer,
      fingerprint: (r) => r.title,
    });
    await waitFor(() => expect(result.current.record).toEqual({ title: "H100" }));
    act(() => result.current.edit({ type: "rename", to: "H200" }));
    expect(result.current.record).toEqual({ title: "H200" });
    expect(result.current.dirty).toBe(true);
  });

  describe("when someone else saved the record since it was loaded", () => {
    const LOADED = { ...STORED, description: "", version: 3 };
    const THEIRS = { ...LOADED, description: "theirs", version: 4 };
    const REFUSED = {
      detail: "Someone else saved this record after you loaded it (...).",
      code: "version_conflict",
      expected_version: 3,
      version: 4,
      changed: ["description"],
      current: THEIRS,
    };
    const toBody = (r) => ({ name: r.name, description: r.description });

    async function refusedSave(...more) {
      const fetch = mockFetch(json(200, LOADED), json(409, REFUSED), ...more);
      const view = editor("7", { toBody });
      await waitFor(() => expect(view.result.current.record).not.toBeNull());
      act(() => view.result.current.edit({ name: "mine" }));
      await act(() => view.result.current.save());
      return { fetch, result: view.result };
    }

    it("sends the loaded version and keeps the edits and the refusal", async () => {
      const { fetch, result } = await refusedSave();
      expect(JSON.parse(fetch.mock.calls[1][1].body)).toEqual({
        name: "mine",
        description: "",
        version: 3,
      });
      expect(result.current.conflict).toMatchObject({ changed: ["description"], version: 4 });
      expect(result.current.error).toBeNull();
      expect(result.current.record.name).toBe("mine");
      expect(result.current.dirty).toBe(true);
      expect(toast).not.toHaveBeenCalled();
    });

    it("reloads the stored record, dropping the edits", async () => {
      const { fetch, result } = await refusedSave();
      act(() => result.current.reload());
      expect(result.current.record).toEqual(THEIRS);
      expect(result.current.dirty).toBe(false);
      expect(result.current.conflict).toBeNull();
      expect(fetch).toHaveBeenCalledTimes(2);
    });

    it("overwrites with the stored version and goes on from the saved one", async () => {
      const SAVED = { ...THEIRS, name: "mine", description: "", version: 5 };
      const { fetch, result } = await refusedSave(json(200, SAVED));
      await act(() => result.current.overwrite());
      expect(JSON.parse(fetch.mock.calls[2][1].body)).toEqual({
        name: "mine",
        description: "",
        version: 4,
      });
      expect(result.current.conflict).toBeNull();
      expect(result.current.dirty).toBe(false);
      act(() => result.current.edit({ name: "later" }));
      const next = mockFetch(json(200, { ...SAVED, name: "later", version: 6 }));
      await act(() => result.current.save({ type: "click" }));
      expect(JSON.parse(next.mock.calls[0][1].body).version).toBe(5);
    });
  });
});
