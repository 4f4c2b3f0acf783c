from django.urls import path

from batches import views as batch_views
from experiments import arena_views, views, work
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
    path("experiments/<id:pk>/arena/", arena_views.experiment_arena, name="experiment_arena"),
    path("arena/evidence/", arena_views.arena_page, name="evidence_arena"),
    path("arena/evidence/<id:run_id>/", arena_views.arena_debate, name="evidence_arena_debate"),
    path("arena/evidence/<id:run_id>/vote/", arena_views.arena_vote, name="evidence_arena_vote"),
]
