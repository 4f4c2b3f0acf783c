"""Every app's websocket routes, as chaoslm/urls.py gathers their pages (wiring: it may import apps)."""

from debates.routing import websocket_urlpatterns as debate_routes
from experiments.routing import websocket_urlpatterns as experiment_routes
from rooms.routing import websocket_urlpatterns as room_routes
from tournaments.routing import websocket_urlpatterns as tournament_routes

websocket_urlpatterns = [*debate_routes, *room_routes, *tournament_routes, *experiment_routes]
