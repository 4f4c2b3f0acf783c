"""The comparison kind of batch (`COMPARISON`): a comparison is a batch (batches/kinds.py), like an experiment, so one
pass, the owner's cap, the inline loop, the Celery tick chain, the sweep, the owner's actions and resuming after a
crash are the same code; here is how a run's debate is made: its arm's format with its arm's people and options,
the question as the topic and its material and lettered choices as the material."""

from __future__ import annotations

from typing import Any

from batches import schedule
from batches.kinds import BatchKind
from comparisons import broadcast, selectors
from comparisons.models import Comparison, Run
from comparisons.services import material_of
from debates.models import Debate
from debates.setup import SeatChoice, create_debate
from personas.yaml_io import spec_from_mapping


def _create_debate(comparison: Comparison, run_id: int) -> Debate:
    run = Run.objects.select_related("question").get(pk=run_id)
    arm = comparison.arms[run.arm]
    where = f"comparison {comparison.pk}: {arm['name']}"
    seats = {key: SeatChoice(spec=spec_from_mapping(spec, where)) for key, spec in arm["seats"].items()}
    return create_debate(
        format_name=arm["format"],
        card_source=arm.get("card_source", ""),
        topic=run.question.question,
        material=material_of(run.question),
        seats=seats,
        options=arm["options"],
        owner=comparison.owner,
        visibility=comparison.visibility,
        in_batch=True,
    )


class ComparisonKind(BatchKind):
    """A comparison's jobs: one debate per question and arm."""

    kind = "comparison"
    faces = "comparisons.faces.FACES"
    model = Comparison
    rows = Run
    batch_link = "comparison"
    jobs = staticmethod(selectors.jobs)
    progress = staticmethod(selectors.progress)
    group = staticmethod(broadcast.group)
    live_html = staticmethod(broadcast.live_html_of)

    def create(self, batch: Comparison, job: schedule.Job, memo: dict[str, Any]) -> int | None:
        return self.link(job, _create_debate(batch, job.id))


COMPARISON = ComparisonKind()
