import { cleanup, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { LinkUtilisation } from "./LinkUtilisation.jsx";
import { binSpan, busiestLinks, percent } from "./links.js";

afterEach(cleanup);

const link = (name, mean, series, bytes = 1e9) => ({
  link: name,
  node: name.split("[")[0],
  instance: 0,
  sharing: "full-duplex",
  bytes,
  peak_utilisation: Math.max(...series),
  mean_utilisation: mean,
  saturated_s: 0.001,
  utilisation_series: series,
});

describe("busiestLinks", () => {
  it("keeps the links that carried data, busiest first, ties in the result's order", () => {
    const links = [
      link("a[0]", 0.2, [0.2]),
      link("idle[0]", 0, [0], 0),
      link("b[0]", 0.9, [0.9]),
      link("c[0]", 0.2, [0.2]),
    ];
    expect(busiestLinks(links).map((l) => l.link)).toEqual(["b[0]", "a[0]", "c[0]"]);
    expect(busiestLinks(links, 1).map((l) => l.link)).toEqual(["b[0]"]);
    expect(busiestLinks(undefined)).toEqual([]);
  });
  it("formats fractions as percentages and bins as time spans", () => {
    expect(percent(0.4567)).toBe("45.7%");
    expect(percent(1.0000000002)).toBe("100.0%");
    expect(percent(undefined)).toBe("—");
    expect(binSpan(2, 4, 1)).toEqual([0.5, 0.75]);
  });
});

describe("LinkUtilisation", () => {
  it("charts each link's series over the run and tables its figures", () => {
    const links = [
      link("nic[0] gpu[0]->leaf[0]", 0.25, [0, 0, 0.5, 0.5]),
      link("nvswitch[0] gpu[0]->gpu[1]", 0.75, [1, 1, 1, 0]),
    ];
    render(<LinkUtilisation links={links} overall={0.004} />);
    const first = screen.getByTestId("link-row-0");
    expect(first.getAttribute("data-link")).toBe("nvswitch[0] gpu[0]->gpu[1]");
    // one shaded cell per bin in use, as dark as the bin is busy
    const cells = first.querySelectorAll("rect[fill-opacity]");
    expect([...cells].map((c) => c.getAttribute("fill-opacity"))).toEqual(["1", "1", "1"]);
    const second = screen.getByTestId("link-row-1").querySelectorAll("rect[fill-opacity]");
    expect([...second].map((c) => c.getAttribute("fill-opacity"))).toEqual(["0.5", "0.5"]);
    expect(second[0].textContent).toContain("50.0%");
    const table = screen.getByRole("table", { name: "Links" });
    const rows = within(table).getAllByRole("row");
    expect(rows[1].textContent).toContain("nvswitch[0] gpu[0]->gpu[1]");
    expect(screen.getByTestId("link-mean-0").textContent).toBe("75.0%");
    expect(screen.getByTestId("link-mean-1").textContent).toBe("25.0%");
  });
  it("says how many links the chart leaves to the table", () => {
    const links = Array.from({ length: 30 }, (_, i) => link(`l[${i}]`, i / 30, [i / 30]));
    render(<LinkUtilisation links={links} overall={1} />);
    expect(screen.getAllByTestId(/^link-row-/)).toHaveLength(24);
    expect(screen.getByRole("figure").textContent).toContain("The 24 busiest of 30 links");
  });
  it("shows nothing for a run without flow links", () => {
    const { container } = render(<LinkUtilisation links={undefined} overall={1} />);
    expect(container.textContent).toBe("");
  });
});
