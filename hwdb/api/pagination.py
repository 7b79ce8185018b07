"""Page-number pagination whose page size the client may choose, up to a bound."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination

MAX_PAGE_SIZE = 200


class BoundedPageNumberPagination(PageNumberPagination):
    """`?page=N&page_size=M`, M at most 200 (larger values are capped, not rejected)."""

    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
