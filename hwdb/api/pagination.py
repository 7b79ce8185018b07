"""Page-number pagination whose page size the client may choose, up to a bound."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination

MAX_PAGE_SIZE = 200
MSG_PAGE_SIZE = "Expected a whole number of at least 1 (at most {limit} are given), got {value!r}."


class BoundedPageNumberPagination(PageNumberPagination):
    """`?page=N&page_size=M`, M at most 200 (larger values are capped, not rejected).

    A page size that is not a whole number of at least 1 ("0", "-1.4e-45", "null") is a 400
    naming `page_size`: DRF's own pagination silently gives the default page instead.
    """

    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def get_page_size(self, request: Any) -> int | None:
        value = request.query_params.get(self.page_size_query_param)
        if value is None or value == "":
            return self.page_size
        text = value.strip()
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            raise ValidationError(
                {
                    self.page_size_query_param: [
                        MSG_PAGE_SIZE.format(limit=self.max_page_size, value=value)
                    ]
                }
            )
        return min(int(text), self.max_page_size)
