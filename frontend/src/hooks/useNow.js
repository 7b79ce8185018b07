// The time now, in milliseconds since the epoch, ticking each second while `live`.
import { useEffect, useState } from "react";

export function useNow(live) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return undefined;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);
  return now;
}
