from batches import arena_views
from batches import views as batch_views
from experiments import views, work
from experiments.arena import ARENA
from experiments.forms import NewExperimentForm

urlpatterns = [
    *batch_views.urlpatterns(
        work.EXPERIMENT,
        share="xs",
        form=NewExperimentForm,
        page=views.page,
        exports=views.EXPORTS,
        deleted="Experiment deleted, with its runs' debates.",
    ),
    *arena_views.urlpatterns(
        ARENA,
        work.EXPERIMENT.model,
        at="arena/evidence/",
        template="experiments/arena.html",
        names=("evidence_arena", "evidence_arena_debate", "evidence_arena_vote"),
    ),
]
