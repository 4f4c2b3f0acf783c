from batches import views as batch_views
from experiments import views, work
from experiments.forms import NewExperimentForm

urlpatterns = batch_views.urlpatterns(
    work.EXPERIMENT,
    share="xs",
    form=NewExperimentForm,
    page=views.page,
    exports=views.EXPORTS,
    deleted="Experiment deleted, with its runs' debates.",
)
