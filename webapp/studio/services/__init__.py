"""Writes of the studio, one module per entity: application models (`applications`),
launching (`launch`), running, cancelling and recovering runs (`runs`), sweeps (`sweeps`),
studies (`studies`: an optimiser over a sweep's axes),
and `common` (messages, field errors, the database-outage rules, `RunCancelled`).

The services queue and revoke tasks through `webapp.studio.dispatch`, by task name, and never
import `webapp.studio.tasks` (the tasks import the services). Callers import from the module
that owns a service; this package re-exports nothing.
"""
