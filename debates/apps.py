from collections.abc import Iterable

from django.apps import AppConfig

from chaoslm.metrics_sources import GaugeReading


def debates_by_status() -> Iterable[GaugeReading]:
    """/metrics (chaoslm/metrics.py): how many debates are in each status, read when scraped."""
    from django.db.models import Count

    from debates.models import Debate

    counts = dict(Debate.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    rows = [([status], counts.get(status, 0)) for status in Debate.Status.values]
    yield GaugeReading("chaoslm_debates", "Debates by status", ["status"], rows)


class DebatesConfig(AppConfig):
    name = "debates"

    def ready(self) -> None:
        from chaoslm import costs, metrics_sources, runner
        from debates import hold, recovery, selectors, work

        # The tasks by their paths: only the Celery runner imports them (and Celery).
        runner.register("debate", work.advance, "debates.tasks.advance_debate")
        runner.register(hold.KIND, work.start_when_due, "debates.tasks.start_held_debate")
        runner.register_sweep(recovery.recover)
        costs.register_spend(selectors.spend)
        metrics_sources.register(debates_by_status)
