from batches import arena_views
from batches import views as batch_views
from tournaments import services, views
from tournaments.arena import ARENA
from tournaments.forms import NewTournamentForm

urlpatterns = [
    *batch_views.urlpatterns(
        services.TOURNAMENT,
        share="ts",
        form=NewTournamentForm,
        page=views.page,
        exports=views.EXPORTS,
        deleted="Tournament deleted, with its debates.",
    ),
    *arena_views.urlpatterns(
        ARENA,
        services.TOURNAMENT.model,
        at="arena/",
        template="tournaments/arena.html",
        names=("arena", "arena_match", "arena_vote"),
    ),
]
