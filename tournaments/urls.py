from django.urls import path

from batches import views as batch_views
from tournaments import arena_views, services, views
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
    path("tournaments/<id:pk>/arena/", arena_views.tournament_arena, name="tournament_arena"),
    path("arena/", arena_views.arena_page, name="arena"),
    path("arena/<id:match_id>/", arena_views.arena_match, name="arena_match"),
    path("arena/<id:match_id>/vote/", arena_views.arena_vote, name="arena_vote"),
]
