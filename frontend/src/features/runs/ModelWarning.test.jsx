import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ModelWarning, modelWarningLines } from "./ModelWarning.jsx";

describe("ModelWarning", () => {
  it("lists each node whose model ran outside its validated architectures", () => {
    const result = {
      warnings: [
        {
          code: "architecture",
          node: "gpu0",
          name: "GPU",
          message: "'Volkov GPU' was validated on Maxwell and Pascal GPUs; ...",
        },
        { code: "other", node: "gpu1", name: "GPU 2", message: "not an architecture warning" },
      ],
    };
    const lines = modelWarningLines(result);
    expect(lines).toEqual([
      "GPU (gpu0): 'Volkov GPU' was validated on Maxwell and Pascal GPUs; ...",
    ]);
    render(<ModelWarning scope="This run's" lines={lines} />);
    const note = screen.getByRole("note", { name: "Model warning" });
    expect(note.textContent).toContain("This run's GPU times come from a model outside");
    expect(note.textContent).toContain("GPU (gpu0): 'Volkov GPU' was validated on Maxwell");
  });

  it("shows nothing for a result without warnings (one stored before them)", () => {
    expect(modelWarningLines({})).toEqual([]);
    const { container } = render(<ModelWarning scope="This run's" lines={[]} />);
    expect(container.textContent).toBe("");
  });
});
