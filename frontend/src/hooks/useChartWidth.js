// The width a chart is drawn at: the width it would like, or less where its box is narrower
// (a phone), down to a least width below which its box scrolls instead.
import { useLayoutEffect, useRef, useState } from "react";

// Return [ref, width]: `ref` goes on a block around the chart's svg, without padding, as wide
// as the column the chart sits in.
export function useChartWidth(preferred, least = 280) {
  const ref = useRef(null);
  const [available, setAvailable] = useState(null);
  useLayoutEffect(() => {
    const box = ref.current;
    if (!box || typeof ResizeObserver === "undefined") return undefined;
    const measure = () => setAvailable(box.clientWidth);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    return () => observer.disconnect();
  }, []);
  return [ref, chartWidth(preferred, available, least)];
}

// Return the drawing width for a box `available` pixels wide (null: not measured yet).
export function chartWidth(preferred, available, least = 280) {
  if (!available) return preferred;
  return Math.round(Math.max(least, Math.min(preferred, available)));
}
