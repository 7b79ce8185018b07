import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { GridTable, REMOVE_COLUMN } from "./GridTable.jsx";

afterEach(cleanup);

describe("GridTable", () => {
  it("renders the header row and the rows given", () => {
    render(
      <GridTable label="Models" columns={["Name", "Owner"]}>
        <tr>
          <td>A</td>
          <td>ada</td>
        </tr>
      </GridTable>,
    );
    const table = screen.getByRole("table", { name: "Models" });
    expect(table.className).toBe("grid");
    expect(screen.getAllByRole("columnheader").map((th) => th.textContent)).toEqual([
      "Name",
      "Owner",
    ]);
    expect(screen.getAllByRole("row")).toHaveLength(2);
  });

  it("leaves out a false column and takes other classes", () => {
    const { container } = render(
      <GridTable label="Attributes" className="grid attributes" columns={["Key", false]} />,
    );
    expect(container.querySelector("table").className).toBe("grid attributes");
    expect(container.querySelectorAll("th")).toHaveLength(1);
  });

  it("names a remove column for screen readers only", () => {
    const { container } = render(<GridTable label="Variables" columns={["Name", REMOVE_COLUMN]} />);
    expect(container.querySelector("th:last-child span.sr-only").textContent).toBe("Remove");
  });
});
