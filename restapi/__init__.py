"""The REST convention both apps follow (hwdb's API and the studio's): lenient JSON in,
numeric ids, validated bodies, records rendered by orjson, and list pages kept per version
of what they show.

Below both apps: it imports neither `hwdb` nor `webapp` (tests/test_import_graph.py), so
either app can use it without depending on the other or on the project. What needs the
apps' own code stays with them: the owned-record viewset with hwdb
(`hwdb.api.viewsets`), the exception handler, token authentication and the launch rate
with the project (`webapp.api`).
"""
