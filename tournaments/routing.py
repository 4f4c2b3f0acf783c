from django.urls import path

from tournaments.consumers import TournamentConsumer

websocket_urlpatterns = [
    path("ws/tournaments/<int:pk>/", TournamentConsumer.as_asgi()),
    path("ws/tournament-share/<str:token>/", TournamentConsumer.as_asgi()),
]
