import { cleanup, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorSummary } from "./ErrorSummary.jsx";
import { Field, FieldErrors } from "./Field.jsx";
import { InlineField } from "./InlineField.jsx";

afterEach(cleanup);

const error = (fields) => ({ message: "Please correct the highlighted fields.", fields });

describe("ErrorSummary", () => {
  it("lists an error that no field of the form shows", () => {
    const fields = { name: ["Ensure this field has no more than 200 characters."] };
    // A form whose name input shows no messages: the summary must name the field.
    render(
      <>
        <ErrorSummary error={error(fields)} />
        <InlineField label="Run name">
          <input />
        </InlineField>
      </>,
    );
    const box = screen.getByRole("alert");
    expect(box.textContent).toContain("name");
    expect(box.textContent).toContain("no more than 200 characters");
  });

  it("leaves out the errors shown beside their fields and lists the rest", () => {
    const fields = {
      name: ["Too long."],
      "variables.N": ["Expected a whole number."],
      "variables.M": ["Unknown variable."],
    };
    const { container } = render(
      <>
        <ErrorSummary error={error(fields)} />
        <Field label="Name" path="name" errors={fields}>
          <input />
        </Field>
        <InlineField label="N" errors={fields} path="variables.N">
          <input />
        </InlineField>
      </>,
    );
    const box = container.querySelector(".error-box");
    expect(
      within(box)
        .getAllByRole("listitem")
        .map((li) => li.textContent),
    ).toEqual(["variables.M Unknown variable."]);
    expect(container.querySelector('[data-error-path="name"]').textContent).toBe("Too long.");
  });

  it("lists an error again once its field is gone", () => {
    const fields = { "attributes[0].value": ["Expected a number."] };
    const { container, rerender } = render(
      <>
        <ErrorSummary error={error(fields)} />
        <FieldErrors errors={fields} path="attributes[0].value" />
      </>,
    );
    expect(container.querySelectorAll(".error-box li")).toHaveLength(0);
    rerender(
      <>
        <ErrorSummary error={error(fields)} />
      </>,
    );
    expect(container.querySelector(".error-box li").textContent).toContain("Expected a number.");
  });
});
