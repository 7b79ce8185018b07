import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json } from "../../test/fetch.js";
import { SearchAsStudy } from "./SearchAsStudy.jsx";
import { StudyDetail } from "./Studies.jsx";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

// A study as GET /api/studies/{id}/ returns it, with two objectives.
const study = (status, extra = {}) => ({
  id: 7,
  name: "saxpy2 search",
  owner: "ada",
  status,
  sweep: 3,
  sweep_status: status === "finished" ? "finished" : "running",
  axes: { blockSz: [64, 256], computeIntensity: { start: 1, stop: 64, step: 1 } },
  objectives: [{ metric: "overall_time_s" }, { metric: "energy_j" }],
  constraints: ["gpu_power_w <= 700"],
  sampler: "nsga2",
  seed: 0,
  budget: { runs: 4, wall_s: null },
  parallel: 2,
  created: "2026-12-07T00:00:00Z",
  finished: null,
  access: "owner",
  progress: {
    trials: [
      {
        number: 0,
        state: "complete",
        point: { blockSz: 64, computeIntensity: 3 },
        metrics: { overall_time_s: 2, energy_j: 1 },
        simulation: 11,
        simulation_status: "succeeded",
        feasible: true,
        best: true,
        error: null,
      },
      {
        number: 1,
        state: "fail",
        point: { blockSz: 256, computeIntensity: 9 },
        metrics: {},
        simulation: null,
        simulation_status: null,
        feasible: false,
        best: false,
        error: "The trial's run was never stored (its advance stopped); counted as failed.",
      },
    ],
    asked: 2,
    done: 2,
    running: 0,
    failed: 1,
    budget: 4,
    best: [0],
    ...extra,
  },
});

describe("StudyDetail", () => {
  it("shows the progress, the trials best first and stops a running study", async () => {
    // The server: the study runs until a POST to stop/ stops it.
    let status = "running";
    const fetch = vi.fn((url, options = {}) => {
      if (url === "/api/studies/7/stop/" && options.method === "POST") status = "stopped";
      const body = study(status);
      return Promise.resolve(
        json(200, url.endsWith("/stop/") ? { ...body, progress: undefined } : body),
      );
    });
    vi.stubGlobal("fetch", fetch);
    render(<StudyDetail id="7" />);
    await screen.findByRole("heading", { name: "saxpy2 search" });
    expect(screen.getByTestId("progress-caption").textContent).toBe("2 of 4 runs done, 1 failed");
    const rows = screen.getAllByRole("row").slice(1);
    expect(rows[0].textContent).toContain("best");
    expect(rows[1].querySelector("[title]").getAttribute("title")).toContain("never stored");
    expect(document.querySelectorAll("[data-kind=front]")).toHaveLength(1);
    fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Resume" })).toBeTruthy());
    const posts = fetch.mock.calls.filter(([, options]) => options?.method === "POST");
    expect(posts.map(([url]) => url)).toEqual(["/api/studies/7/stop/"]);
  });
});

describe("StudyDetail of a big study", () => {
  it("says how many trials it shows and links every trial", async () => {
    const big = study("finished", { asked: 10000, shown: 2 });
    big.trials_url = "/api/studies/7/trials/";
    vi.stubGlobal(
      "fetch",
      vi.fn(() => Promise.resolve(json(200, big))),
    );
    render(<StudyDetail id="7" />);
    const caption = await screen.findByTestId("shown-caption");
    expect(caption.textContent).toContain("Showing 2 of 10000 trials");
    expect(caption.querySelector("a").getAttribute("href")).toBe("/api/studies/7/trials/");
  });

  it("says nothing of a sample when every trial is shown", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(() => Promise.resolve(json(200, study("finished", { shown: 2 })))),
    );
    render(<StudyDetail id="7" />);
    await screen.findByRole("heading", { name: "saxpy2 search" });
    expect(screen.queryByTestId("shown-caption")).toBe(null);
  });
});

describe("SearchAsStudy", () => {
  const sweep = {
    id: 3,
    name: "intensity",
    access: "owner",
    spec: { labels: { CPU: 1 }, variables: { computeIntensity: { start: 1, stop: 64, step: 1 } } },
  };
  const objectives = [
    { metric: "overall_time_s", direction: "" },
    { metric: "energy_j", direction: "" },
  ];

  it("starts a study of the sweep's axes and opens it", async () => {
    vi.stubGlobal("scrollTo", () => {});
    const fetch = vi.fn(() => Promise.resolve(json(201, { id: 9 })));
    vi.stubGlobal("fetch", fetch);
    render(<SearchAsStudy sweep={sweep} objectives={objectives} constraints={[]} />);
    fireEvent.change(screen.getByLabelText("Runs"), { target: { value: "30" } });
    fireEvent.click(screen.getByRole("button", { name: "Start the study" }));
    await waitFor(() => expect(window.location.pathname).toBe("/app/studies/9"));
    const [url, options] = fetch.mock.calls[0];
    expect(url).toBe("/api/studies/");
    const body = JSON.parse(options.body);
    expect(body.budget).toEqual({ runs: 30 });
    expect(body.spec).toEqual(sweep.spec);
  });

  it("shows the server's message beside the budget it refused", async () => {
    const refusal = { "budget.runs": ["Expected a whole number of runs from 1 to 1000."] };
    vi.stubGlobal(
      "fetch",
      vi.fn(() => Promise.resolve(json(400, refusal))),
    );
    render(<SearchAsStudy sweep={sweep} objectives={objectives} constraints={[]} />);
    fireEvent.click(screen.getByRole("button", { name: "Start the study" }));
    await screen.findByText("Expected a whole number of runs from 1 to 1000.");
  });

  it("is not offered on a shared sweep", () => {
    const { container } = render(
      <SearchAsStudy
        sweep={{ ...sweep, access: "shared" }}
        objectives={objectives}
        constraints={[]}
      />,
    );
    expect(container.textContent).toBe("");
  });
});
