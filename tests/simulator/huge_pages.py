"""When the tests of huge pages can hold: what the kernel and glibc of this machine offer."""

from __future__ import annotations

import os
from pathlib import Path

# The kernel has transparent huge pages (a mapping advised MADV_HUGEPAGE shows "hg").
KERNEL_HUGE_PAGES = Path("/sys/kernel/mm/transparent_hugepage").is_dir()


def _glibc_at_least(major: int, minor: int) -> bool:
    name, _, version = (os.confstr("CS_GNU_LIBC_VERSION") or "").partition(" ")
    parts = tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
    return name == "glibc" and parts >= (major, minor)


# glibc's malloc advises huge pages for its heap under GLIBC_TUNABLES=glibc.malloc.hugetlb=1
# from 2.35 on (older ones ignore the tunable).
MALLOC_HUGE_PAGES = KERNEL_HUGE_PAGES and _glibc_at_least(2, 35)
