import { describe, expect, it } from "vitest";
import { fmt, fmtBytes, fmtEnergy, fmtTime } from "./format.js";

describe("fmt", () => {
  it("shows a missing value as a dash", () => {
    expect(fmt(null)).toBe("—");
    expect(fmt(undefined)).toBe("—");
    expect(fmt("")).toBe("—");
  });
  it("rounds to four significant digits", () => {
    expect(fmt(3.14159265)).toBe("3.142");
    expect(fmt(1234.5678)).toBe("1235");
    expect(fmt(0)).toBe("0");
  });
  it("writes very large and very small numbers in exponent form", () => {
    expect(fmt(12345678)).toBe("1.235e+7");
    expect(fmt(0.000125)).toBe("1.250e-4");
    expect(fmt(-0.0001, 2)).toBe("-1.0e-4");
  });
  it("passes strings through", () => {
    expect(fmt("GPU")).toBe("GPU");
  });
});

describe("fmtTime", () => {
  it("picks µs, ms or s", () => {
    expect(fmtTime(0.011998)).toBe("11.998 ms");
    expect(fmtTime(0.00005)).toBe("50.000 µs");
    expect(fmtTime(2.5)).toBe("2.500 s");
    expect(fmtTime(0)).toBe("0 s");
    expect(fmtTime(null)).toBe("—");
  });
});

describe("fmtBytes", () => {
  it("uses binary units", () => {
    expect(fmtBytes(2932736)).toBe("2.80 MiB");
    expect(fmtBytes(1024)).toBe("1 KiB");
    expect(fmtBytes(512)).toBe("512 B");
    expect(fmtBytes(undefined)).toBe("—");
  });
});

describe("fmtEnergy", () => {
  it("uses mJ below one joule", () => {
    expect(fmtEnergy(0.25)).toBe("250.000 mJ");
    expect(fmtEnergy(12)).toBe("12.000 J");
    expect(fmtEnergy(null)).toBe("—");
  });
});
