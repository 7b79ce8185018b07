import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { OwnerCell, SharedCheckbox, TextField } from "./RecordFields.jsx";

afterEach(cleanup);

describe("TextField", () => {
  it("shows the record's value and sets its key on a change", () => {
    const set = vi.fn();
    render(
      <TextField label="Vendor" name="vendor" record={{ vendor: "AMD" }} errors={{}} set={set} />,
    );
    const input = screen.getByLabelText("Vendor");
    expect(input.tagName).toBe("INPUT");
    expect(input.value).toBe("AMD");
    expect(input.hasAttribute("readonly")).toBe(false);
    expect(input.hasAttribute("aria-invalid")).toBe(false);
    fireEvent.change(input, { target: { value: "NVIDIA" } });
    expect(set).toHaveBeenCalledWith({ vendor: "NVIDIA" });
  });

  it("is a read-only textarea when asked, with extra attributes passed on", () => {
    render(
      <TextField
        label="Comment"
        name="comment"
        record={{ comment: "x" }}
        errors={{}}
        set={() => {}}
        readOnly
        rows={2}
        aria-invalid={false}
      />,
    );
    const area = screen.getByLabelText("Comment");
    expect(area.tagName).toBe("TEXTAREA");
    expect(area.getAttribute("rows")).toBe("2");
    expect(area.hasAttribute("readonly")).toBe(true);
    expect(area.getAttribute("aria-invalid")).toBe("false");
  });

  it("marks the control invalid and shows the API's message for its key", () => {
    render(
      <TextField
        label="Name"
        name="name"
        record={{ name: "" }}
        errors={{ name: ["This field may not be blank."] }}
        set={() => {}}
      />,
    );
    const input = screen.getByLabelText("Name");
    expect(input.getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByRole("alert").textContent).toBe("This field may not be blank.");
    expect(input.getAttribute("aria-describedby")).toBe(screen.getByRole("alert").id);
  });
});

describe("SharedCheckbox", () => {
  it("reports the new state and says what it means", () => {
    const onChange = vi.fn();
    render(<SharedCheckbox checked={false} onChange={onChange} />);
    const box = screen.getByLabelText("Shared with every user");
    expect(box.closest("label").className).toBe("check");
    expect(box.disabled).toBe(false);
    fireEvent.click(box);
    expect(onChange).toHaveBeenCalledWith(true);
  });

  it("is disabled when read-only and takes another label", () => {
    render(<SharedCheckbox checked readOnly label="Shared" onChange={() => {}} />);
    const box = screen.getByLabelText("Shared");
    expect(box.checked).toBe(true);
    expect(box.disabled).toBe(true);
  });
});

describe("OwnerCell", () => {
  it("names the owner and whether the record is shared", () => {
    const { container } = render(
      <table>
        <tbody>
          <tr>
            <OwnerCell owner="ada" shared />
            <OwnerCell owner="built-in" shared={false} />
          </tr>
        </tbody>
      </table>,
    );
    const cells = container.querySelectorAll("td");
    expect(cells[0].textContent).toBe("ada · shared");
    expect(cells[1].textContent).toBe("built-in");
  });
});
