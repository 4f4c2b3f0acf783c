from batches import views as batch_views
from tournaments import services, views
from tournaments.forms import NewTournamentForm

urlpatterns = batch_views.urlpatterns(
    services.TOURNAMENT,
    share="ts",
    form=NewTournamentForm,
    page=views.page,
    exports=views.EXPORTS,
    deleted="Tournament deleted, with its debates.",
)
