"""Every app's websocket routes, as config/urls.py gathers their pages (wiring: it may import apps)."""

from batches.routing import websocket_urlpatterns as batch_routes
from debates.routing import websocket_urlpatterns as debate_routes
from experiments.routing import websocket_urlpatterns as experiment_routes
from rooms.routing import websocket_urlpatterns as room_routes
from tournaments.routing import websocket_urlpatterns as tournament_routes

# The batches' routes last: they serve any kind of batch that has no consumer of its own.
websocket_urlpatterns = [*debate_routes, *room_routes, *tournament_routes, *experiment_routes, *batch_routes]
