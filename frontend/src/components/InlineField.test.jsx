import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { InlineField } from "./InlineField.jsx";

afterEach(cleanup);

describe("InlineField", () => {
  it("labels its control and adds classes", () => {
    const { container } = render(
      <InlineField label="Description" className="grow">
        <input aria-label="System model description" />
      </InlineField>,
    );
    const label = container.querySelector("label");
    expect(label.className).toBe("field grow");
    expect(label.querySelector(".field-label").textContent).toBe("Description");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("shows a given message and marks the field invalid", () => {
    const { container } = render(
      <InlineField label="Count" error="must be at least 1">
        <input />
      </InlineField>,
    );
    expect(container.querySelector("label").className).toBe("field invalid");
    const alert = screen.getByRole("alert");
    expect(alert.tagName).toBe("SPAN");
    expect(alert.className).toBe("field-error");
    expect(alert.textContent).toBe("must be at least 1");
  });

  it("shows the API's messages for its path", () => {
    const { container } = render(
      <InlineField
        label="Seed"
        className="inline"
        errors={{ seed: ["A valid integer is required."] }}
        path="seed"
      >
        <input />
      </InlineField>,
    );
    expect(container.querySelector("label").className).toBe("field inline invalid");
    expect(screen.getByRole("alert").dataset.errorPath).toBe("seed");
  });

  it("is valid when its path has no messages", () => {
    const { container } = render(
      <InlineField label="Seed" errors={{}} path="seed">
        <input />
      </InlineField>,
    );
    expect(container.querySelector("label").className).toBe("field");
    expect(screen.queryByRole("alert")).toBeNull();
  });
});
