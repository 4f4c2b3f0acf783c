from django.urls import path

from tournaments import arena_views, views

urlpatterns = [
    path("tournaments/", views.tournament_list, name="tournament_list"),
    path("tournaments/new/", views.new_tournament, name="tournament_new"),
    path("tournaments/estimate/", views.estimate, name="tournament_estimate"),
    path("tournaments/<int:pk>/", views.tournament_detail, name="tournament_detail"),
    path("tournaments/<int:pk>/export/<str:name>", views.tournament_export, name="tournament_export"),
    path("tournaments/<int:pk>/pause/", views.tournament_pause, name="tournament_pause"),
    path("tournaments/<int:pk>/resume/", views.tournament_resume, name="tournament_resume"),
    path("tournaments/<int:pk>/cancel/", views.tournament_cancel, name="tournament_cancel"),
    path("tournaments/<int:pk>/delete/", views.tournament_delete, name="tournament_delete"),
    path("tournaments/<int:pk>/arena/", arena_views.tournament_arena, name="tournament_arena"),
    path("tournaments/<int:pk>/visibility/", views.tournament_visibility, name="tournament_visibility"),
    path("tournaments/<int:pk>/share/reset/", views.tournament_share_reset, name="tournament_share_reset"),
    path("arena/", arena_views.arena_page, name="arena"),
    path("arena/<id:match_id>/", arena_views.arena_match, name="arena_match"),
    path("arena/<id:match_id>/vote/", arena_views.arena_vote, name="arena_vote"),
    path("ts/<str:token>/", views.tournament_share, name="tournament_share"),
    path("ts/<str:token>/export/<str:name>", views.tournament_share_export, name="tournament_share_export"),
]
