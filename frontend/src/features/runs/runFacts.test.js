import { describe, expect, it } from "vitest";
import { fmtDuration, runFacts, runProgress, runProgressBrief } from "./runFacts.js";

const facts = (sim, now) =>
  Object.fromEntries(runFacts(sim, Date.parse(now)).map((f) => [f.label, f.value]));
const base = { seed: 7, worker: "", attempts: 0, queue: "default", simulated_time_s: null };

describe("fmtDuration", () => {
  it("reads as a person says it", () => {
    expect(fmtDuration(0.85)).toBe("850 ms");
    expect(fmtDuration(4.24)).toBe("4.2 s");
    expect(fmtDuration(185)).toBe("3 min 05 s");
    expect(fmtDuration(7260)).toBe("2 h 01 min");
    expect(fmtDuration(null)).toBe("—");
  });
});

describe("runFacts", () => {
  it("gives a queued run its queue position and how long it waits", () => {
    const f = facts(
      { ...base, status: "queued", created: "2024-05-10T10:00:00Z", queue_position: 3 },
      "2024-05-10T10:00:30Z",
    );
    expect(f["Queue position"]).toBe("3 of the queued runs on default");
    expect(f["Waiting for"]).toBe("30.0 s");
    expect(f.Seed).toBe("7");
    expect(f.Elapsed).toBeUndefined();
    expect(f["Prediction interval"]).toBeUndefined();
  });
  it("names the prediction interval a run asked for", () => {
    const sim = { ...base, status: "queued", uncertainty: { samples: 50, seed: 3, scale: 1 } };
    expect(facts(sim, "2024-05-10T10:00:30Z")["Prediction interval"]).toBe("50 samples, seed 3");
  });
  it("gives a running run its elapsed time, worker and the simulated time reached", () => {
    const f = facts(
      {
        ...base,
        status: "running",
        created: "2024-05-10T10:00:00Z",
        started: "2024-05-10T10:01:00Z",
        worker: "w1@host",
        simulated_time_s: 0.0025,
      },
      "2024-05-10T10:03:05Z",
    );
    expect(f.Elapsed).toBe("2 min 05 s");
    expect(f.Worker).toBe("w1@host");
    expect(f["Simulated time reached"]).toBe("2.500 ms");
    expect(f["Queue position"]).toBeUndefined();
  });
  it("gives a finished run its start, end and wall time", () => {
    const f = facts(
      {
        ...base,
        status: "succeeded",
        created: "2024-05-10T10:00:00Z",
        started: "2024-05-10T10:00:01Z",
        finished: "2024-05-10T10:00:03.5Z",
        simulated_time_s: 1.98,
        attempts: 2,
      },
      "2024-05-11T00:00:00Z",
    );
    expect(f["Wall time"]).toBe("2.5 s");
    expect(f["Simulated time"]).toBe("1.980 s");
    expect(f.Attempts).toBe("2");
    expect(f.Elapsed).toBeUndefined();
  });
});

describe("runProgress", () => {
  const running = {
    ...base,
    status: "running",
    started: "2024-05-10T10:00:00Z",
    simulated_time_s: 0.0025,
  };
  const at = Date.parse("2024-05-10T10:01:05Z");

  it("gives no fraction while no process has finished, but the time reached and elapsed", () => {
    expect(runProgress({ ...running, progress: 0 }, at)).toEqual({
      fraction: null,
      caption: "Running: simulated time reached 2.500 ms · elapsed 1 min 05 s",
    });
  });

  it("gives the fraction of the processes finished where there is one", () => {
    expect(runProgress({ ...running, progress: 0.5 }, at)).toEqual({
      fraction: 0.5,
      caption:
        "50 % of the processes finished · simulated time reached 2.500 ms · elapsed 1 min 05 s",
    });
  });
});

describe("runProgressBrief", () => {
  const running = {
    ...base,
    status: "running",
    started: "2024-05-10T10:00:00Z",
    simulated_time_s: 0.0025,
  };
  const at = Date.parse("2024-05-10T10:01:05Z");

  it("gives a run that cannot know its fraction the time reached and elapsed, no 0 %", () => {
    const brief = runProgressBrief({ ...running, progress: 0 }, at);
    expect(brief).toBe("2.500 ms simulated · 1 min 05 s elapsed");
    expect(brief).not.toMatch(/%/);
  });

  it("puts the fraction first where the run knows one", () => {
    expect(runProgressBrief({ ...running, progress: 0.5 }, at)).toBe(
      "50 % · 2.500 ms simulated · 1 min 05 s elapsed",
    );
  });

  it("says what it does not know yet with a dash", () => {
    expect(runProgressBrief({ ...running, started: null, simulated_time_s: null }, at)).toBe(
      "— simulated · — elapsed",
    );
  });
});
