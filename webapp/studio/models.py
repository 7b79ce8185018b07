"""Application models, simulations and sweeps.

A simulation freezes what it runs on at launch (the system snapshot and the application
source) so that its result stays reproducible after the database changes. Writes go through
`webapp.studio.services`; reads through `webapp.studio.selectors`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from hwdb.models import OwnedRecord
from simulator.results import DEFAULT_TIMELINE_LIMIT

NAME_MAX_LENGTH = 200


class VariableType(models.TextChoices):
    """Types a launch variable of an application model may have."""

    INT = "int", "Integer"
    FLOAT = "float", "Floating point"
    BOOL = "bool", "Boolean"
    STR = "str", "String"


class ApplicationModel(OwnedRecord):
    """A MERPSYS application model: Python run once per simulated process (000, Listing 5).

    An owned record like the hardware database's (name, owner, `shared`, timestamps), seen
    and changed under the same rule (`hwdb.selectors.visible_records`, `can_change`).
    `variables` declares the launch variables: a list of {name, type, default}.
    """

    # None is built in: every application model has an owner.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="application_models"
    )
    source = models.TextField()
    variables = models.JSONField(default=list, blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class SimulationStatus(models.TextChoices):
    """Where a simulation is in its life; the last three are final."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINAL_STATUSES = (SimulationStatus.SUCCEEDED, SimulationStatus.FAILED, SimulationStatus.CANCELLED)


class SweepStatus(models.TextChoices):
    """A sweep runs until every child simulation is final."""

    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    CANCELLED = "cancelled", "Cancelled"


class Sweep(models.Model):
    """A family of simulations: variable lists or ranges x hardware substitutions.

    `aggregate` holds the children's counts by status and the best point so far; it is
    brought up to date each time a child finishes.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sweeps"
    )
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    spec = models.JSONField()
    status = models.CharField(
        max_length=16, choices=SweepStatus.choices, default=SweepStatus.RUNNING
    )
    aggregate = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    # Set by webapp.studio.selectors.simulation_queue_positions: its place in its queue.
    queue_position: int | None = None
    # Set by the selectors that read one (webapp.studio.selectors.ACCESS_*): how the reader
    # came to see it, their own, as staff or shared with them.
    access: str | None = None

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return self.name


class StudyStatus(models.TextChoices):
    """A study asks for trials while running; stopped, it asks for none (its runs in flight
    finish and are told); it finishes once its budget is spent and no run is in flight."""

    RUNNING = "running", "Running"
    STOPPED = "stopped", "Stopped"
    FINISHED = "finished", "Finished"


class StudySampler(models.TextChoices):
    """simulator.study.SAMPLERS: auto is TPE for one objective, NSGA-II for several."""

    AUTO = "auto", "Auto"
    TPE = "tpe", "TPE"
    NSGA2 = "nsga2", "NSGA-II"
    RANDOM = "random", "Random"


class Study(models.Model):
    """An optimiser's search over a sweep's axes (simulator.study), one run per trial.

    Its runs are the children of its `sweep` (their `sweep_point` holds the trial's number),
    so the sweep's table, sharing and run lists serve it unchanged. The optimiser's state
    lives in Optuna's tables in the same database under `optuna_name`; everything a trial's
    run needs is frozen here at launch (`frozen`: the snapshot, source, declared variables,
    launch settings), so trials launched later do not read the records it came from.
    `lease_until` serialises the advancing of one study (services.studies.study_advance).
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="studies"
    )
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    sweep = models.OneToOneField(Sweep, on_delete=models.CASCADE, related_name="study")
    system_model = models.ForeignKey(
        "hwdb.SystemModel", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    application = models.ForeignKey(
        ApplicationModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    frozen = models.JSONField(help_text="What each trial's run is launched with.")
    axes = models.JSONField(help_text="The axes searched: name -> list, range or value.")
    objectives = models.JSONField(help_text="[{metric, direction}] (simulator.study).")
    constraints = models.JSONField(default=list, blank=True)
    sampler = models.CharField(
        max_length=16, choices=StudySampler.choices, default=StudySampler.AUTO
    )
    seed = models.BigIntegerField(default=0)
    max_runs = models.PositiveIntegerField(help_text="Trials (runs) the study may make.")
    max_wall_s = models.PositiveIntegerField(
        null=True, blank=True, help_text="No trial is asked for after this long from launch."
    )
    parallel = models.PositiveIntegerField(default=1, help_text="Trials in flight at once.")
    status = models.CharField(
        max_length=16, choices=StudyStatus.choices, default=StudyStatus.RUNNING
    )
    optuna_name = models.CharField(max_length=128, unique=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    access: str | None = None  # as Sweep.access

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name


class Simulation(models.Model):
    """One simulation run on a named queue, with everything it needs frozen at launch.

    The names of the system and application models it was launched from are frozen too: the
    records may be renamed, unshared or deleted by their owners (other users' included), and
    a run must neither change nor show their later, possibly private, names."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="simulations"
    )
    name = models.CharField(max_length=NAME_MAX_LENGTH, blank=True)
    system_model = models.ForeignKey(
        "hwdb.SystemModel",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="simulations",
    )
    system_name = models.CharField(
        max_length=NAME_MAX_LENGTH,
        blank=True,
        help_text="The system model's name at launch (empty: launched from a bare snapshot).",
    )
    snapshot = models.JSONField(help_text="The system snapshot frozen at launch.")
    application = models.ForeignKey(
        ApplicationModel,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="simulations",
    )
    application_name = models.CharField(
        max_length=NAME_MAX_LENGTH,
        blank=True,
        help_text="The application model's name at launch (empty: launched from a bare source).",
    )
    app_source = models.TextField(help_text="The application model's source frozen at launch.")
    variables = models.JSONField(default=dict, blank=True)
    labels = models.JSONField(default=dict)
    queue = models.CharField(max_length=100)
    seed = models.BigIntegerField(default=0)
    time_limit_s = models.PositiveIntegerField(help_text="Wall-clock limit of one attempt.")
    cpu_limit_s = models.PositiveIntegerField(
        null=True, blank=True, help_text="CPU-time limit of one attempt; empty: runs before it."
    )
    timeline_limit = models.PositiveIntegerField(
        default=DEFAULT_TIMELINE_LIMIT,
        help_text="Timeline entries the run keeps (process entries and busy periods, each).",
    )
    status = models.CharField(
        max_length=16, choices=SimulationStatus.choices, default=SimulationStatus.QUEUED
    )
    progress = models.FloatField(default=0.0)
    simulated_time_s = models.FloatField(
        null=True, blank=True, help_text="The simulated time the engine has reached [s]."
    )
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    overall_time_s = models.FloatField(null=True, blank=True)
    energy_j = models.FloatField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=255, blank=True)
    worker_life = models.CharField(
        max_length=64,
        blank=True,
        help_text="The life (process start) of the worker running it: a worker restarted under "
        "the same hostname is another life (webapp.studio.worker_life).",
    )
    celery_task_id = models.CharField(max_length=64, blank=True)
    sent = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When its task reached the broker; empty: not yet (the lost-run check sends it).",
    )
    held = models.BooleanField(
        default=False,
        help_text="Queued but held back: its owner has PARASIM_MAX_RUNNING_PER_USER runs in flight.",
    )
    heartbeat = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    engine_version = models.CharField(max_length=32)
    sweep = models.ForeignKey(
        Sweep, null=True, blank=True, on_delete=models.CASCADE, related_name="simulations"
    )
    sweep_point = models.JSONField(
        null=True, blank=True, help_text="This child's variables and hardware within its sweep."
    )
    failures = models.JSONField(
        null=True,
        blank=True,
        help_text="The Monte Carlo failure injection asked for at launch ({mode, samples, "
        "restart_s}: simulator.failure_injection), or null for none.",
    )
    uncertainty = models.JSONField(
        null=True,
        blank=True,
        help_text="The prediction interval asked for at launch ({samples, seed, scale}: "
        "simulator.uncertainty), or null for none.",
    )
    workload = models.JSONField(
        null=True,
        blank=True,
        help_text="For a workload evaluation (webapp.studio.services.workloads): its kind and "
        "the step_basis its figures are computed from; null for other runs.",
    )

    # Set by webapp.studio.selectors.simulation_queue_positions: its place in its queue.
    queue_position: int | None = None
    # Set by the selectors that read one (webapp.studio.selectors.ACCESS_*): how the reader
    # came to see it, their own, as staff or shared with them.
    access: str | None = None
    # Set by webapp.studio.selectors.simulation_get: a run shared without its sweep.
    sweep_hidden: bool = False

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["owner", "status"]),
            models.Index(fields=["status", "heartbeat"]),
            models.Index(fields=["sweep", "status"]),
            models.Index(fields=["queue", "status", "created"]),
        ]

    def __str__(self) -> str:
        return self.name or f"simulation {self.pk}"

    @property
    def is_final(self) -> bool:
        """Return True once the simulation succeeded, failed or was cancelled."""
        return self.status in FINAL_STATUSES


class Share(models.Model):
    """A read-only grant of one run or one sweep by its owner: to one user, or to whoever
    holds an unguessable link (`link`).

    Exactly one of `simulation` and `sweep`, and exactly one of `user` and `link`, are set.
    A sweep's grant covers its child runs. A signed-in user who opens a link is given a
    grant of their own (`via` the link's), so that revoking the link revokes theirs too.
    The grant shows the run or sweep as its owner sees it (its frozen snapshot and source
    included), never the owner's records it was launched from.
    """

    simulation = models.ForeignKey(
        Simulation, null=True, blank=True, on_delete=models.CASCADE, related_name="shares"
    )
    sweep = models.ForeignKey(
        Sweep, null=True, blank=True, on_delete=models.CASCADE, related_name="shares"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="shares_received",
    )
    link = models.CharField(max_length=64, null=True, blank=True, unique=True)
    via = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="redeemed",
        help_text="The link share this user's grant came from (revoked with it).",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(simulation__isnull=True) ^ models.Q(sweep__isnull=True),
                name="share_one_target",
            ),
            models.CheckConstraint(
                condition=models.Q(user__isnull=True) ^ models.Q(link__isnull=True),
                name="share_user_or_link",
            ),
            models.UniqueConstraint(fields=["simulation", "user"], name="share_run_user_once"),
            models.UniqueConstraint(fields=["sweep", "user"], name="share_sweep_user_once"),
            # One link per run or sweep: publishing twice gives the same link.
            models.UniqueConstraint(
                fields=["simulation"],
                condition=models.Q(link__isnull=False),
                name="share_run_one_link",
            ),
            models.UniqueConstraint(
                fields=["sweep"],
                condition=models.Q(link__isnull=False),
                name="share_sweep_one_link",
            ),
        ]

    def __str__(self) -> str:
        target = f"run {self.simulation_id}" if self.simulation_id else f"sweep {self.sweep_id}"
        return f"{target} shared with {'a link' if self.link else f'user {self.user_id}'}"
