import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EditorHeader } from "./EditorHeader.jsx";

afterEach(cleanup);

describe("EditorHeader", () => {
  it("puts Save first and Delete last around the editor's own actions", () => {
    const save = vi.fn();
    const remove = vi.fn();
    render(
      <EditorHeader titleId="t" title="GTX 970" dirty={false} onSave={save} onDelete={remove}>
        <button>Clone</button>
      </EditorHeader>,
    );
    expect(screen.getByRole("heading", { name: "GTX 970" }).id).toBe("t");
    expect(screen.getAllByRole("button").map((b) => b.textContent)).toEqual([
      "Save",
      "Clone",
      "Delete",
    ]);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    expect(save).toHaveBeenCalledOnce();
    expect(remove).toHaveBeenCalledOnce();
  });

  it("marks unsaved changes and leaves out the buttons without a handler", () => {
    render(<EditorHeader titleId="t" title="New component" dirty onSave={null} onDelete={null} />);
    expect(screen.getByRole("heading").textContent).toBe("New component · unsaved");
    expect(screen.queryAllByRole("button")).toEqual([]);
  });
});
